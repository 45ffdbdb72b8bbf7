"""`dsh-inspect push --watch` (docs/decisions/0024-push.md): kept running beside dsh, it brings each change to the
server within a second or so: a log's finished lines (never a line dsh is still writing), a new session's log;
it outlives the server going away and coming back, and ends at once, with status 0, on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from dsh_inspect.log.dsh_root import encode_segment, project_key

from tests.support.process import PROJECT, Drained, serve_process
from tests.support.server import live_server
from tests.support.upload_model import log_bytes
from tests.web.test_push_cli import artifact, closed_port, push_args, push_env, raw, twin, versions

pytestmark = pytest.mark.slow  # `push --watch` processes, a server stopped and started again

SOON = 5.0  # seconds: the watch promises about one; the rest is room for a loaded machine
BACK = 30.0  # after the server is back: its next try (every 3 s) and the server's own start


def until(done: Callable[[], bool], seconds: float, what: str) -> float:
    """Poll `done` until it holds; how long that took. Fails after `seconds`."""
    started = time.monotonic()
    while not done():
        assert time.monotonic() - started < seconds, f"not within {seconds:g} s: {what}"
        time.sleep(0.05)
    return time.monotonic() - started


class Watcher:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        assert process.stdout is not None and process.stderr is not None
        self.out, self.err = Drained(process.stdout), Drained(process.stderr)

    def stop(self) -> tuple[int, float]:
        """SIGTERM, as a service manager stops it: its exit status and how long it took."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(30)
        return status, time.monotonic() - started


@contextmanager
def watching(root: Path, url: str, home: Path) -> Iterator[Watcher]:
    process = subprocess.Popen(
        push_args([root], url, "--watch"),
        cwd=PROJECT,
        env=push_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield Watcher(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


def holds(url: str, sid: str, path: Path, size: int | None = None) -> Callable[[], bool]:
    """Whether the server's copy of `sid` is `path`'s first `size` bytes (all of them by default)."""

    def check() -> bool:
        data = path.read_bytes()
        return raw(url, sid) == data[: len(data) if size is None else size]

    return check


def publish(root: Path, sid: str, data: bytes) -> Path:
    """A new session as dsh publishes it (docs/format.md §1.1): its first bytes written to a `*.tmp` beside it and
    fsynced, which on a busy disk takes a moment, then linked into place. (The folder is made a moment before, so
    that the watch follows it when the temp file is written, as it does when dsh is slower than the watch.)"""
    path: Path = root / project_key("/work/project") / encode_segment(sid) / "session.jsonl"
    path.parent.mkdir(parents=True)
    time.sleep(0.5)
    temp = path.with_name(path.name + ".0123456789ab.tmp")
    with open(temp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
        time.sleep(1)
    os.link(temp, path)
    temp.unlink()
    return path


def test_watch_pushes_each_finished_line_and_each_new_session_soon(tmp_path: Path) -> None:
    root, home = tmp_path / "dsh-home" / "sessions", tmp_path / "home"
    log = artifact(root, "watched", log_bytes("watched", 1, 0))
    with live_server([], data_dir=str(tmp_path / "data")) as url, watching(root, url, home) as watcher:
        until(holds(url, "watched", log), 30, "the first push of what the folder holds")

        two, three = log_bytes("watched", 2, 0), log_bytes("watched", 3, 0)
        torn = len(two) + three[len(two) :].index(b"\n") // 2  # turn 2, and half of turn 3's first line
        with open(log, "ab") as f:
            f.write(three[len(log_bytes("watched", 1, 0)) : torn])
        until(holds(url, "watched", log, len(two)), SOON, "the finished lines of an append")
        time.sleep(0.5)  # the watch has seen the half line by now: it is not sent
        assert raw(url, "watched") == two

        with open(log, "ab") as f:
            f.write(three[torn:])
        until(holds(url, "watched", log), SOON, "the line once dsh finished it")
        [version] = twin(url, "watched")["versions"]
        sizes = [u["size"] for u in version["uploads"]]
        assert all(three[size - 1 : size] == b"\n" for size in sizes), f"a state that ends mid-line: {sizes}"

        fresh = artifact(root, "appeared", log_bytes("appeared", 2, 0))
        until(holds(url, "appeared", fresh), SOON, "a new session's log")

        assert watcher.process.poll() is None, "still watching"
        status, took = watcher.stop()
    assert status == 0, watcher.err.text()
    assert took < 5, f"SIGTERM took {took:.1f} s"
    said = watcher.out.text()
    assert f"pushed {log}" in said and f"pushed {fresh}" in said


def test_watch_does_not_push_the_temp_file_dsh_publishes_a_log_from(tmp_path: Path) -> None:
    """`*.tmp` is not an artifact (docs/format.md §1.1: readers ignore it): the new session reaches the server
    as its `session.jsonl`, not under the temp file's name."""
    root, home = tmp_path / "dsh-home" / "sessions", tmp_path / "home"
    artifact(root, "there-first", log_bytes("there-first", 1, 0))
    with live_server([], data_dir=str(tmp_path / "data")) as url, watching(root, url, home) as watcher:
        until(lambda: raw(url, "there-first") is not None, 30, "the first push")
        fresh = publish(root, "published", log_bytes("published", 1, 0))
        until(holds(url, "published", fresh), SOON, "the published log")
        names = [u["name"] for v in twin(url, "published")["versions"] for u in v["uploads"]]
        status, _ = watcher.stop()
    assert status == 0
    assert names == ["session.jsonl"], f"the server names the session's upload {names}"
    assert ".tmp" not in watcher.out.text(), watcher.out.text()


def test_watch_outlives_the_server_and_pushes_what_changed_once_it_is_back(tmp_path: Path) -> None:
    root, home, data = tmp_path / "dsh-home" / "sessions", tmp_path / "home", tmp_path / "data"
    log = artifact(root, "outlived", log_bytes("outlived", 1, 0))
    with ExitStack() as stack:
        with serve_process([], data) as server:
            url = server.url
            watcher = stack.enter_context(watching(root, url, home))
            until(holds(url, "outlived", log), 30, "the first push")
        two = log_bytes("outlived", 2, 0)
        with open(log, "ab") as f:  # dsh goes on while the server is down
            f.write(two[len(log_bytes("outlived", 1, 0)) :])
        until(lambda: "trying again" in watcher.err.text(), BACK, "the watch saying the server is away")
        assert watcher.process.poll() is None, "the watch outlives the server"
        with serve_process([], data, options=["--port", url.rsplit(":", 1)[1]]) as back:
            assert back.url == url
            until(holds(url, "outlived", log), BACK, "the change made while the server was down")
            assert len(versions(url, "outlived")) == 1
            assert watcher.process.poll() is None
            status, took = watcher.stop()
    assert status == 0, watcher.err.text()
    assert took < 5, f"SIGTERM took {took:.1f} s"


def test_sigterm_ends_the_watch_promptly_while_the_server_is_away(tmp_path: Path) -> None:
    """A service manager stops the watch with SIGTERM and waits a bounded time (systemd: 90 s by default) before
    it kills it. With the server away, the watch must not first try every session it holds, one after another."""
    root, home = tmp_path / "dsh-home" / "sessions", tmp_path / "home"
    for n in range(4):
        artifact(root, f"away-{n}", log_bytes(f"away-{n}", 1, 0))
    with watching(root, f"http://127.0.0.1:{closed_port()}", home) as watcher:
        until(lambda: "trying again" in watcher.err.text(), BACK, "the watch saying the server is away")
        status, took = watcher.stop()
    assert status == 0, watcher.err.text()
    assert took < 5, f"SIGTERM took {took:.1f} s with 4 sessions waiting for the server"
