"""An uploaded session's history on its pages (docs/decisions/0018-session-versions.md): the session page
counts its versions and links each and every upload along them; an earlier upload's page says so and links
the newest; the uploads list says what a delete of each upload takes and what stays."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.rows import attrs, one, parse, select, text
from tests.support.server import app_client
from tests.support.upload_model import log_bytes


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with app_client([], data_dir=str(tmp_path_factory.mktemp("data"))) as client:
        # one session sent after each of three turns, then a copy whose second turn was rewritten
        for turns, variant in ((1, 0), (2, 0), (3, 0), (2, 1)):
            answer = client.post(
                "/api/uploads", params={"name": "session.jsonl"}, content=log_bytes("grew", turns, variant)
            )
            assert answer.status_code == 201, answer.text
        yield client


def test_the_session_page_counts_its_versions_and_links_every_upload(client: httpx.Client) -> None:
    twin = client.get("/api/sessions/grew").json()
    assert [len(v["uploads"]) for v in twin["versions"]] == [3, 1]
    assert [v["current"] for v in twin["versions"]] == [False, True], "the rewritten copy came last: it is shown"
    assert twin["asOf"] is None and twin["newest"] == "/sessions/grew"
    doc = parse(client.get("/sessions/grew").text)
    assert text(doc, "[data-versions] summary") == "2 versions, 4 uploads"
    assert attrs(doc, "[data-version-link]", "href") == [v["url"] for v in twin["versions"]]
    uploads = attrs(doc, "[data-version-upload] a", "href")
    assert uploads == [u["url"] for u in twin["versions"][0]["uploads"]]
    assert all("@" in u for u in uploads), "each upload at its own URL, `key@digest12`"


def test_an_earlier_upload_shows_the_session_as_it_stood_and_links_the_newest(client: httpx.Client) -> None:
    first = client.get("/api/sessions/grew").json()["versions"][0]["uploads"][0]
    twin = client.get(f"/api{first['url']}").json()
    assert (twin["asOf"]["digest"], twin["turns"], twin["events"]) == (first["digest"], 1, first["events"])
    doc = parse(client.get(first["url"]).text)
    note = one(doc, "[data-as-of]")
    assert note["data-as-of"] == first["digest"]
    assert attrs(doc, "[data-newest-link]", "href") == ["/sessions/grew"]
    assert select(doc, "[data-version-upload][aria-current]")[0]["data-version-upload"] == first["digest"]


def test_the_delete_confirmation_says_which_sessions_stay(client: httpx.Client, tmp_path: Path) -> None:
    lone = client.post("/api/uploads", params={"name": "session.jsonl"}, content=log_bytes("lone", 1, 0))
    doc = parse(client.get("/uploads").text)
    said = {
        b["data-digest"]: b["data-confirm-sessions"] for b in select(doc, "[data-upload-delete]")
    }  # one button per upload
    assert said[lone.json()["upload"]["digest"]].startswith("Its bytes go, and with them its session")
    grew = [u["digest"] for v in client.get("/api/sessions/grew").json()["versions"] for u in v["uploads"]]
    assert all(said[d].startswith("It goes from every list") for d in grew), "the session stays at its other uploads"
