"""Ctrl-C stops every command with one line and status 130, never a traceback (issue 15)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.bombs import tiny_records_jsonl
from tests.support.process import PROJECT

pytestmark = pytest.mark.slow  # processes stopped by Ctrl-C mid-read

# `python -m dsh_inspect ARGS` with Python's own SIGINT handler, even when the test runs in a shell's
# background job: that ignores SIGINT, and Python then leaves it ignored.
AS_A_TERMINAL_RUNS_IT = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'dsh-inspect'; runpy.run_module('dsh_inspect', run_name='__main__', alter_sys=True)"
)


def _catches_sigint(pid: int) -> bool:
    """Python has set its SIGINT handler (before that, the signal's default action ends the process)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
    return bool(caught & (1 << (signal.SIGINT - 1)))


def _interrupted(args: list[str], ready: str, tmp_path: Path, after: float = 0.0) -> tuple[int, str]:
    """Run `python -m dsh_inspect ARGS`, send SIGINT `after` seconds once it handles SIGINT and its stderr
    shows `ready`, and return its status and stderr."""
    err = tmp_path / "stderr"
    with err.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-c", AS_A_TERMINAL_RUNS_IT, *args], cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=sink
        )
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            if ready in err.read_text() and _catches_sigint(process.pid):
                break
            time.sleep(0.05)
        time.sleep(after)
        assert process.poll() is None, err.read_text()
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
    return code, err.read_text()


@pytest.mark.parametrize("command", ["check", "render"])
def test_ctrl_c_stops_a_long_read_with_one_line(command: str, tmp_path: Path) -> None:
    # seconds of work to interrupt: a million lines, no two alike in a row (copies of one line are counted)
    log = tiny_records_jsonl(tmp_path / "tiny.jsonl", 500_000, record=b'{"x":1}\n{"x":2}')
    args = [command, str(log)] + (["-o", str(tmp_path / "page.html")] if command == "render" else [])
    # a person presses Ctrl-C while the log is read, a second or so in (reading it takes many)
    code, err = _interrupted(args, "", tmp_path, after=1.5)
    assert code == 130, err
    assert "Traceback" not in err and err.strip().endswith("dsh-inspect: interrupted")


def test_ctrl_c_stops_the_server_with_one_line(tmp_path: Path) -> None:
    code, err = _interrupted(["serve", "--port", "0", "--data-dir", str(tmp_path / "data")], "serving on", tmp_path)
    assert code == 130, err
    assert "Traceback" not in err and err.strip().endswith("dsh-inspect: interrupted")
