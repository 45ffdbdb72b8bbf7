"""What one client may upload (issue 33): `upload_mb_per_hour` per client (429 with `Retry-After`, the setting
named; another client unaffected; no more than one largest upload at once), `max_stored_gb` for the whole
store and `max_project_gb` for each project (507, the setting named)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import httpx
from dsh_inspect.store import UploadStore

from tests.support.server import app_client, live_server
from tests.support.uploads import jsonl_bytes


def padded(session_id: str, size: int) -> bytes:
    """A log of about `size` bytes: one turn, its header carrying a long note."""
    return jsonl_bytes(session_id, 1, note="x" * size)


def test_a_client_past_its_hourly_bytes_is_refused_and_another_is_not(tmp_path: Path) -> None:
    # a real server: the second client is another loopback address, on a socket of its own
    with live_server([], data_dir=str(tmp_path / "data"), upload_mb_per_hour=1) as url:
        first = httpx.post(f"{url}/api/uploads", params={"name": "a.jsonl"}, content=padded("a", 600_000))
        assert first.status_code == 201
        second = httpx.post(f"{url}/api/uploads", params={"name": "b.jsonl"}, content=padded("b", 600_000))
        # its bytes come back as the hour goes: about the seconds the missing ones take at 1 MiB an hour
        short = len(padded("a", 600_000)) + len(padded("b", 600_000)) - (1 << 20)
        assert second.status_code == 429
        assert abs(int(second.headers["retry-after"]) - short * 3600 / (1 << 20)) < 30
        assert second.json()["error"] == {
            "code": "quota",
            "setting": "upload_mb_per_hour",
            "hint": second.json()["error"]["hint"],
        }
        other = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(transport=other) as elsewhere:
            made = elsewhere.post(f"{url}/api/uploads", params={"name": "b.jsonl"}, content=padded("b", 600_000))
            assert made.status_code == 201
        assert [u["name"] for u in httpx.get(f"{url}/api/uploads").json()["uploads"]] == ["a.jsonl", "b.jsonl"]


def test_a_full_store_refuses_an_upload_naming_the_setting(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = UploadStore(data)
    with store.catalog.connection() as conn:
        conn.execute(  # a hidden upload of 1 GiB: counted, listed nowhere
            "INSERT INTO uploads (digest, name, size, carrier, media, uploaded_at, hidden) "
            "VALUES (?, ?, ?, ?, ?, ?, 1)",
            (os.urandom(32).hex(), "big.jsonl", 1 << 30, "jsonl", 0, 1),
        )
    with app_client([], data_dir=str(data), max_stored_gb=1) as client:
        full = client.post("/api/uploads", params={"name": "a.jsonl"}, content=jsonl_bytes("a"))
        assert full.status_code == 507 and full.json()["error"]["setting"] == "max_stored_gb"
        assert "max_stored_gb 2" in full.json()["detail"]


def test_a_client_may_not_send_its_whole_hour_at_once(tmp_path: Path) -> None:
    """An hour's allowance larger than the largest upload is held one largest upload at a time: a burst of uploads
    that would each pass alone meets 429 once they add up to more than `max_upload_mb`."""
    with app_client([], data_dir=str(tmp_path / "data"), upload_mb_per_hour=100, max_upload_mb=1) as client:
        answers = [
            client.post("/api/uploads", params={"name": f"{n}.jsonl"}, content=padded(f"s{n}", 400_000))
            for n in range(4)
        ]
        assert [a.status_code for a in answers] == [201, 201, 429, 429]
        assert 1 <= int(answers[2].headers["retry-after"]) <= 20  # 100 MiB an hour: about 29 KiB a second
        assert "at most 1 MiB at once" in answers[2].json()["detail"]


def test_a_full_project_refuses_its_uploads_and_not_another_projects(tmp_path: Path) -> None:
    """A project whose uploads hold `max_project_gb` takes no more bytes (507, the setting named); another
    project's upload is stored, and the full project's own upload sent again (no new bytes) is still answered."""
    data = tmp_path / "data"
    first = jsonl_bytes("a-1", cwd="/work/alpha")
    with app_client([], data_dir=str(data)) as client:
        assert client.post("/api/uploads", params={"name": "a-1.jsonl"}, content=first).status_code == 201
    with sqlite3.connect(data / "catalog.sqlite3") as conn:  # as if that upload were 1 GiB
        assert conn.execute("UPDATE uploads SET size = ?", (1 << 30,)).rowcount == 1
    with app_client([], data_dir=str(data), max_project_gb=1) as client:
        more = client.post("/api/uploads", params={"name": "a-2.jsonl"}, content=jsonl_bytes("a-2", cwd="/work/alpha/"))
        assert more.status_code == 507
        assert more.json()["error"]["setting"] == "max_project_gb"
        assert "/work/alpha holds 1024 MiB of its 1024 MiB" in more.json()["detail"]
        assert "max_project_gb 2" in more.json()["detail"]
        other = client.post("/api/uploads", params={"name": "b.jsonl"}, content=jsonl_bytes("b-1", cwd="/work/beta"))
        assert other.status_code == 201
        again = client.post("/api/uploads", params={"name": "a-1.jsonl"}, content=first)
        assert again.status_code == 200
        assert sorted(u["name"] for u in client.get("/api/uploads").json()["uploads"]) == ["a-1.jsonl", "b.jsonl"]
