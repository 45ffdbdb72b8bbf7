"""A large log is read for the list and the search index by a niced process of the server's own, not by its
request threads (issue 33: a client uploading 32 MiB logs made everyone's pages five times slower). The list
shows what a read here would show, search finds it, and the process goes with the server, however the server
ends. So is a word diff too costly for a request's own thread."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest
from dsh_inspect.history.session import load_session
from dsh_inspect.history.word_diff import word_diff
from dsh_inspect.log.sources import SessionSource
from dsh_inspect.sessions.priority import ELSEWHERE_BYTES
from dsh_inspect.settings import Settings
from dsh_inspect.web.routes.compare import QUICK_WORK
from dsh_inspect.web.routes.listing import summary_of

from tests.support.builders import large_session
from tests.support.process import serve_process
from tests.support.runs import tool_run, write_log
from tests.support.server import indexed

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc for the server's processes")


def _descendants(pid: int, depth: int = 1) -> set[int]:
    """Every living process at least `depth` levels below `pid` (2: the workers a fork server started)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = set(), [(pid, 0)]
    while todo:
        parent, level = todo.pop()
        for child in parents.get(parent, []):
            if level + 1 >= depth:
                found.add(child)
            todo.append((child, level + 1))
    return found


def _alive(pids: set[int]) -> set[int]:
    return {p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in _state(p)}


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def _listed(url: str, key: str) -> dict[str, object]:
    deadline = time.monotonic() + 120
    while True:
        found = httpx.get(f"{url}/api/sessions", params={"sort": "tokens"}, timeout=60).json()
        if not found["reading"]:
            return next(s["summary"] for s in found["sessions"] if s["key"] == key)
        assert time.monotonic() < deadline, "the large session was never read"
        time.sleep(0.2)


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _alive(pids)


@pytest.mark.parametrize("ending", ["SIGTERM", "SIGKILL"])
def test_a_large_log_is_read_by_a_niced_process_that_goes_with_the_server(tmp_path: Path, ending: str) -> None:
    path = large_session(tmp_path / "logs", "large")
    with serve_process([str(tmp_path / "logs")], tmp_path / "data") as server:
        listed = _listed(server.url, "large")
        here = summary_of(load_session(SessionSource(str(path), "jsonl")), Settings().prices())
        assert {k: listed[k] for k in ("turns", "steps", "events", "verdict", "tokens", "errors", "firstPrompt")} == {
            k: here[k] for k in ("turns", "steps", "events", "verdict", "tokens", "errors", "firstPrompt")
        }
        background, workers = _descendants(server.process.pid), _alive(_descendants(server.process.pid, 2))
        assert workers, "no process of its own read the large log"
        own = os.getpriority(os.PRIO_PROCESS, server.process.pid)
        assert all(os.getpriority(os.PRIO_PROCESS, p) > own for p in workers)
        indexed(server.url)
        hits = httpx.get(f"{server.url}/api/search", params={"q": "large result 3"}, timeout=60).json()
        assert hits["sessions"] == 1
        server.process.send_signal(getattr(signal, ending))
        server.process.wait(30)
    assert not _gone_within(background, 10), "the background processes outlived the server"


def _changed_pairs(found: object) -> list[dict[str, object]]:
    """Every changed item pair anywhere in a comparison's twin."""
    if isinstance(found, dict):
        here = [found] if found.get("status") == "changed" and "words" in found else []
        return here + [p for v in found.values() for p in _changed_pairs(v)]
    if isinstance(found, list):
        return [p for v in found for p in _changed_pairs(v)]
    return []


def test_a_costly_word_diff_is_made_by_a_niced_process_and_reads_as_one_made_here(tmp_path: Path) -> None:
    # `x x …` against `x y x y …`: each y an insertion, a few hundred thousand steps, more than a request takes
    a, b = " ".join(["x"] * 400), " ".join(["x", "y"] * 400)
    assert word_diff(a, b, QUICK_WORK).whole and not word_diff(a, b).whole
    write_log(tmp_path / "logs/a.jsonl", tool_run(a, seed=7).events)
    write_log(tmp_path / "logs/b.jsonl", tool_run(b, seed=8).events)
    with serve_process([str(tmp_path / "logs")], tmp_path / "data") as server:
        assert not _descendants(server.process.pid)
        found = httpx.get(f"{server.url}/api/compare", params={"a": "a", "b": "b"}, timeout=60)
        assert found.status_code == 200
        workers = _alive(_descendants(server.process.pid, 2))
        own = os.getpriority(os.PRIO_PROCESS, server.process.pid)
        assert workers and all(os.getpriority(os.PRIO_PROCESS, p) > own for p in workers)
    [pair] = [p for p in _changed_pairs(found.json()) if p["a"]["kind"] == "result"]  # type: ignore[index]
    assert pair["whole"] is False
    assert pair["words"] == [[w.op, w.text] for w in word_diff(a, b).words]


def test_a_large_upload_is_read_by_the_niced_process_and_answered_as_if_read_here(tmp_path: Path) -> None:
    (tmp_path / "none").mkdir()
    junk = b"not a dsh line\n" * (ELSEWHERE_BYTES // 15 + 1)
    path = large_session(tmp_path / "logs", "large")
    with serve_process([str(tmp_path / "none")], tmp_path / "data") as server:
        assert not _descendants(server.process.pid)
        refused = httpx.post(f"{server.url}/api/uploads", params={"name": "junk.jsonl"}, content=junk, timeout=120)
        # the reason, located, told across the processes; a refused upload starts nothing else
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "not-a-session"
        assert "junk.jsonl is not a dsh session log" in refused.json()["detail"]
        workers = _alive(_descendants(server.process.pid, 2))
        assert workers, "no process of its own read the large upload"
        own = os.getpriority(os.PRIO_PROCESS, server.process.pid)
        assert all(os.getpriority(os.PRIO_PROCESS, p) > own for p in workers)
        made = httpx.post(
            f"{server.url}/api/uploads", params={"name": "large.jsonl"}, content=path.read_bytes(), timeout=120
        )
        assert made.status_code == 201, made.text
        [session] = made.json()["upload"]["sessions"]
        here = load_session(SessionSource(str(path), "jsonl"))
        assert (session["id"], session["verdict"]) == ("large", here.verdict.category)
