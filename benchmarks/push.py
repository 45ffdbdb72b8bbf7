"""`dsh-inspect push` (issue 34, docs/decisions/0024-push.md): an append costs the new bytes, an idle watch
costs nothing.

- **Appends vs fresh logs.** A 100 MiB dsh log is pushed once to a real `serve` process (set up, untimed); then,
  run after run, 100 KiB of new turns are appended to it and pushed, side by side with a new 100 KiB log (a
  session id of its own each time) pushed fresh to the same server. Each push is timed as a user runs it
  (`python -m dsh_inspect push FILE --to URL --json`, a process each) and in this process (`Pusher` and
  `push_once`, the work without Python's start-up, which would hide it): the in-process ratio is the budget
  (≤ 2×), the end-to-end one is in the note. Both share one state file in a cache folder of the benchmark's
  own, so the appends find the log's start pushed (the steady state of `push --watch`), and the server is
  the process that stored the base, which continues its SHA-256 without reading it. The note adds one
  append to a freshly restarted server, which hashes the base once (no budget).
- **An idle watch.** A dsh root of 1,000 sessions, each a small plain log, is pushed once; then
  `push --watch ROOT --to URL` runs as a process; once its first pass is over (its CPU time stops growing),
  its CPU time (`/proc/PID/stat` utime + stime, every thread) over 30 s of nothing changing, as a share of
  one core, is the figure (≤ 2 %). A line appended afterwards must then be pushed (the watch was watching).

Registered in run.py's GROUPS as `push`.
"""

from __future__ import annotations

import io
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
from dsh_inspect.commands.push import Pusher, PushState, push_once, state_path
from dsh_inspect.log.writer import artifact_path

from benchmarks.generate import Text, Workloads
from benchmarks.run import Budget, Figure, ms
from tests.support.builders import PROVIDER, T0, Event, LogBuilder, header
from tests.support.process import PROJECT, serve_process

KIB, MIB = 1 << 10, 1 << 20
BASE_BYTES = 100 * MIB  # the log already on the server
NEW_BYTES = 100 * KIB  # a fresh log, and what is appended to the base each run
OUTPUT = 3000  # characters of a turn's tool output: a turn is about 4.5 KB
IDLE_SESSIONS = 1000
IDLE_SECONDS = 30.0
CWD = "/home/bench/push"


# -- logs ------------------------------------------------------------------------------------


class Turns(LogBuilder):
    """A dsh log's turns, made as they are asked for and not kept: each asks to read a file, reads it (a few
    KB of output) and says what it holds."""

    def __init__(self, seed: int, corpus: int = 1 << 17) -> None:
        super().__init__(seed)
        self.text = Text(seed, corpus)  # the text outputs are cut from
        self.seq = 0
        self.turns = 0

    def add(self, type_: str, data: Any, **envelope: Any) -> Event:
        event = {"type": type_, "seq": self.seq, "time": T0 + self.seq, "data": data, **envelope}
        self.seq += 1
        self.events.append(event)
        return event

    def more(self, size: int) -> bytes:
        """Whole turns, at least `size` bytes of them, as lines of the log."""
        parts, made = [], 0
        while made < size:
            self.turns += 1
            self._turn(self.turns)
            lines = b"".join(orjson.dumps(e) + b"\n" for e in self.events)
            self.events.clear()
            parts.append(lines)
            made += len(lines)
        return b"".join(parts)

    def _turn(self, n: int) -> None:
        self.add("turn/start", {"turn": n})
        self.add("step/start", {"turn": n, "step": 1})
        self.user(self.text.sentence())
        self.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial" if n == 1 else "change"})
        call_id = f"call_{n}"
        self.assistant(
            n, 1, [{"type": "tool-call", "id": call_id, "name": "read", "arguments": '{"file_path": "a.txt"}'}]
        )
        self.tool_round(n, 1, call_id, self.text.output(OUTPUT))
        self.add("step/end", {"turn": n, "step": 1})
        self.add("step/start", {"turn": n, "step": 2})
        self.assistant(n, 2, [{"type": "text", "text": self.text.sentence(30)}])
        self.add("step/end", {"turn": n, "step": 2})
        self.add("turn/end", {"turn": n, "reason": {"kind": "completed"}})


def new_log(root: Path, sid: str, size: int, seed: int, cwd: str = CWD) -> tuple[Path, Turns]:
    """A plain log of at least `size` bytes where dsh keeps it under `root`, written a MiB at a time; its
    turns, to append more of."""
    head = header(sid, cwd=cwd)
    path = artifact_path(root, head, "none")
    path.parent.mkdir(parents=True, exist_ok=True)
    turns = Turns(seed, min(1 << 17, max(1 << 13, size)))
    with path.open("wb") as f:
        f.write(orjson.dumps(head) + b"\n")
        written = f.tell()
        while written < size:
            written += f.write(turns.more(min(MIB, size - written)))
    return path, turns


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)


# -- pushing ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Home:
    """A user's home and cache folder of the benchmark's own: its push state file is the benchmark's."""

    folder: Path

    @property
    def cache(self) -> Path:
        return self.folder / "cache"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "DSH_INSPECT_TOKEN"}
        return env | {"HOME": str(self.folder), "XDG_CACHE_HOME": str(self.cache)}

    def state_file(self, url: str) -> Path:
        """Where `push --to url` keeps its state with this home: `state_path` read with its environment."""
        before = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = str(self.cache)
        try:
            return state_path(url)
        finally:
            if before is None:
                del os.environ["XDG_CACHE_HOME"]
            else:
                os.environ["XDG_CACHE_HOME"] = before


def push_command(url: str, *paths: Path, watch: bool = False) -> list[str]:
    what = ["--watch"] if watch else ["--json"]
    return [sys.executable, "-m", "dsh_inspect", "push", *map(str, paths), "--to", url, *what]


def cli_push(home: Home, url: str, path: Path, timeout: float = 600) -> tuple[float, dict[str, Any]]:
    """`python -m dsh_inspect push PATH --to URL --json` as a user runs it: its wall time, and its tally."""
    start = time.perf_counter()
    done = subprocess.run(
        push_command(url, path), cwd=PROJECT, env=home.env(), capture_output=True, timeout=timeout, check=False
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"push {path} exited {done.returncode}: {done.stdout[-500:]!r} {done.stderr[-2000:]!r}")
    tally: dict[str, Any] = orjson.loads(done.stdout.splitlines()[-1])
    return took, tally


def inproc_push(home: Home, url: str, path: Path, *, timeout: float | None = None) -> tuple[float, dict[str, Any]]:
    """`Pusher.push_once` in this process, with the command's state file: the time of `push_once` alone."""
    pusher = Pusher(url, None, PushState(home.state_file(url)))
    if timeout is not None:  # the base's first push: the server reads 100 MiB as a log before it answers
        pusher.client.close()
        pusher.client = httpx.Client(base_url=pusher.url, timeout=httpx.Timeout(timeout, connect=10.0))
    out, err = io.StringIO(), io.StringIO()
    try:
        start = time.perf_counter()
        code = push_once([str(path)], pusher, as_json=True, out=out, err=err)
        took = time.perf_counter() - start
    finally:
        pusher.close()
    if code != 0:
        raise RuntimeError(f"push {path}: {out.getvalue()[-500:]} {err.getvalue()[-2000:]}")
    return took, pusher.tally.as_json()


def expect_sent(tally: dict[str, Any], size: int, what: str) -> None:
    """A push that sent exactly `size` bytes of one session: what it should have done, or the figure is void."""
    if (tally["sent"], tally["bytes"], tally["refused"]) != (1, size, []):
        raise RuntimeError(f"{what}: expected one session sent as {size} bytes, the push did {tally}")


@dataclass
class Pushes:
    """The four pushes of a run, timed: fresh and append, as the command and in this process."""

    cli_fresh: list[float]
    cli_append: list[float]
    fresh: list[float]
    appended: list[float]


def appends_vs_fresh(
    scratch: Path, runs: int, base_bytes: int = BASE_BYTES, new_bytes: int = NEW_BYTES
) -> tuple[list[Figure], str]:
    home = Home(scratch / "push-home")
    logs = scratch / "push-logs"
    data = scratch / "push-data"
    data.mkdir()
    made = time.perf_counter()
    base, turns = new_log(logs, f"push-base-{uuid.uuid4().hex[:12]}", base_bytes, 1)
    made = time.perf_counter() - made
    fresh_logs = iter(range(1_000_000))

    def fresh_log() -> Path:
        n = next(fresh_logs)
        return new_log(logs, f"push-fresh-{n}-{uuid.uuid4().hex[:12]}", new_bytes, 100 + n)[0]

    def grown() -> int:
        """The base with `new_bytes` more of its turns: how many bytes were appended."""
        more = turns.more(new_bytes)
        append(base, more)
        return len(more)

    times = Pushes([], [], [], [])
    with serve_process([], data) as server:
        url = server.url
        first = time.perf_counter()
        _, tally = inproc_push(home, url, base, timeout=900)
        first = time.perf_counter() - first
        expect_sent(tally, base.stat().st_size, "the base's first push")
        # as the command first (both fresh, then both appends), then in this process, three times as often
        for i in range(4 * runs):
            if i < runs:
                path = fresh_log()
                took, tally = cli_push(home, url, path)
                expect_sent(tally, path.stat().st_size, "a fresh push")
                times.cli_fresh.append(took)
                size = grown()
                took, tally = cli_push(home, url, base)
                expect_sent(tally, size, "an append")
                times.cli_append.append(took)
            else:
                path = fresh_log()
                took, tally = inproc_push(home, url, path)
                expect_sent(tally, path.stat().st_size, "a fresh push")
                times.fresh.append(took)
                size = grown()
                took, tally = inproc_push(home, url, base)
                expect_sent(tally, size, "an append")
                times.appended.append(took)
    # the same data folder, served by a new process: the base's hash is not kept, it is read once
    with serve_process([], data) as server:
        httpx.get(f"{server.url}/api/sessions", timeout=300)  # its first list, not the append, reads the catalog
        size = grown()
        restarted, tally = inproc_push(home, server.url, base)
        expect_sent(tally, size, "an append to a restarted server")
        again_size = grown()
        again, tally = inproc_push(home, server.url, base)
        expect_sent(tally, again_size, "the next append to a restarted server")
    fresh, appended = statistics.median(times.fresh), statistics.median(times.appended)
    cli_fresh, cli_append = statistics.median(times.cli_fresh), statistics.median(times.cli_append)
    size = base.stat().st_size
    figure = Figure(
        f"push: {new_bytes // KIB} KiB appended to a {base_bytes // MIB} MiB log vs a {new_bytes // KIB} KiB log "
        "fresh (in process, same server)",
        f"{ms(appended)} vs {ms(fresh)}",
        appended / fresh,
        Budget("<=", 2.0),
    )
    note = (
        f"push, end to end (`python -m dsh_inspect push FILE --json`, medians of {runs}): append {ms(cli_append)} "
        f"vs fresh {ms(cli_fresh)}, {cli_append / cli_fresh:.2f}× (no budget: Python's start-up is most of it); "
        f"in process, medians of {3 * runs}; a freshly restarted server's first append (it hashes the base, "
        f"{size / MIB:.0f} MiB by then, once; one sample, no budget) {ms(restarted)}, its next {ms(again)}; "
        f"setup: the base written in {ms(made)}, its first push {ms(first)}"
    )
    return [figure], note


# -- an idle watch ---------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of the process, from /proc/PID/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def watching(home: Home, url: str, root: Path, said: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m dsh_inspect push --watch ROOT --to URL`; ended by SIGTERM, as a service manager ends it."""
    with said.open("wb") as log:
        process = subprocess.Popen(
            push_command(url, root, watch=True), cwd=PROJECT, env=home.env(), stdout=log, stderr=log
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)


def inotify_watches(pid: int) -> int:
    """How many inotify watches the process holds (each a folder it is told of), from /proc/PID/fdinfo."""
    count = 0
    for fd in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            count += fd.read_text().count("inotify wd:")
        except OSError:  # closed meanwhile
            continue
    return count


@dataclass(frozen=True, slots=True)
class Settled:
    first_pass: float | None  # seconds from its start until it watched (None: no inotify watch, it polls)
    watches: int


def settle(process: subprocess.Popen[bytes], said: Path, window: float = 3.0, timeout: float = 600) -> Settled:
    """Wait until the watch's first pass is over: it holds its inotify watches (none, for 30 s: it polls), their
    number and its CPU time steady over a `window` (under 5 % of it)."""
    start = time.monotonic()
    seen: list[tuple[float, float, int]] = []  # (when, CPU seconds, inotify watches)
    watching: float | None = None
    while True:
        time.sleep(0.5)
        if process.poll() is not None:
            raise RuntimeError(f"push --watch exited {process.returncode}: {said.read_text(errors='replace')[-2000:]}")
        now, watches = time.monotonic(), inotify_watches(process.pid)
        if watches and watching is None:
            watching = now - start
        seen.append((now, cpu_seconds(process.pid), watches))
        then = next((s for s in reversed(seen) if s[0] <= now - window), None)
        steady = then is not None and then[2] == watches and seen[-1][1] - then[1] < 0.05 * (now - then[0])
        if steady and (watches or now - start > 30):
            return Settled(watching, watches)
        if now - start > timeout:
            raise RuntimeError(f"push --watch did not settle in {timeout:.0f} s")


def idle_watch(scratch: Path, sessions: int = IDLE_SESSIONS, seconds: float = IDLE_SECONDS) -> tuple[Figure, str]:
    home = Home(scratch / "watch-home")
    root = scratch / "watch-root"
    data = scratch / "watch-data"
    data.mkdir()
    logs = [new_log(root, f"watch-{i:04d}", 1, 1000 + i, f"/home/bench/project-{i % 20:02d}") for i in range(sessions)]
    said = scratch / "watch.log"
    with serve_process([], data) as server:
        took, tally = cli_push(home, server.url, root)
        if (tally["sent"], tally["refused"]) != (sessions, []):
            raise RuntimeError(f"the root's first push: expected {sessions} sessions sent, it did {tally}")
        with watching(home, server.url, root, said) as process:
            settled = settle(process, said)
            wall, cpu = time.monotonic(), cpu_seconds(process.pid)
            time.sleep(seconds)
            wall, cpu = time.monotonic() - wall, cpu_seconds(process.pid) - cpu
            idle_said = said.read_text(errors="replace")
            # and it was watching: a turn appended to one session is pushed within seconds
            path, turns = logs[sessions // 2]
            append(path, turns.more(1))
            deadline = time.monotonic() + 30
            while "pushed" not in said.read_text(errors="replace") and time.monotonic() < deadline:
                time.sleep(0.2)
            noticed = "pushed" in said.read_text(errors="replace")
    if idle_said.strip():
        raise RuntimeError(f"push --watch said something while nothing changed: {idle_said[-2000:]}")
    share = 100 * cpu / wall
    figure = Share(
        f"push --watch over {sessions:,} idle sessions: CPU, share of one core",
        f"{cpu:.2f} s CPU in {wall:.0f} s",
        share,
        Budget("<=", 2, " %"),
    )
    how = (
        f"its first pass took {settled.first_pass:.1f} s, then it held {settled.watches:,} inotify watches"
        if settled.first_pass is not None
        else "it held no inotify watch (it polls)"
    )
    note = (
        f"push --watch: the root's first push ({sessions:,} sessions, one command) took {ms(took)}; {how}; "
        "a turn appended after the idle period was " + ("pushed" if noticed else "NOT pushed within 30 s")
    )
    if not noticed:
        raise RuntimeError(note)
    return figure, note


@dataclass(frozen=True, slots=True)
class Share(Figure):
    """A figure that is a percentage."""

    def ratio_text(self) -> str:
        return f"{self.value:.2f} %"


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    del w, out  # the logs are made here, not from the shared workloads
    figures, note = appends_vs_fresh(scratch, runs)
    watch, said = idle_watch(scratch)
    return [*figures, watch], f"{note}\n{said}"
