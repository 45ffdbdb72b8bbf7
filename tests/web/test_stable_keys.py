"""Keys that never break, through a real client: a URL that has shown a session keeps showing it as other
copies of that session arrive, a short key several copies share answers a chooser (HTTP 300), and every
copy answers at its key unique by construction."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support.rows import attrs, parse, text
from tests.support.server import app_client
from tests.support.uploads import export_zip_bytes, jsonl_bytes, sqlite_bytes


def upload(client: httpx.Client, data: bytes, name: str) -> list[dict]:
    response = client.post("/api/uploads", params={"name": name}, content=data, timeout=60)
    assert response.status_code == 201, response.text
    return response.json()["upload"]["sessions"]


def test_a_url_keeps_its_session_when_another_upload_holds_the_same_one(tmp_path: Path) -> None:
    with app_client([], data_dir=str(tmp_path / "data")) as client:
        (first,) = upload(client, export_zip_bytes("shared-session", []), "export.zip")
        assert first["key"] == "shared-session"
        page = client.get(first["url"])
        assert page.status_code == 200
        later = upload(client, sqlite_bytes(tmp_path, ["shared-session", "other"]), "store.sqlite")
        copy = next(s for s in later if s["id"] == "shared-session")
        # the same session again (docs/decisions/0018-session-versions.md): its key stays, at its newest upload
        assert copy["key"] == first["key"] == "shared-session"
        twin = client.get(f"/api{first['url']}").json()
        assert twin["carrier"] == "sqlite" and len(twin["versions"]) == 2, "two versions: a copy in a store is one"
        zipped = twin["versions"][0]
        assert zipped["url"] == f"/sessions/shared-session@{zipped['digest'][:12]}"
        earlier = client.get(f"/api{zipped['url']}").json()
        assert (earlier["carrier"], earlier["asOf"]["digest"]) == ("zip", zipped["digest"]), "the first still answers"
        assert client.get(f"/api/sessions/{first['unique']}").json()["id"] == "shared-session"
        keys = [s["key"] for s in client.get("/api/sessions").json()["sessions"]]
        assert sorted(keys) == ["other", "shared-session"], "one row per session"


def test_copies_found_together_answer_their_short_key_with_a_chooser(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for name in ("a", "b"):
        (logs / name).mkdir(parents=True)
        (logs / name / "session.jsonl").write_bytes(jsonl_bytes("twin"))
    with app_client([str(logs)]) as client:
        listed = client.get("/api/sessions").json()["sessions"]
        assert sorted(s["key"] == s["unique"] for s in listed) == [True, True]
        page = client.get("/sessions/twin/steps", headers={"accept": "text/html"})
        assert page.status_code == 300
        doc = parse(page.text)
        assert "more than one session" in text(doc, "h1")
        assert sorted(attrs(doc, "[data-copies] a", "href")) == sorted(f"{s['url']}/steps" for s in listed)
        twin = client.get("/api/sessions/twin")
        assert twin.status_code == 300
        assert sorted(c["key"] for c in twin.json()["copies"]) == sorted(s["key"] for s in listed)
        missing = client.get("/sessions/nope")
        assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
