"""`dsh-inspect serve` as a real process on a loopback port, as a user runs it."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

PROJECT = Path(__file__).resolve().parents[2]


class Drained:
    """What a process writes to a pipe, read as it comes by a thread of its own: a server whose log nobody
    reads would otherwise block on a full pipe, and a test can search what it said."""

    def __init__(self, stream: IO[bytes], before: str = "") -> None:
        self._said = [before]
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            self._said.append(line.decode(errors="replace"))

    def text(self) -> str:
        return "".join(self._said)


@dataclass(frozen=True, slots=True)
class ServeProcess:
    url: str
    process: subprocess.Popen[bytes]
    announcement: str  # the line it printed once it listened
    out: Drained  # what it printed to stdout and stderr, afterwards
    err: Drained

    def said(self) -> str:
        """Everything it printed, on either stream, so far."""
        return self.out.text() + self.err.text()

    def memory_kib(self, field: str) -> int:
        """`VmRSS` (now) or `VmHWM` (peak) of the server, from /proc."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(f"no {field} for {self.process.pid}")

    def holds_open(self, path: Path) -> bool:
        """Whether the server has `path` open now (its descriptors in /proc): a read of it is under way."""
        held = []
        for fd in Path(f"/proc/{self.process.pid}/fd").iterdir():
            with contextlib.suppress(OSError):  # closed since it was listed
                held.append(fd.readlink())
        return path.resolve() in held

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)


def _announcement(process: subprocess.Popen[bytes]) -> tuple[str, str, str]:
    """The URL `serve --port 0` prints once it has bound its port, the line that says it, and all it said."""
    assert process.stderr is not None
    said = []
    for line in iter(process.stderr.readline, b""):
        said.append(line.decode(errors="replace"))
        found = re.search(rb"serving on (http://\S+:\d+)/", line)
        if found:
            return found.group(1).decode(), line.decode(), "".join(said)
    raise RuntimeError(f"dsh-inspect serve exited ({process.wait(10)}) without serving: {''.join(said)}")


@contextmanager
def serve_process(
    paths: list[str],
    data_dir: Path,
    *settings: tuple[str, int],
    options: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Iterator[ServeProcess]:
    """Start `python -m dsh_inspect serve` (with more `options` and environment); yield once it answers;
    stop it afterwards."""
    args = [sys.executable, "-m", "dsh_inspect", "serve", *paths, "--port", "0", "--data-dir", str(data_dir)]
    args += options
    for name, value in settings:
        args += ["--setting", name, str(value)]
    process = subprocess.Popen(
        args,
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {}), "DSH_HOME": str(data_dir / "no-dsh-home")},
    )
    try:
        url, announcement, before = _announcement(process)
        assert process.stdout is not None and process.stderr is not None
        out, err = Drained(process.stdout), Drained(process.stderr, before)
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"dsh-inspect serve exited: {err.text()}")
            try:
                httpx.get(f"{url}/api/sessions", timeout=5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError("dsh-inspect serve did not answer") from None
                time.sleep(0.1)
        yield ServeProcess(url, process, announcement, out, err)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()
