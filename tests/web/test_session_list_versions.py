"""The session list keeps its orders and filter values per registry version: any change shows on the next request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.support.builders import T0, header
from tests.support.rows import attrs
from tests.support.server import app_client
from tests.support.uploads import events, jsonl_bytes


def first_page(client: httpx.Client, **params: Any) -> dict[str, Any]:
    listed: dict[str, Any] = client.get("/api/sessions", params={"page": 1, **params}).json()
    return listed


def ids(listed: dict[str, Any]) -> list[str]:
    return [s["id"] for s in listed["sessions"]]


def upload(client: httpx.Client, data: bytes, name: str) -> str:
    response = client.post("/api/uploads", params={"name": name}, content=data, timeout=60)
    assert response.status_code in (200, 201), response.text
    digest: str = response.json()["upload"]["digest"]
    return digest


def test_an_upload_or_a_delete_shows_on_the_next_list_request(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    (served / "on-disk.jsonl").write_bytes(jsonl_bytes("on-disk"))
    with app_client([str(served)], data_dir=str(tmp_path / "data")) as client:
        for _ in range(2):  # the second answer comes from what the first kept
            assert ids(first_page(client)) == ["on-disk"]
            assert ids(first_page(client, sort="turns")) == ["on-disk"]
        digest = upload(
            client, jsonl_bytes("uploaded", turns=3, createdAt=T0 + 60_000, cwd="/work/uploaded"), "up.jsonl"
        )

        after = first_page(client)
        assert ids(after) == ["uploaded", "on-disk"], "the new upload is the newest session"
        assert after["total"] == 2 and after["loaded"] == 2
        assert "/work/uploaded" in after["choices"]["projects"], "its project is offered as a filter"
        assert ids(first_page(client, sort="turns")) == ["uploaded", "on-disk"], "3 turns before 1"
        assert ids(first_page(client, project="/work/uploaded")) == ["uploaded"]
        assert "uploaded" in attrs(client.get("/").text, "tr[data-session-key]", "data-session-key")

        assert client.delete(f"/api/uploads/{digest}").status_code == 200
        gone = first_page(client)
        assert ids(gone) == ["on-disk"] and gone["total"] == 1 and gone["loaded"] == 1
        assert "/work/uploaded" not in gone["choices"]["projects"]
        assert ids(first_page(client, sort="turns")) == ["on-disk"]
        assert first_page(client, project="/work/uploaded")["total"] == 0
        assert "uploaded" not in attrs(client.get("/").text, "tr[data-session-key]", "data-session-key")


def test_another_server_on_the_same_store_lists_its_uploads_at_once(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    with app_client([], data_dir=data) as taking, app_client([], data_dir=data) as listing:
        assert first_page(listing)["total"] == 0
        digest = upload(taking, jsonl_bytes("from-the-other"), "other.jsonl")
        assert ids(first_page(listing)) == ["from-the-other"]
        assert taking.delete(f"/api/uploads/{digest}").status_code == 200
        assert first_page(listing)["total"] == 0


def test_a_log_changed_on_disk_moves_in_a_list_sorted_by_its_facts(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(jsonl_bytes("a", turns=2))
    (tmp_path / "b.jsonl").write_bytes(jsonl_bytes("b", turns=1, createdAt=T0 + 1))
    with app_client([str(tmp_path)]) as client:
        for _ in range(2):
            assert ids(first_page(client, sort="turns")) == ["a", "b"]
            assert ids(first_page(client)) == ["b", "a"]

        (tmp_path / "b.jsonl").write_bytes(jsonl_bytes("b", turns=3, createdAt=T0 + 1))
        by_turns = first_page(client, sort="turns")
        assert ids(by_turns) == ["b", "a"], "b grew to 3 turns"
        assert by_turns["sessions"][0]["summary"]["turns"] == 3

        (tmp_path / "c.jsonl").write_bytes(jsonl_bytes("c", createdAt=T0 + 2))
        (tmp_path / "a.jsonl").unlink()
        assert ids(first_page(client)) == ["c", "b"], "a new log listed first, a removed one gone"
        assert ids(first_page(client, sort="turns")) == ["b", "c"]


def test_a_log_rewritten_and_opened_before_the_list_is_asked_for_shows_its_new_facts(tmp_path: Path) -> None:
    """Opening the session reads its new version first, so the list's own look finds nothing new on disk."""
    served = tmp_path / "served"
    served.mkdir()
    (served / "a.jsonl").write_bytes(jsonl_bytes("a", turns=2))
    (served / "b.jsonl").write_bytes(jsonl_bytes("b", turns=1, createdAt=T0 + 1))
    with app_client([str(served)], data_dir=str(tmp_path / "data")) as client:
        for _ in range(2):
            assert ids(first_page(client, sort="turns")) == ["a", "b"]
        rewritten = [header("b", createdAt=T0 + 1), *events(3, seed=11)]  # other bytes, not an append
        (served / "b.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in rewritten))
        assert client.get("/api/sessions/b").status_code == 200
        assert ids(first_page(client, sort="turns")) == ["b", "a"]
