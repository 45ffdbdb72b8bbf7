"""`dsh-inspect serve` as a process: live discovery of a dsh root, and a kill in the middle of an upload."""

from __future__ import annotations

import socket
import sqlite3
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from dsh_inspect.log.dsh_root import encode_segment, project_key

from tests.support.process import serve_process
from tests.support.uploads import jsonl_bytes

pytestmark = pytest.mark.slow  # `serve` processes, one killed mid-upload


def write_artifact(root: Path, session_id: str) -> Path:
    """A session where dsh puts it: `<root>/<projectKey(cwd)>/<encodeSegment(id)>/session.jsonl`."""
    path = root / project_key("/work/project") / encode_segment(session_id) / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl_bytes(session_id))
    return path


def ids(url: str) -> set[str]:
    return {s["id"] for s in httpx.get(f"{url}/api/sessions").json()["sessions"]}


def test_serve_prints_its_url_and_shows_sessions_that_appear_later(tmp_path: Path) -> None:
    root = tmp_path / "dsh-home" / "sessions"
    write_artifact(root, "first")
    with serve_process([str(root)], tmp_path / "data") as server:
        line = server.announcement  # `serve --port 0` names the port it took
        assert f"serving on {server.url}/" in line and str(tmp_path / "data") in line
        assert not server.url.endswith(":0")
        assert ids(server.url) == {"first"}
        write_artifact(root, "second")
        assert ids(server.url) == {"first", "second"}
        index = httpx.get(server.url + "/").text
        assert 'data-session-key="second"' in index and 'hx-trigger="every 4000ms' in index
        assert httpx.get(f"{server.url}/sessions/second").status_code == 200


def test_a_server_killed_mid_upload_loses_nothing_stored_before(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    earlier = {f"earlier-{n}": jsonl_bytes(f"earlier-{n}") for n in range(3)}
    with serve_process([], data_dir) as server:
        digests = {}
        for sid, data in earlier.items():
            response = httpx.post(f"{server.url}/api/uploads", params={"name": f"{sid}.jsonl"}, content=data)
            assert response.status_code == 201
            digests[sid] = response.json()["upload"]["digest"]
        # half of a large upload, then the process dies
        parts = urlsplit(server.url)
        sock = socket.create_connection((parts.hostname, parts.port))
        body = jsonl_bytes("never-finished") * 2000
        sock.sendall(
            b"POST /api/uploads?name=cut.jsonl HTTP/1.1\r\nHost: "
            + parts.netloc.encode()
            + b"\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body[: len(body) // 2]
        )
        deadline = time.monotonic() + 30
        while not any((data_dir / "tmp").iterdir()):
            assert time.monotonic() < deadline, "the upload never reached the temp folder"
            time.sleep(0.05)
        server.kill()
        sock.close()
    assert any((data_dir / "tmp").iterdir()), "the killed upload left its temp file"
    with sqlite3.connect(data_dir / "catalog.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with serve_process([], data_dir) as server:
        uploads = httpx.get(f"{server.url}/api/uploads").json()["uploads"]
        assert sorted(u["name"] for u in uploads) == sorted(f"{sid}.jsonl" for sid in earlier)
        for sid, data in earlier.items():
            assert httpx.get(f"{server.url}/uploads/{digests[sid]}/raw").content == data
            assert httpx.get(f"{server.url}/sessions/{sid}").status_code == 200
        assert "never-finished" not in ids(server.url)
        assert not any((data_dir / "tmp").iterdir()), "the restart swept the dead upload's temp file"
