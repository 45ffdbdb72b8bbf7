"""`serve --workers N` hands each worker its settings (store URLs and all) down the pipe that starts it: no
worker's environment or command line holds them, which other processes could read."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.support.process import serve_process

pytestmark = pytest.mark.slow  # `serve --workers 2`: three processes

MARKER = "only-in-the-settings.example"  # a value that is in the settings and nowhere else


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (uvicorn's workers, multiprocessing's helpers), from /proc."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found: list[int] = []
    below = [pid]
    while below:
        parent = below.pop()
        children = [child for child, of in parents.items() if of == parent]
        found += children
        below += children
    return found


def test_workers_get_their_settings_without_the_environment(tmp_path: Path) -> None:
    log = tmp_path / "access.jsonl"
    options = ["--workers", "2", "--allow-host", MARKER, "--access-log", str(log)]
    with serve_process([], tmp_path / "data", options=options) as server:
        port = server.url.rsplit(":", 1)[1]
        for _ in range(6):  # each request may land on either worker: each was handed the settings
            asked = httpx.get(f"{server.url}/api/sessions", headers={"Host": f"{MARKER}:{port}"}, timeout=30)
            assert asked.status_code == 200, "a worker knows the host name allowed only by the settings"
        workers = descendants(server.process.pid)
        assert len(workers) >= 2, "two worker processes serve the port"
        for pid in [server.process.pid, *workers]:
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes()
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:  # a helper that has just exited
                continue
            assert MARKER.encode() not in environ, f"the settings are in the environment of {pid}"
            assert b"DSH_INSPECT_WORKER_CONFIG" not in environ and b"max_upload_mb" not in environ
            if pid != server.process.pid:  # the parent's own is the command the user typed
                assert MARKER.encode() not in command, f"the settings are on the command line of {pid}"
    # both workers append to the one access log: whole lines, one per request
    found = [json.loads(line) for line in log.read_text().splitlines()]
    assert len([line for line in found if line["status"] == 200 and line["route"] == "/api/sessions"]) >= 6
