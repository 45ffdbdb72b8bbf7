"""Hostile and huge input (issue 15) through everything a person runs on it: `check --json`, `render`, an
upload with its pages and their JSON twins, and a served folder holding every such file.

Each file is one of the shapes issue 15 found breaking a reader (deep JSON, a huge integer, damaged and
hostile SQLite, records by the million from a few bytes, one line of 1,000 MiB, a ZIP of 10,000 subagents,
a decompression bomb). A figure counts the answers that were a traceback, a 5xx or no answer in time (none
is allowed); another is the slowest answer (within seconds); the last is the largest peak memory growth of
a `check` past an idle one, against `max_line_mb` (each line, event and session is capped, so no reader
should hold more than a few times that). One sample each: these are bounds, not ratios of medians.
Registered in run.py's GROUPS as `hostile`.
"""

from __future__ import annotations

import http.client
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import orjson
from dsh_inspect.log.plaintext import DEFAULT_LIMITS

from benchmarks.generate import Workloads
from benchmarks.run import PROJECT, Budget, Figure, Server, serve
from tests.support.bombs import (
    big_blob_sqlite,
    long_line_zip,
    long_line_zstd,
    subagents_zip,
    tiny_records_jsonl,
    tiny_records_zstd,
    zstd_bomb,
)
from tests.support.deep_logs import log_lines, nested, write
from tests.support.hostile_sqlite import btree_pages, long_store, overwrite_page, recursive_view_store, root_page

MIB = 1 << 20
TIMEOUT = 120.0  # an answer later than this is counted as a hang
LEAF_TABLE = 13  # a table b-tree leaf page


def zeroed_events_page(folder: Path) -> Path:
    path = long_store(folder / "damaged.sqlite", 400)
    leaves = [n for n, kind in btree_pages(path.read_bytes(), root_page(path, "events")) if kind == LEAF_TABLE]
    overwrite_page(path, leaves[len(leaves) // 2])
    return path


CASES: tuple[tuple[str, Callable[[Path], Path]], ...] = (
    ("deep JSON, 100,000 levels", lambda d: write(d / "deep.jsonl", log_lines(nested(100_000)))),
    ("an integer of 5,000 digits", lambda d: write(d / "huge-int.jsonl", log_lines("9" * 5000))),
    ("SQLite with a zeroed events page", zeroed_events_page),
    ("SQLite whose sessions table is a recursive view", lambda d: recursive_view_store(d / "view.sqlite")),
    ("2M `{}` lines from 1 KB of zstd", lambda d: tiny_records_zstd(d / "tiny-2m.jsonl.zst", 2_000_000)),
    ("1M `{}` lines, plain JSONL", lambda d: tiny_records_jsonl(d / "tiny-1m.jsonl", 1_000_000)),
    ("1M lines of `{` (not JSON), plain JSONL", lambda d: tiny_records_jsonl(d / "not-json.jsonl", 1_000_000, b"{")),
    ("one 1,000 MiB line from 32 KB of zstd", lambda d: long_line_zstd(d / "long-line.jsonl.zst", 1000 * MIB)),
    ("one 1,000 MiB line in a 1 MB ZIP", lambda d: long_line_zip(d / "long-line.zip", 1000 * MIB)),
    ("a 1.5 GB SQLite blob", lambda d: big_blob_sqlite(d / "big-blob.sqlite", 1500 * MIB)),
    ("an export ZIP of 10,000 subagents", lambda d: subagents_zip(d / "subagents.zip", 10_000)),
    ("2 GiB of zeros in zstd", lambda d: zstd_bomb(d / "bomb.jsonl.zst", 2048 * MIB)),
)


@dataclass(frozen=True, slots=True)
class Answer:
    what: str
    ok: bool  # no traceback, no 5xx, answered in time
    seconds: float
    peak: int = 0  # bytes of peak resident memory (VmHWM), for a CLI run
    said: str = ""  # why it is not ok, or the HTTP status of one that is


# A CLI command run as `python -m dsh_inspect` runs it, that says at exit how far its own memory grew: a child's
# rusage would not do, as Linux hands a forked child its parent's high-water mark (this benchmark's is large).
_CLI = """
import atexit, runpy, sys
from pathlib import Path

def peak(to):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM:"))
    Path(to).write_text(line.split()[1])

atexit.register(peak, sys.argv[1])
sys.argv = ["dsh-inspect", *sys.argv[2:]]
runpy.run_module("dsh_inspect", run_name="__main__")
"""


def run_cli(what: str, args: list[str], scratch: Path) -> Answer:
    """One CLI command in its own process: its time, its peak memory (VmHWM, as it says at exit), and whether it
    answered as a person should see it (an exit status, no traceback, within TIMEOUT)."""
    out, err, peak = scratch / "cli.out", scratch / "cli.err", scratch / "cli.peak"
    peak.unlink(missing_ok=True)
    start = time.perf_counter()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        try:
            done = subprocess.run(
                [sys.executable, "-c", _CLI, str(peak), *args],
                cwd=PROJECT,
                stdout=stdout,
                stderr=stderr,
                timeout=TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Answer(what, False, TIMEOUT, said="no answer in time")
    seconds = time.perf_counter() - start
    peak_bytes = int(peak.read_text()) * 1024 if peak.exists() else 0
    said = err.read_text(errors="replace")
    if "Traceback" in said or done.returncode not in (0, 1, 2):
        return Answer(what, False, seconds, peak_bytes, f"exit {done.returncode}: {said[-300:]}")
    if args[0] == "check":
        try:
            orjson.loads(out.read_bytes())
        except orjson.JSONDecodeError:
            return Answer(what, False, seconds, peak_bytes, "check --json printed no JSON")
    return Answer(what, True, seconds, peak_bytes)


def answer(
    conn: http.client.HTTPConnection, what: str, method: str, path: str, body: bytes | None = None
) -> tuple[Answer, bytes]:
    start = time.perf_counter()
    try:
        conn.request(method, path, body=body, headers={"Accept": "text/html"} if method == "GET" else {})
        response = conn.getresponse()
        data = response.read()
    except (OSError, http.client.HTTPException) as exc:
        return Answer(what, False, time.perf_counter() - start, said=f"{type(exc).__name__}: {exc}"), b""
    seconds = time.perf_counter() - start
    if response.status >= 500 or b"Traceback" in data:
        return Answer(what, False, seconds, said=f"HTTP {response.status}"), data
    return Answer(what, seconds < TIMEOUT, seconds, said=f"HTTP {response.status}"), data


def pages_of(conn: http.client.HTTPConnection, name: str, keys: list[str]) -> list[Answer]:
    out = []
    for key in keys[:3]:  # a ZIP of 10,000 subagents: the parent and two children are enough
        out.append(answer(conn, f"{name}: page", "GET", f"/sessions/{quote(key, safe='')}")[0])
        out.append(answer(conn, f"{name}: JSON twin", "GET", f"/api/sessions/{quote(key, safe='')}")[0])
    return out


def through_uploads(server: Server, name: str, path: Path) -> list[Answer]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
    try:
        sent, data = answer(conn, f"{name}: upload", "POST", f"/api/uploads?name={quote(path.name)}", path.read_bytes())
        out = [sent]
        try:
            upload = orjson.loads(data).get("upload") or {}
        except orjson.JSONDecodeError:
            return out
        out += pages_of(conn, name, [s["key"] for s in upload.get("sessions", [])])
        if upload.get("digest"):
            answer(conn, f"{name}: delete", "DELETE", f"/api/uploads/{upload['digest']}")
        return out
    finally:
        conn.close()


def through_a_served_folder(folder: Path, scratch: Path) -> list[Answer]:
    start = time.perf_counter()
    try:
        with serve([folder], scratch) as server:
            listening = Answer("serve FOLDER: listening", True, time.perf_counter() - start)
            conn = server.connect()
            listed, data = answer(conn, "serve FOLDER: /api/sessions", "GET", "/api/sessions")
            keys = [s["key"] for s in orjson.loads(data)["sessions"]] if listed.ok else []
            found = [listening, listed]
            for key in keys[:30]:  # the first page's first rows: the 10,000 subagents need not each be opened
                found += pages_of(conn, f"served {key[:40]}", [key])
            conn.close()
            return found
    except RuntimeError as exc:
        return [Answer("serve FOLDER: listening", False, time.perf_counter() - start, said=str(exc)[-300:])]


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    folder = scratch / "hostile-sweep"
    folder.mkdir()
    files = [(name, make(folder)) for name, make in CASES]
    idle_file = write(scratch / "idle" / "idle.jsonl", log_lines("1"))
    idle = run_cli("idle check", ["check", "--json", str(idle_file)], scratch).peak
    answers: list[Answer] = []
    growth: dict[str, int] = {}
    for name, path in files:
        checked = run_cli(f"{name}: check", ["check", "--json", str(path)], scratch)
        growth[name] = max(checked.peak - idle, 0)
        answers += [
            checked,
            run_cli(f"{name}: render", ["render", str(path), "-o", str(scratch / "out.html")], scratch),
        ]
    with serve([], scratch) as server:
        idle_server = server.memory_kib("VmRSS")
        for name, path in files:
            answers += through_uploads(server, name, path)
        server_growth = (server.memory_kib("VmHWM") - idle_server) * 1024
    answers += through_a_served_folder(folder, scratch)
    shutil.rmtree(folder, ignore_errors=True)
    bad = [a for a in answers if not a.ok]
    slowest = max(answers, key=lambda a: a.seconds)
    biggest = max(growth, key=lambda n: growth[n])
    limit = DEFAULT_LIMITS.max_line_bytes
    figures = [
        Figure(
            f"hostile files ({len(files)}) through check, render, upload, page, twin, serve: tracebacks, 5xx, hangs",
            f"{len(bad)} of {len(answers)} answers" + (f": {bad[0].what} ({bad[0].said})" if bad else ""),
            len(bad),
            Budget("<=", 0, ""),
            count=True,
        ),
        Figure(
            "hostile files: the slowest answer",
            f"{slowest.what}: {slowest.seconds:.1f} s",
            slowest.seconds,
            Budget("<", 10, " s"),
            count=True,
        ),
        Figure(
            "hostile files: largest `check` peak memory growth / max_line_mb",
            f"{biggest}: {growth[biggest] / MIB:.0f} MiB, limit {limit / MIB:.0f} MiB",
            growth[biggest] / limit,
            Budget("<", 3.0),
        ),
    ]
    rows = "\n".join(
        f"  {a.what}: {a.seconds:.2f} s"
        + (f", peak {a.peak / MIB:.0f} MiB" if a.peak else "")
        + (f", {a.said}" if a.ok and a.said else "" if a.ok else f"  FAILED {a.said}")
        for a in answers
    )
    note = f"hostile files, every answer (one upload server: peak growth {server_growth / MIB:.0f} MiB):\n{rows}"
    return figures, note
