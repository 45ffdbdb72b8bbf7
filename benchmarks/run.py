"""Measure every budget of docs/product.md Budgets and say which are met.

`python -m benchmarks.run` (or `make bench`) generates the workloads when
they are missing (benchmarks/generate.py), measures each figure against its
baseline side by side in this one run (the machine is shared and noisy, so
every budget is a ratio of two medians or a count), prints a table and exits
1 when a budget is missed. It is not part of the test suite.

Servers are real `python -m dsh_inspect serve` processes on loopback ports, timed
from this process over HTTP/1.1 with keep-alive; "cold" is the first request
to a freshly started server, "warm" a later request to the same one.
"""

from __future__ import annotations

import argparse
import http.client
import importlib
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import orjson
import zstandard
from dsh_inspect.history.session import load_session
from dsh_inspect.log.plaintext import DEFAULT_LIMITS
from dsh_inspect.log.sources import discover
from dsh_inspect.sessions.caches import CACHE_MB
from dsh_inspect.testing.browser import CHROMIUM_ARGS, chromium_path

from benchmarks.generate import LONG_ID, ONE_TURN_ID, OUT, W2_ID, W3_ID, Workloads, generate, generate_w3
from tests.support.bombs import long_line_jsonl, long_line_zstd, subagents_zip, tiny_records_jsonl, tiny_records_zstd

PROJECT = Path(__file__).resolve().parents[1]
MIB = 1 << 20


# -- figures and budgets ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Budget:
    op: Literal["<=", ">=", "<"]
    limit: float
    unit: str = "×"

    def holds(self, value: float) -> bool:
        if self.op == "<=":
            return value <= self.limit
        if self.op == ">=":
            return value >= self.limit
        return value < self.limit

    def __str__(self) -> str:
        sign = {"<=": "≤", ">=": "≥", "<": "<"}[self.op]
        return f"{sign} {self.limit:g}{self.unit}"


@dataclass(frozen=True, slots=True)
class Figure:
    name: str
    measured: str  # the two medians (or the count) behind the ratio
    value: float
    budget: Budget
    count: bool = False  # a count of things, not a ratio

    @property
    def passed(self) -> bool:
        return self.budget.holds(self.value)

    def ratio_text(self) -> str:
        return f"{self.value:.0f}" if self.count else f"{self.value:.2f}×"

    def result(self) -> str:
        return "pass" if self.passed else "FAIL"


def elapsed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def side_by_side(a: Callable[[], object], b: Callable[[], object], runs: int) -> tuple[float, float]:
    """Medians of `a` and `b`, run alternately so both see the same machine."""
    ta, tb = [], []
    for _ in range(runs):
        ta.append(elapsed(a))
        tb.append(elapsed(b))
    return statistics.median(ta), statistics.median(tb)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


# -- baselines -----------------------------------------------------------------------------


def bare_orjson_file(path: Path) -> None:
    """Bare `orjson.loads` over every line of a plain JSONL file, reading it as the product does."""
    with open(path, "rb") as f:
        for line in f:
            orjson.loads(line)


def decompressed_lines(path: Path) -> list[bytes]:
    """Every line of a zstd artifact, decompressed ahead of time (the baseline does no zstd work)."""
    with open(path, "rb") as f:
        text = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True).read()
    return text.splitlines()


def bare_orjson_lines(lines: list[bytes]) -> None:
    for line in lines:
        orjson.loads(line)


def raw_header(path: str) -> object:
    """The header the cheapest way: the first 64 KiB, its first zstd frame, its first line, parsed."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    text = zstandard.ZstdDecompressor().decompressobj().decompress(head)
    return orjson.loads(text[: text.index(b"\n")])


# -- servers -------------------------------------------------------------------------------


def announced_port(process: subprocess.Popen[bytes], log: Path, timeout: float = 120) -> int:
    """The port `serve --port 0` bound, from the URL it prints once it listens."""
    deadline = time.monotonic() + timeout
    while True:
        found = re.search(r"serving on http://[^ ]*:(\d+)/", log.read_text(errors="replace"))
        if found:
            return int(found.group(1))
        if process.poll() is not None:
            raise RuntimeError(f"dsh-inspect serve exited: {log.read_text(errors='replace')[-2000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError("dsh-inspect serve did not start")
        time.sleep(0.05)


@dataclass(frozen=True, slots=True)
class Server:
    port: int
    process: subprocess.Popen[bytes]

    def memory_kib(self, field: str) -> int:
        """`VmRSS` (now) or `VmHWM` (peak) of the server process, from /proc."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise RuntimeError(f"no {field} for process {self.process.pid}")

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)


def get(conn: http.client.HTTPConnection, path: str) -> bytes:
    return send(conn, "GET", path)


def send(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None) -> bytes:
    conn.request(method, path, body=body)
    response = conn.getresponse()
    answer = response.read()
    if response.status not in (200, 201):
        raise RuntimeError(f"{method} {path}: {response.status} {answer[:300]!r}")
    return answer


def timed_get(conn: http.client.HTTPConnection, path: str) -> float:
    start = time.perf_counter()
    get(conn, path)
    return time.perf_counter() - start


def wait_until_answering(server: Server, log: Path, timeout: float = 120) -> None:
    """Poll a static file (the registry and the sessions stay untouched) until the server answers."""
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"dsh-inspect serve exited: {log.read_text(errors='replace')[-2000:]}")
        conn = server.connect()
        try:
            get(conn, "/static/favicon.svg")
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("dsh-inspect serve did not answer") from None
            time.sleep(0.05)
        finally:
            conn.close()


def stop(process: subprocess.Popen[bytes]) -> None:
    """End the server this run started (by its handle, nothing else)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(15)


@contextmanager
def serve(paths: list[Path], scratch: Path) -> Iterator[Server]:
    """`python -m dsh_inspect serve PATHS` on a free port, with its own data folder; yields once it answers."""
    data = Path(tempfile.mkdtemp(dir=scratch))
    args = [
        sys.executable,
        "-m",
        "dsh_inspect",
        "serve",
        *map(str, paths),
        "--port",
        "0",
        "--data-dir",
        str(data),
    ]
    try:
        with open(data / "server.log", "wb") as log:
            process = subprocess.Popen(
                args,
                cwd=PROJECT,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "DSH_HOME": str(data / "no-dsh-home")},
            )
            try:
                server = Server(announced_port(process, data / "server.log"), process)
                wait_until_answering(server, data / "server.log")
                yield server
            finally:
                stop(process)
    finally:
        shutil.rmtree(data, ignore_errors=True)


# -- the budgets ---------------------------------------------------------------------------


def validating_read(w: Workloads, runs: int) -> list[Figure]:
    """`load_session` (verdict, surface fold, index) against bare `orjson.loads` of the same lines."""
    figures = []
    w2 = discover([str(w.w2_session)]).sources[0]
    bare, load = side_by_side(lambda: bare_orjson_file(w.w2_session), lambda: load_session(w2), runs)
    figures.append(
        Figure(
            "validating read, W2 (100 MB plain)", f"{ms(load)} vs orjson {ms(bare)}", bare / load, Budget(">=", 0.25)
        )
    )
    long = discover([str(w.long_session)]).sources[0]
    lines = decompressed_lines(w.long_session)
    bare, load = side_by_side(lambda: bare_orjson_lines(lines), lambda: load_session(long), runs)
    figures.append(
        Figure(
            "validating read, W1 long (zstd, small events)",
            f"{ms(load)} vs orjson {ms(bare)}",
            bare / load,
            Budget(">=", 0.3),  # 0.38-0.46x measured (decision 0041): raised from 0.25x, with margin for load
        )
    )
    return figures


def listing_and_windowing(w: Workloads, scratch: Path, runs: int) -> tuple[list[Figure], str]:
    """Over W1's root: the first listing page against raw header reads; a first screen against a one-turn one."""
    figures = []
    artifacts = [str(p) for p in (w.long_session, w.one_turn_session, *w.small_sessions)]
    with serve([w.w1_root], scratch) as server:
        conn = server.connect()
        get(conn, "/api/sessions?page=1")  # warm: the server has listed once
        listed, raw = side_by_side(
            lambda: get(conn, "/api/sessions?page=1"), lambda: [raw_header(p) for p in artifacts], runs
        )
        figures.append(
            Figure(
                f"listing, W1 root ({len(artifacts)} sessions), first page",
                f"{ms(listed)} vs raw headers {ms(raw)}",
                listed / raw,
                Budget("<=", 2.0),
            )
        )
        long_url, one_url = f"/sessions/{LONG_ID}", f"/sessions/{ONE_TURN_ID}"
        cold_long = timed_get(conn, long_url)
        cold_one = timed_get(conn, one_url)
        long, one = side_by_side(lambda: get(conn, long_url), lambda: get(conn, one_url), runs)
        figures.append(
            Figure(
                "first screen, W1 long vs one-turn (warm)", f"{ms(long)} vs {ms(one)}", long / one, Budget("<=", 1.5)
            )
        )
        note = (
            f"first visit to each session on that server (reads the log, builds the rows; one sample, no budget): "
            f"W1 long {ms(cold_long)}, one-turn {ms(cold_one)}"
        )
        figures.append(dom_nodes(server, long_url, "DOM at first paint, W1 long"))
        conn.close()
    return figures, note


def dom_nodes(server: Server, path: str, name: str) -> Figure:
    """Every node (elements, text, comments) of the page in Chromium once it has painted."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"http://127.0.0.1:{server.port}{path}", wait_until="load")
            count = page.evaluate("""() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
                const walker = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
                let n = 1;
                while (walker.nextNode()) n++;
                done(n);
            })))""")
        finally:
            browser.close()
    return Figure(name, f"{count} nodes", float(count), Budget("<", 1500, ""), count=True)


def w2_cold(w: Workloads, scratch: Path, runs: int) -> list[Figure]:
    """W2's cold first screen against bare orjson over W2; resident memory growth, once W2 is read
    whole (the page's facts), against W2's size."""
    size = w.w2_session.stat().st_size
    path = f"/sessions/{W2_ID}"
    bares, colds, growths = [], [], []
    dom: Figure | None = None
    for i in range(runs):
        bares.append(elapsed(lambda: bare_orjson_file(w.w2_session)))
        with serve([w.w2_session], scratch) as server:
            idle = server.memory_kib("VmRSS")
            conn = server.connect()
            colds.append(timed_get(conn, path))
            # the first screen reads a prefix; the page then asks for the facts, which reads W2 whole:
            # the memory figure covers both
            timed_get(conn, f"{path}/facts")
            growths.append((server.memory_kib("VmHWM") - idle) * 1024)
            conn.close()
            if i == runs - 1:
                dom = dom_nodes(server, path, "DOM at first paint, W2")
    bare, cold, growth = statistics.median(bares), statistics.median(colds), statistics.median(growths)
    figures = [
        Figure("W2 cold first screen", f"{ms(cold)} vs orjson {ms(bare)}", cold / bare, Budget("<=", 3.0)),
        Figure(
            "W2 peak memory growth / size",
            f"{growth / MIB:.0f} MiB for {size / MIB:.0f} MiB",
            growth / size,
            Budget("<", 3.0),
        ),
    ]
    assert dom is not None
    return [*figures, dom]


# -- memory and the read limits (issue 15) ---------------------------------------------------------


def whole_visit(server: Server, key: str) -> list[tuple[str, int]]:
    """What a reader's first visit costs: the first screen, the facts (which read the log whole), the
    steps page and its last step's model view, an in-session search and one across the sessions (which
    builds their index), each with its JSON twin. Each request with the server's peak memory after it (KiB)."""
    conn = server.connect()
    peaks = []

    def visit(path: str) -> bytes:
        answer = get(conn, path)
        peaks.append((path.replace(f"/sessions/{key}", "/s"), server.memory_kib("VmHWM")))
        return answer

    visit(f"/sessions/{key}")
    visit(f"/sessions/{key}/facts")
    visit(f"/sessions/{key}/steps")
    steps = orjson.loads(visit(f"/api/sessions/{key}/steps"))["steps"]
    if steps:
        visit(f"/sessions/{key}/steps/{steps[-1]['key']}")
        visit(f"/api/sessions/{key}/steps/{steps[-1]['key']}")
    visit(f"/api/sessions/{key}/search?q=module")
    visit("/search?q=module")
    visit("/api/search?q=module")
    conn.close()
    return peaks


def settled(server: Server) -> None:
    """Once nothing is pending for the server's search index: memory is then measured at rest, not while its
    worker reads the sessions a visit's search asked it to index (docs/decisions/0023-indexing-in-the-background.md)."""
    conn = server.connect()
    while orjson.loads(get(conn, "/api/search?q=module"))["pending"]:
        time.sleep(0.5)
    conn.close()


def small_events_memory(w3: Path, scratch: Path, runs: int) -> tuple[list[Figure], str]:
    """W3 (100 MB of small events) visited whole by a fresh server: its peak resident memory growth against
    W3's size; then four logs of W3's size visited in turn, against one and against `cache_mb`. The note
    says where the peak grew, request by request (the median run's)."""
    size = w3.stat().st_size
    visits = []
    for _ in range(runs):
        with serve([w3], scratch) as server:
            idle = server.memory_kib("VmRSS")
            visits.append([(path, (peak - idle) * 1024) for path, peak in whole_visit(server, W3_ID)])
    visits.sort(key=lambda v: v[-1][1])
    median = visits[len(visits) // 2]
    growth = median[-1][1]
    steps = ", ".join(f"{path} {peak / MIB:.0f}" for path, peak in median)
    note = f"W3 whole visit, peak growth (MiB) after each request: {steps}"
    # four sessions as big as W3, each its own file (hard links: no copies on disk)
    copies = []
    for i in range(4):
        folder = scratch / "in-turn" / f"s{i}"
        folder.mkdir(parents=True)
        os.link(w3, folder / f"w3-{i}.jsonl")
        copies.append(folder)
    with serve(copies, scratch) as server:
        idle = server.memory_kib("VmRSS")
        conn = server.connect()
        keys = [s["key"] for s in orjson.loads(get(conn, "/api/sessions"))["sessions"]]
        conn.close()
        after = []
        for key in keys:
            whole_visit(server, key)
            settled(server)  # the search index's worker, which the visit's searches woke, is done
            time.sleep(1)  # the cache's trimmer hands what it let go back to the OS meanwhile
            after.append((server.memory_kib("VmRSS") - idle) * 1024)
    cache = CACHE_MB * MIB
    figures = [
        Figure(
            "W3 peak memory growth / size (small events), after a whole visit",
            f"{growth / MIB:.0f} MiB for {size / MIB:.0f} MiB",
            growth / size,
            Budget("<", 3.0),
        ),
        # kept whole, four such sessions would hold four times what one does; `cache_mb` (256) holds about two
        Figure(
            "memory growth, 4 logs of W3's size visited in turn / 1 (cache_mb; one sample)",
            f"{after[-1] / MIB:.0f} MiB vs {after[0] / MIB:.0f} MiB",
            after[-1] / after[0],
            Budget("<", 3.0),
        ),
        # the bound is an estimate of the objects kept; resident memory adds the allocator's share
        Figure(
            "memory growth after the 4th of those visits / cache_mb (one sample)",
            f"{after[-1] / MIB:.0f} MiB vs cache_mb {CACHE_MB} MiB",
            after[-1] / cache,
            Budget("<=", 1.5),
        ),
    ]
    return figures, note


def open_delete_cycles(scratch: Path, cycles: int = 20) -> Figure:
    """A 10 MB small-event log uploaded, read whole, searched and deleted again and again: the server's
    memory growth after the last cycle against after the first (a deleted upload keeps nothing)."""
    log = generate_w3(scratch / "cycles", 10 * MIB).read_bytes()
    with serve([], scratch) as server:
        idle = server.memory_kib("VmRSS")
        grown = []
        conn = server.connect()
        for _ in range(cycles):
            upload = orjson.loads(send(conn, "POST", "/api/uploads?name=cycle.jsonl", log))["upload"]
            key = upload["sessions"][0]["key"]
            get(conn, f"/sessions/{key}")
            get(conn, f"/sessions/{key}/facts")
            get(conn, f"/api/sessions/{key}/search?q=module")
            send(conn, "DELETE", f"/api/uploads/{upload['digest']}")
            grown.append((server.memory_kib("VmRSS") - idle) * 1024)
        conn.close()
    return Figure(
        f"memory growth after {cycles} upload/open/delete cycles / after 1",
        f"{grown[-1] / MIB:.0f} MiB vs {grown[0] / MIB:.0f} MiB",
        grown[-1] / grown[0],
        Budget("<=", 1.5),
    )


# One read in a fresh process: how long it takes and how far its resident memory grows past the process's
# once the reader is imported. `read` reads every session found; `upload` reads a file as an upload is read;
# `check` reads each session as `dsh-inspect check` does (its report: the transcript's rows too).
_READ_ONCE = """
import json, sys, time
from pathlib import Path
from dsh_inspect.cli import session_report
from dsh_inspect.history.session import load_session
from dsh_inspect.log.sources import discover
from dsh_inspect.store.contents import read_contents
from dsh_inspect.store.limits import Limits

def status(field):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(field + ":"))
    return int(line.split()[1]) * 1024

idle = status("VmRSS")
start = time.perf_counter()
if sys.argv[1] == "upload":
    found = read_contents(sys.argv[2], "bench", Limits(max_sessions_per_upload=100_000))
    verdicts = [s.verdict for s in found.sessions]
elif sys.argv[1] == "check":
    verdicts = [session_report(load_session(s))["verdict"]["category"] for s in discover([sys.argv[2]]).sources]
else:
    verdicts = [load_session(s).verdict.category for s in discover([sys.argv[2]]).sources]
took = time.perf_counter() - start
print(json.dumps({"seconds": took, "growth": status("VmHWM") - idle, "verdicts": sorted(set(verdicts))}))
"""


@dataclass(frozen=True, slots=True)
class ReadOnce:
    seconds: float
    growth: int  # bytes of peak resident memory past the idle reader's


def read_once(how: Literal["read", "upload", "check"], path: Path) -> ReadOnce:
    done = subprocess.run(
        [sys.executable, "-c", _READ_ONCE, how, str(path)], cwd=PROJECT, capture_output=True, check=True, timeout=900
    )
    found = orjson.loads(done.stdout.splitlines()[-1])
    return ReadOnce(found["seconds"], found["growth"])


def median_reads(how: Literal["read", "upload", "check"], path: Path, runs: int) -> ReadOnce:
    reads = [read_once(how, path) for _ in range(runs)]
    return ReadOnce(statistics.median(r.seconds for r in reads), statistics.median(r.growth for r in reads))


# a line as long as a reader takes, nearly: its parse holds it, orjson's buffer and the parsed text (3x), and the
# chunk of the file it ended in
WITHIN_LINE = 60 * MIB


def hostile_reads(scratch: Path, runs: int) -> list[Figure]:
    """Hostile files within the upload limits, each read in a fresh process: time linear in what they
    decode, memory bounded by what is kept and by `max_line_mb`."""
    folder = scratch / "hostile"
    folder.mkdir()
    one = tiny_records_zstd(folder / "tiny-1m.jsonl.zstd", 1_000_000)
    two = tiny_records_zstd(folder / "tiny-2m.jsonl.zstd", 2_000_000)
    decoded = 2_000_000 * 3
    small, large = median_reads("read", one, runs), median_reads("read", two, runs)
    line = long_line_zstd(folder / "long-line.jsonl.zstd", 1000 * MIB)
    long = median_reads("read", line, runs)
    within = long_line_jsonl(folder / "line-within.jsonl", WITHIN_LINE)
    held = median_reads("check", within, runs)
    zips = [subagents_zip(folder / f"subagents-{n}.zip", n) for n in (1000, 4000)]
    few, many = (median_reads("upload", z, runs) for z in zips)
    limit = DEFAULT_LIMITS.max_line_bytes
    # the same lines plain, checked as `dsh-inspect check` checks them: the transcript's rows too (a run row)
    plain = [tiny_records_jsonl(folder / f"tiny-{n}m.jsonl", n * 1_000_000) for n in (1, 2)]
    check_one, check_two = (median_reads("check", p, runs) for p in plain)
    return [
        Figure(
            "`check` of 1M plain `{}` lines: peak memory growth / decoded size",
            f"{check_one.growth / MIB:.1f} MiB for {plain[0].stat().st_size / MIB:.1f} MiB, in {ms(check_one.seconds)}",
            check_one.growth / plain[0].stat().st_size,
            Budget("<", 3.0),
        ),
        Figure(
            "`check` of 2M vs 1M plain `{}` lines (linear: 2×)",
            f"{ms(check_two.seconds)} vs {ms(check_one.seconds)}",
            check_two.seconds / check_one.seconds,
            Budget("<=", 3.0),
        ),
        Figure(
            "2M `{}` lines from 1 KB of zstd: peak memory growth / decoded size",
            f"{large.growth / MIB:.1f} MiB for {decoded / MIB:.1f} MiB, {two.stat().st_size} B of file",
            large.growth / decoded,
            Budget("<", 3.0),
        ),
        Figure(
            "reading 2M vs 1M `{}` lines (linear: 2×)",
            f"{ms(large.seconds)} vs {ms(small.seconds)}",
            large.seconds / small.seconds,
            Budget("<=", 3.0),
        ),
        Figure(
            "one 1,000 MiB line (32 KB of zstd): peak memory growth / max_line_mb",
            f"{long.growth / MIB:.0f} MiB, limit {limit / MIB:.0f} MiB, in {ms(long.seconds)}",
            long.growth / limit,
            Budget("<", 3.0),
        ),
        Figure(
            f"`check` of one {WITHIN_LINE // MIB} MiB line (plain, within max_line_mb): peak memory growth / its bytes",
            f"{held.growth / MIB:.0f} MiB, in {ms(held.seconds)}",
            held.growth / WITHIN_LINE,
            Budget("<=", 3.25),
        ),
        Figure(
            "an export ZIP of 4,000 vs 1,000 subagent logs, read as an upload (linear: 4×)",
            f"{ms(many.seconds)} vs {ms(few.seconds)}",
            many.seconds / few.seconds,
            Budget("<", 8.0),
        ),
    ]


# -- report --------------------------------------------------------------------------------


def table(figures: list[Figure]) -> str:
    rows = [("figure", "measured", "ratio", "budget", "result")]
    rows += [(f.name, f.measured, f.ratio_text(), str(f.budget), f.result()) for f in figures]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(c.ljust(widths[i]) for i, c in enumerate(r)) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown cpu",
    )
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


def read_group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    return validating_read(w, runs), ""


def w1_group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    return listing_and_windowing(w, scratch, 3 * runs)


def w2_group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    return w2_cold(w, scratch, runs), ""


def memory_group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    figures, note = small_events_memory(generate_w3(out), scratch, runs)
    figures.append(open_delete_cycles(scratch))
    return figures + hostile_reads(scratch, runs), note


Group = Callable[[Workloads, Path, int, Path], tuple[list[Figure], str]]


def later(module: str) -> Group:
    """The `group` of a module of its own, imported when it runs: it imports this module's helpers."""

    def measure(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
        group: Group = importlib.import_module(module).group
        return group(w, scratch, runs, out)

    return measure


# Each group: its `--only` name, what it prints while measuring, and how (figures, and a note printed under
# the table). A group kept in its own module adds one line here.
GROUPS: dict[str, tuple[str, Group]] = {
    "read": ("validating read", read_group),
    "w1": ("listing and windowing (W1)", w1_group),
    "w2": ("W2 cold first screen and memory", w2_group),
    "memory": ("memory: W3 small events, logs in turn, upload/delete cycles, hostile reads", memory_group),
    "model-view": ("model views (W1 long)", later("benchmarks.model_view")),
    "team": ("upload store at 10,000 sessions vs 1,000", later("benchmarks.team")),
    "compare": ("comparing two sessions (W1 long)", later("benchmarks.compare")),
    "search": ("search across sessions (W1)", later("benchmarks.search")),
    "session-search": ("in-session search as typed (W1 long)", later("benchmarks.session_search")),
    "navigation": ("session page navigation (W1 long, Chromium)", later("benchmarks.navigation")),
    "row-bytes": ("bytes per turn read end to end vs dsh's web app (W1 long)", later("benchmarks.row_bytes")),
    "timeline": ("a session's timeline vs its page (W1 long, Chromium)", later("benchmarks.timeline")),
    "export": ("the one-file export: writing and opening it (W1 long, Chromium)", later("benchmarks.export")),
    "hostile": ("hostile and huge input through every reader", later("benchmarks.hostile")),
    "load": ("load test: two processes, browsing users with and without an abuser (Locust)", later("benchmarks.load")),
    "push": ("dsh-inspect push: appends vs fresh logs, an idle watch", later("benchmarks.push")),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.run", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs",
        type=int,
        default=7,
        help="runs per median of the heavy figures, cold server starts for W2 included (at least 5; "
        "default 7); the cheap server requests take three times as many",
    )
    parser.add_argument("--out", type=Path, default=OUT, help="where the workloads are (generated if missing)")
    parser.add_argument(
        "--only",
        choices=tuple(GROUPS),
        action="append",
        help="measure only these groups (repeatable); the default measures all",
    )
    args = parser.parse_args(argv)
    runs = max(5, args.runs)
    started = time.monotonic()
    print(f"generating workloads in {args.out} (cached when up to date) ...", flush=True)
    w = generate(args.out)
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir=args.out))
    groups = set(args.only or GROUPS)
    figures: list[Figure] = []
    note = ""
    try:
        for name, (label, measure) in GROUPS.items():
            if name in groups:
                print(f"{label} ...", flush=True)
                more, said = measure(w, scratch, runs, args.out)
                figures += more
                note = "\n".join(filter(None, (note, said)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print()
    print(table(figures))
    print()
    print(f"machine: {machine()}")
    given = " ".join(sys.argv[1:] if argv is None else argv)
    print(f"command: python -m benchmarks.run {given}".rstrip() + ("" if given else "  (what `make bench` runs)"))
    print(
        f"medians of {runs} runs ({runs} cold server starts for W2; {3 * runs} requests for listing and "
        f"windowing), each figure side by side with its baseline; took {time.monotonic() - started:.0f} s"
    )
    if note:
        print(note)
    missed = [f.name for f in figures if not f.passed]
    if missed:
        print(f"missed: {', '.join(missed)}")
        return 1
    print("every budget met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
