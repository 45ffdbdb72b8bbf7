"""A browser's 404 is a page in the app's layout that says what was asked and offers the nearest thing that
exists (issue 13): the session of a missing message or step, the loaded session a mistyped key meant, the
uploads page for a deleted upload. The JSON API keeps JSON."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from bs4 import BeautifulSoup

from tests.support.rows import attrs, one, parse, select, text
from tests.support.server import app_client
from tests.support.uploads import jsonl_bytes

HTML = {"accept": "text/html"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    logs = tmp_path_factory.mktemp("logs")
    (logs / "release-notes-2026.jsonl").write_bytes(jsonl_bytes("release-notes-2026"))
    with app_client([str(logs)]) as client:
        yield client


def missing(client: httpx.Client, path: str) -> BeautifulSoup:
    page = client.get(path, headers=HTML)
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    doc = parse(page.text)
    one(doc, "[data-missing]")
    assert "/" in attrs(doc, "[data-missing] a", "href"), "a link back to the list"
    return doc


@pytest.mark.parametrize("rest", ["/messages/no-such-message", "/steps/99.9", "/events/100000"])
def test_a_missing_part_of_a_loaded_session_leads_to_the_session(client: httpx.Client, rest: str) -> None:
    doc = missing(client, f"/sessions/release-notes-2026{rest}")
    assert attrs(doc, "[data-missing-nearest] a", "href") == ["/sessions/release-notes-2026"]


def test_a_mistyped_key_leads_to_the_session_it_meant(client: httpx.Client) -> None:
    doc = missing(client, "/sessions/release-notes-2062")
    assert attrs(doc, "[data-missing-nearest] a", "href") == ["/sessions/release-notes-2026"]
    assert "release-notes-2062" in text(doc, "[data-missing-detail]"), "it says what was asked"


def test_a_key_like_no_other_offers_only_the_list(client: httpx.Client) -> None:
    doc = missing(client, "/sessions/nope")
    assert select(doc, "[data-missing-nearest]") == []


def test_a_deleted_upload_leads_to_the_uploads_page(client: httpx.Client) -> None:
    doc = missing(client, "/uploads/" + "0" * 64)
    assert attrs(doc, "[data-missing-nearest] a", "href") == ["/uploads"]


def test_the_api_keeps_json(client: httpx.Client) -> None:
    answer = client.get("/api/sessions/nope", headers=HTML)
    assert answer.status_code == 404 and answer.json()["detail"]
