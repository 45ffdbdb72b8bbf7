"""What one client may upload (issue 33): `upload_mb_per_hour` per client (429 with `Retry-After`, the setting
named; another client unaffected), and `max_stored_gb` for the whole store (507, the setting named)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
from dsh_inspect.store import UploadStore

from tests.support.server import live_server
from tests.support.uploads import jsonl_bytes


def padded(session_id: str, size: int) -> bytes:
    """A log of about `size` bytes: one turn, its header carrying a long note."""
    return jsonl_bytes(session_id, 1, note="x" * size)


def test_a_client_past_its_hourly_bytes_is_refused_and_another_is_not(tmp_path: Path) -> None:
    with live_server([], data_dir=str(tmp_path / "data"), upload_mb_per_hour=1) as url:
        first = httpx.post(f"{url}/api/uploads", params={"name": "a.jsonl"}, content=padded("a", 600_000))
        assert first.status_code == 201
        second = httpx.post(f"{url}/api/uploads", params={"name": "b.jsonl"}, content=padded("b", 600_000))
        assert second.status_code == 429 and int(second.headers["retry-after"]) > 3000
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
    with live_server([], data_dir=str(data), max_stored_gb=1) as url:
        full = httpx.post(f"{url}/api/uploads", params={"name": "a.jsonl"}, content=jsonl_bytes("a"))
        assert full.status_code == 507 and full.json()["error"]["setting"] == "max_stored_gb"
        assert "max_stored_gb 2" in full.json()["detail"]
