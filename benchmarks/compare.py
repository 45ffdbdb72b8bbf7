"""Comparing two 500-turn sessions (issue 17): W1's long session against a copy of it whose one tool
result (in turn 250) says something else.

`dsh-inspect diff` reads both logs and compares them; that should cost at most 3× reading both
(≤ 3×, medians side by side). The compare page is windowed like the transcript: its first screen
over the two sessions, in Chromium, holds fewer than 1,500 DOM nodes. Registered in run.py's
GROUPS as `compare`.
"""

from __future__ import annotations

from pathlib import Path

from dsh_inspect.history.compare import compare_logs
from dsh_inspect.history.session import load_session
from dsh_inspect.log.sources import SessionSource, discover
from dsh_inspect.log.writer import write_artifact

from benchmarks.generate import LONG_ID, Workloads
from benchmarks.run import Budget, Figure, dom_nodes, get, ms, serve, side_by_side, timed_get

CHANGED_ID = "w1-long-changed"
CHANGED_TURN = 250
VERSION = "1"  # bump when the copy changes shape


def changed_copy(w: Workloads, out: Path) -> Path:
    """A dsh root under `out` holding W1 long with one tool result changed (written once per W1 version)."""
    root = out / "compare"
    stamp = root / "stamp"
    source = w.long_session.stat()
    want = f"{VERSION} {source.st_size} {source.st_mtime_ns}"
    if stamp.is_file() and stamp.read_text() == want:
        return root
    log = load_session(discover([str(w.long_session)]).sources[0])
    assert log.header is not None
    events = [log.raw_event(seq) for seq in range(log.stored_count)]
    turn = 0
    for event in events:
        if event["type"] == "turn/start":
            turn = event["data"]["turn"]
        elif event["type"] == "tool/result" and turn == CHANGED_TURN:
            block = event["data"]["message"]["content"][0]["content"][0]
            block["text"] = "This file was changed in the copy.\n" + block["text"]
            break
    else:
        raise RuntimeError(f"W1 long has no tool result in turn {CHANGED_TURN}")
    header = {**log.header.to_json(), "id": CHANGED_ID}
    root.mkdir(parents=True, exist_ok=True)
    write_artifact(root, header, [events[i : i + 64] for i in range(0, len(events), 64)], "zstd")
    stamp.write_text(want)
    return root


def _source(root: Path, session_id: str) -> SessionSource:
    return next(s for s in discover([str(root)]).sources if s.path.split("/")[-2] == session_id)


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    copy_root = changed_copy(w, out)
    a = discover([str(w.long_session)]).sources[0]
    b = _source(copy_root, CHANGED_ID)

    def read_both() -> None:
        load_session(a)
        load_session(b)

    def diff() -> None:  # as `dsh-inspect diff A B` does
        compared = compare_logs(load_session(a), load_session(b))
        assert compared.first_divergence is not None and compared.first_divergence.a == f"{CHANGED_TURN}.1"

    compared, read = side_by_side(diff, read_both, runs)
    url = f"/compare?a={LONG_ID}&b={CHANGED_ID}"
    with serve([w.w1_root, copy_root], scratch) as server:
        conn = server.connect()
        cold = timed_get(conn, url)  # reads both logs and compares them
        size = len(get(conn, url))
        conn.close()
        nodes = dom_nodes(server, url, "compare page DOM at first paint, W1 long vs its changed copy")
    figures = [
        Figure(
            "compare two 500-turn sessions (W1 long vs a copy, one result changed) vs reading both",
            f"{ms(compared)} vs {ms(read)}",
            compared / read,
            Budget("<=", 3.0),
        ),
        nodes,
    ]
    note = f"compare page, first visit (reads and compares both; one sample, no budget): {ms(cold)}, {size:,} bytes"
    return figures, note
