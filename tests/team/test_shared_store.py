"""Several dsh-inspect processes on one upload store: the team store (PostgreSQL and SeaweedFS, real
servers) and the embedded one (one data folder). What one process accepts, every other lists, serves
byte for byte and finds; a process killed mid-upload loses nothing earlier and lists nothing half-done;
keys agree everywhere; a delete is seen by all."""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.builders import T0
from tests.support.process import ServeProcess, serve_process
from tests.support.uploads import export_zip_bytes, jsonl_bytes, sqlite_bytes
from tests.team.conftest import Lane, TeamStore


def upload(url: str, data: bytes, name: str) -> httpx.Response:
    return httpx.post(f"{url}/api/uploads", params={"name": name}, content=data, timeout=120)


def listed(url: str) -> dict[str, dict]:
    return {u["name"]: u for u in httpx.get(f"{url}/api/uploads", timeout=60).json()["uploads"]}


def keys(url: str) -> dict[str, str]:
    """Each listed session's unique key → the key it is listed under."""
    return {s["unique"]: s["key"] for s in httpx.get(f"{url}/api/sessions", timeout=60).json()["sessions"]}


def found(url: str, needle: str) -> set[str]:
    sessions = httpx.get(f"{url}/api/sessions", params={"q": needle}, timeout=60).json()["sessions"]
    return {s["id"] for s in sessions}


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (uvicorn's workers), from /proc."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def kill_mid_upload(server: ServeProcess, temp_folder: Path) -> None:
    """Send half of a large upload, wait until it is being written, then SIGKILL the server."""
    before = set(temp_folder.iterdir()) if temp_folder.is_dir() else set()
    parts = urlsplit(server.url)
    body = jsonl_bytes("never-finished") * 2000
    with socket.create_connection((parts.hostname, parts.port)) as sock:
        sock.sendall(
            f"POST /api/uploads?name=cut.jsonl HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body[: len(body) // 2]
        )
        deadline = time.monotonic() + 30
        while not set(temp_folder.iterdir()) - before:
            assert time.monotonic() < deadline, "the upload never reached the temp folder"
            time.sleep(0.05)
        server.kill()


def by_session(url: str) -> dict[str, dict]:
    """Each listed upload of one session, by that session's id (dsh names every log alike: names tell nothing)."""
    uploads = httpx.get(f"{url}/api/uploads", timeout=60).json()["uploads"]
    return {u["sessions"][0]["id"]: u for u in uploads if len(u["sessions"]) == 1}


def test_uploads_are_shared_by_every_process_and_survive_a_kill(lane: Lane) -> None:
    # 20 different sessions, each named as dsh names every log it writes
    datas = {f"shared-{n}": jsonl_bytes(f"shared-{n}", turns=1 + n % 3) for n in range(20)}
    with lane.start("a") as a:
        with lane.start("b") as b:
            servers = [a.url, b.url]
            with ThreadPoolExecutor(10) as pool:
                responses = list(
                    pool.map(lambda n: upload(servers[n % 2], datas[f"shared-{n}"], "session.jsonl"), range(20))
                )
            assert [r.status_code for r in responses] == [201] * 20
            # the same id made at another time, from each process: another session, whose key must not depend
            # on who asks
            assert upload(a.url, jsonl_bytes("twin", turns=1), "twin-a.jsonl").status_code == 201
            assert upload(b.url, jsonl_bytes("twin", turns=2, createdAt=T0 + 1), "twin-b.jsonl").status_code == 201
            # carriers read in place by seeking (a SQLite store, an export ZIP with a subagent and an image)
            assert upload(a.url, sqlite_bytes(lane.root, ["store-1", "store-2"]), "store.sqlite").status_code == 201
            assert upload(b.url, export_zip_bytes("exported", ["exported-child"]), "export.zip").status_code == 201
            kill_mid_upload(b, lane.data_dir("b") / "tmp")
        with lane.start("b-again") as b:
            names = {"session.jsonl", "twin-a.jsonl", "twin-b.jsonl", "store.sqlite", "export.zip"}
            for server in (a, b):
                assert set(listed(server.url)) == names, "every completed upload listed, the cut one nowhere"
                stored = by_session(server.url)
                assert set(datas) <= set(stored), "all 20 sessions named session.jsonl listed"
                listed_ids = {s["id"] for s in httpx.get(f"{server.url}/api/sessions", timeout=60).json()["sessions"]}
                assert set(datas) <= listed_ids, "each of them in the session list too"
                for sid, data in datas.items():
                    raw = httpx.get(server.url + stored[sid]["download"], timeout=60)
                    assert raw.content == data, f"{sid} byte-identical from {server.url}"
                assert found(server.url, "shared-7") == {"shared-7"}
                assert found(server.url, "twin") == {"twin"}
                for sid in ("store-2", "exported", "exported-child"):  # each read where it was not uploaded
                    assert httpx.get(f"{server.url}/sessions/{sid}", timeout=60).status_code == 200
                member = httpx.get(f"{server.url}/sessions/exported-child/raw", timeout=60)
                assert member.status_code == 200 and b'"exported-child"' in member.content
            newest = [u["name"] for u in httpx.get(f"{b.url}/api/uploads", params={"limit": 2}).json()["uploads"]]
            assert newest == ["export.zip", "store.sqlite"], "the newest uploads first, from any process"
            assert keys(a.url) == keys(b.url), "every process lists each session under the same key"
            twins = sorted(k for k in keys(a.url).values() if k.startswith("twin"))
            assert twins[0] == "twin" and twins[1].startswith("twin~"), "the first copy uploaded has the bare id"
            with lane.start("c", by_environment=True) as c:  # a process that saw none of it happen agrees too
                assert keys(c.url) == keys(a.url)

            gone = by_session(b.url)["shared-3"]
            key = gone["sessions"][0]["key"]
            assert httpx.get(f"{b.url}/sessions/{key}", timeout=60).status_code == 200  # read there once
            assert httpx.delete(f"{a.url}/api/uploads/{gone['digest']}", timeout=60).status_code == 200
            assert "shared-3" not in by_session(b.url), "a delete by one process is seen by the others"
            assert httpx.get(f"{b.url}/sessions/{key}", timeout=60).status_code == 404
            assert httpx.get(f"{b.url}{gone['download']}", timeout=60).status_code == 404


def test_two_workers_on_one_port_share_the_embedded_store(tmp_path: Path) -> None:
    datas = {f"worker-{n}": jsonl_bytes(f"worker-{n}") for n in range(20)}
    with serve_process([], tmp_path / "data", options=["--workers", "2"]) as server:
        with ThreadPoolExecutor(10) as pool:
            responses = list(pool.map(lambda sid: upload(server.url, datas[sid], f"{sid}.jsonl"), datas))
        assert [r.status_code for r in responses] == [201] * 20
        assert len(children(server.process.pid)) >= 2, "two worker processes serve the port"
        for _ in range(6):  # each request may land on either worker: every one answers alike
            stored = listed(server.url)
            assert set(stored) == {f"{sid}.jsonl" for sid in datas}
            assert found(server.url, "worker-1") == {"worker-1", *(f"worker-{n}" for n in range(10, 20))}
        for sid, data in datas.items():
            assert httpx.get(server.url + stored[f"{sid}.jsonl"]["download"], timeout=60).content == data


@pytest.mark.team
def test_an_object_whose_row_never_came_is_swept_and_listed_nowhere(team_store: TeamStore, tmp_path: Path) -> None:
    """A process killed between storing an upload's object and writing its row leaves only the object."""
    import boto3

    lane = Lane(tmp_path, team_store)
    with lane.start("a") as a:
        kept = upload(a.url, jsonl_bytes("kept"), "kept.jsonl").json()["upload"]
    bucket, prefix = team_store.blobs.removeprefix("s3://").split("/", 1)
    client = boto3.client("s3", endpoint_url=team_store.env["AWS_ENDPOINT_URL"], **_credentials(team_store))
    orphan = "f" * 64
    client.put_object(Bucket=bucket, Key=f"{prefix}/ff/{orphan}", Body=jsonl_bytes("orphan"))
    with lane.start("b") as b:
        assert set(listed(b.url)) == {"kept.jsonl"}
        assert httpx.get(f"{b.url}/sessions/orphan", timeout=60).status_code == 404
    objects = {o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]}
    assert objects == {f"{prefix}/{kept['digest'][:2]}/{kept['digest']}"}, "the orphan went, the upload stayed"


def _credentials(team: TeamStore) -> dict[str, str]:
    env = team.env
    return {
        "region_name": env["AWS_DEFAULT_REGION"],
        "aws_access_key_id": env["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
    }
