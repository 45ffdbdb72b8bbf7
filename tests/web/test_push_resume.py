"""A push cut off midway (docs/decisions/0024-push.md): an append is kept whole or not at all, so a push killed
while it sends, or a server killed while it receives, is run again from what the server says it holds, and the
server ends with the log byte for byte, in one version, with nothing left of the cut request."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support.process import PROJECT, serve_process
from tests.support.server import live_server
from tests.web.test_push_cli import MIB, big_log, digest, push_args, push_env, pushed, raw, versions

pytestmark = pytest.mark.slow  # push and serve processes killed midway and run again

TURNS, PROMPT = 61, 1_000_000  # about 60 MB appended after a small first turn: the body takes a moment


def cli(log: Path, url: str, home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        push_args([log], url, "--json"),
        cwd=PROJECT,
        env=push_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def receiving(tmp: Path, process: subprocess.Popen[bytes], at_least: int) -> Path:
    """The server's temp file of the request body once it holds `at_least` bytes (the push still running)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the push ended before it could be cut off"
        for part in tmp.glob("upload-*.part"):
            try:
                if part.stat().st_size >= at_least:
                    return part
            except FileNotFoundError:
                continue
        time.sleep(0.005)
    raise AssertionError("the append never reached the server's temp folder")


def held(url: str, sid: str) -> list[str]:
    answer = httpx.get(f"{url}/api/pushes/{sid}", params={"created": 1_790_000_000_000}, timeout=60)
    assert answer.status_code == 200, answer.text
    return [h["digest"] for h in answer.json()["held"]]


def test_a_push_killed_midway_through_an_append_sends_it_whole_when_run_again(tmp_path: Path) -> None:
    home, data, log = tmp_path / "home", tmp_path / "data", tmp_path / "session.jsonl"
    first, full = big_log("killed-push", 1, 0), big_log("killed-push", TURNS, PROMPT)
    with live_server([], data_dir=str(data)) as url:
        log.write_bytes(first)
        assert pushed([log], url, home)["sent"] == 1
        with open(log, "ab") as f:
            f.write(full[len(first) :])
        process = cli(log, url, home)
        receiving(data / "tmp", process, 4 * MIB)
        process.kill()
        process.communicate(timeout=10)
        assert held(url, "killed-push") == [digest(first)], "the cut append was not kept"
        deadline = time.monotonic() + 10
        while list((data / "tmp").glob("upload-*.part")):
            assert time.monotonic() < deadline, "the cut body's temp file stayed"
            time.sleep(0.05)

        tally = pushed([log], url, home)
        assert (tally["sent"], tally["bytes"], tally["refused"]) == (1, len(full) - len(first), [])
        assert raw(url, "killed-push") == full
        assert versions(url, "killed-push") == [[digest(first), digest(full)]], "one version, no duplicate"
        again = pushed([log], url, home)
        assert (again["sent"], again["bytes"], again["skipped"]) == (0, 0, 1)


def test_a_server_killed_midway_through_an_append_takes_it_whole_once_back(tmp_path: Path) -> None:
    home, data, log = tmp_path / "home", tmp_path / "data", tmp_path / "session.jsonl"
    first, full = big_log("killed-server", 1, 0), big_log("killed-server", TURNS, PROMPT)
    with serve_process([], data) as server:
        url = server.url
        log.write_bytes(first)
        assert pushed([log], url, home)["sent"] == 1
        with open(log, "ab") as f:
            f.write(full[len(first) :])
        process = cli(log, url, home)
        receiving(data / "tmp", process, 4 * MIB)
        # the push is held still while the server dies and starts again, so that its next try finds it back
        process.send_signal(signal.SIGSTOP)
        dead = server.process.pid
        server.kill()
    left = [p.name for p in (data / "tmp").iterdir() if p.name.startswith(f"upload-{dead}-")]
    assert left, "the killed server left the append's temp file"
    try:
        with serve_process([], data, options=["--port", url.rsplit(":", 1)[1]]) as again:
            assert again.url == url
            assert not [p for p in (data / "tmp").iterdir() if p.name.startswith(f"upload-{dead}-")], (
                "the restart swept the dead server's temp file"
            )
            assert held(url, "killed-server") == [digest(first)], "the cut append was not kept"
            process.send_signal(signal.SIGCONT)
            out, err = process.communicate(timeout=60)
            assert process.returncode == 0, err.decode()
            tally = orjson.loads(out)
            assert (tally["sent"], tally["refused"]) == (1, [])
            assert raw(url, "killed-server") == full
            assert versions(url, "killed-server") == [[digest(first), digest(full)]], "one version, no duplicate"
            rerun = pushed([log], url, home)
            assert (rerun["sent"], rerun["bytes"], rerun["skipped"]) == (0, 0, 1)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)
            process.kill()
            process.communicate(timeout=10)
