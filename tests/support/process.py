"""`dsh-inspect serve` as a real process on a loopback port, as a user runs it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

PROJECT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class ServeProcess:
    url: str
    process: subprocess.Popen[bytes]
    announcement: str  # the line it printed once it listened

    def memory_kib(self, field: str) -> int:
        """`VmRSS` (now) or `VmHWM` (peak) of the server, from /proc."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(f"no {field} for {self.process.pid}")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)


def _announcement(process: subprocess.Popen[bytes]) -> tuple[str, str]:
    """The URL `serve --port 0` prints once it has bound its port, and the line that says it."""
    assert process.stderr is not None
    said = []
    for line in iter(process.stderr.readline, b""):
        found = re.search(rb"serving on (http://\S+:\d+)/", line)
        if found:
            return found.group(1).decode(), line.decode()
        said.append(line.decode(errors="replace"))
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
        url, announcement = _announcement(process)
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                error = process.stderr.read().decode()  # type: ignore[union-attr]
                raise RuntimeError(f"dsh-inspect serve exited: {error}")
            try:
                httpx.get(f"{url}/api/sessions", timeout=5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError("dsh-inspect serve did not answer") from None
                time.sleep(0.1)
        yield ServeProcess(url, process, announcement)
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
