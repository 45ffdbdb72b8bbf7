"""Search across every loaded session through a real client: `/search`, `/api/search`, links that open the
row, Chinese, filters, and an upload's rows gone with it (a real SQLite index in the data dir)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CORPUS
from tests.support.instructions import instructions_log
from tests.support.rows import flow_rows, one, parse
from tests.support.server import app_client, indexed
from tests.support.uploads import jsonl_bytes

SNAPSHOTS = CORPUS / "sessions/examples/acp-agent/tests/snapshots"
REAL_RULE = "Root snapshot instruction"  # AGENTS.md of the agent-instructions scenario, and of no other log
RULE = "价格以人民币计"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("built")
    (root / "shop.jsonl").write_bytes(instructions_log("shop", f"{RULE}，不含运费。"))
    (root / "plain.jsonl").write_bytes(jsonl_bytes("plain", turns=2))
    (root / "markup.jsonl").write_bytes(instructions_log("markup", "Never <b>bold</b> a price & no <script>"))
    paths = [str(root)] + ([str(SNAPSHOTS), str(CORPUS / "dsh-home")] if CORPUS.is_dir() else [])
    with app_client(paths, data_dir=str(data_dir)) as client:
        indexed(client)  # each test asks what a hit shows, not what a busy machine indexed in time
        yield client


def api(client: httpx.Client, **params: Any) -> dict[str, Any]:
    response = client.get("/api/search", params=params, timeout=120)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def opens_at(client: httpx.Client, url: str, anchor: str) -> None:
    """The hit's link opens its session with the row in the window and the page scrolled to it."""
    html = client.get(f"{url}", timeout=60).text
    assert one(html, "[data-chat-flow]")["data-open-at"] == anchor
    assert anchor in [row.anchor for row in flow_rows(html)]


def test_a_phrase_only_in_one_real_sessions_instructions_finds_that_session(
    client: httpx.Client, corpus_dir: Path
) -> None:
    found = api(client, q=REAL_RULE)
    assert {h["path"] for h in found["hits"]} == {str(SNAPSHOTS / "agent-instructions/session.jsonl")}
    assert found["sessions"] == 1 and found["total"] == len(found["hits"])
    first = found["hits"][0]
    assert (first["kind"], first["form"]) == ("context", "instructions")
    start, end = first["marks"][0]
    assert first["snippet"][start:end] == REAL_RULE
    opens_at(client, first["url"], first["anchor"])
    rows = client.get(f"/api/sessions/{first['key']}", params={"at": first["anchor"]}).json()["rows"]
    (row,) = [r for r in rows if r["anchor"] == first["anchor"]]
    assert row["kind"] == "context"


def test_the_same_in_chinese_finds_the_instructions_card_and_opens_at_it(client: httpx.Client) -> None:
    found = api(client, q=RULE)
    (hit,) = found["hits"]
    assert (hit["key"], hit["kind"], hit["form"]) == ("shop", "context", "instructions")
    assert f"<mark>{RULE}</mark>" in hit["html"]
    opens_at(client, hit["url"], hit["anchor"])
    assert [h["anchor"] for h in api(client, q="价格")["hits"]] == [hit["anchor"]], "two characters find it too"


def test_the_page_groups_hits_by_session_with_marked_snippets_and_links(client: httpx.Client) -> None:
    html = client.get("/search", params={"q": "The file says alpha"}, timeout=120).text
    doc = parse(html)
    sessions = [s["data-finder-session"] for s in doc.select("[data-finder-session]")]
    assert "plain" in sessions and len(sessions) == len(set(sessions))
    group = one(html, '[data-finder-session="plain"]')
    hits = group.select("[data-finder-hit]")
    assert len(hits) == 2  # one assistant reply per turn
    for hit in hits:
        assert hit.select_one("mark").get_text() == "The file says alpha"
        # the search goes along: the session page takes it up, opens what holds the words and marks them
        assert hit.select_one("a")["href"] == f"/sessions/plain?at={hit['data-anchor']}&q=The+file+says+alpha"
    assert one(html, "[data-finder-count]").get_text().startswith("Matching rows: ")
    assert one(html, "input[name=q]")["value"] == "The file says alpha"
    assert parse(client.get("/").text).select_one("[data-finder-link]")["href"] == "/search"


def test_a_logs_markup_is_text_on_the_page(client: httpx.Client) -> None:
    html = client.get("/search", params={"q": "<b>bold</b>"}).text
    hit = one(html, '[data-finder-session="markup"] [data-finder-hit]')
    assert not hit.select("b") and not hit.select("script")
    assert hit.select_one("mark").get_text() == "<b>bold</b>"


def test_filters_narrow_the_hits_as_in_session_search(client: httpx.Client) -> None:
    every = api(client, q="alpha")
    tools = api(client, q="alpha", kind="tool-call", tool="read")
    assert tools["hits"] and {h["kind"] for h in tools["hits"]} == {"tool-call"}
    assert tools["total"] < every["total"]
    assert api(client, q="alpha", kind="tool-call", tool="no-such-tool")["hits"] == []
    assert {h["key"] for h in api(client, q="Shop rules", form="instructions")["hits"]} >= {"shop", "markup"}
    assert all(h["error"] for h in api(client, kind="tool-call", errors=True)["hits"])


def test_chinese_readers_get_the_page_in_chinese(client: httpx.Client) -> None:
    html = client.get("/search", params={"q": RULE}, headers={"Accept-Language": "zh-CN"}).text
    assert one(html, "h1").get_text() == "搜索全部会话"
    assert one(html, "[data-finder-count]").get_text() == "匹配的行：1 · 会话：1"


def test_deleting_an_upload_removes_its_rows_from_the_index(client: httpx.Client, data_dir: Path) -> None:
    phrase = "只在上传里的规则"
    created = client.post("/api/uploads", params={"name": "rules.jsonl"}, content=instructions_log("uploaded", phrase))
    assert created.status_code == 201, created.text
    digest = created.json()["upload"]["digest"]
    (hit,) = api(client, q=phrase)["hits"]
    assert hit["key"] == "uploaded"
    assert client.delete(f"/api/uploads/{digest}").status_code == 200
    assert api(client, q=phrase)["hits"] == []  # at once: a search asks only for the sources listed

    def held() -> tuple[int, int]:
        with sqlite3.connect(data_dir / "search-index.sqlite3") as db:
            sources = db.execute("SELECT count(*) FROM sources WHERE upload = ?", (digest,)).fetchone()[0]
            texts = db.execute("SELECT count(*) FROM row_text WHERE text LIKE ?", (f"%{phrase}%",)).fetchone()[0]
        return sources, texts

    # the index worker drops its rows after any pass under way (a delete never waits on the index's lock)
    deadline = time.monotonic() + 30
    while held() != (0, 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert held() == (0, 0)


def test_an_empty_search_shows_the_form_and_asks_nothing(client: httpx.Client) -> None:
    html = client.get("/search").text
    assert parse(html).select("[data-finder-form]") and not parse(html).select("[data-finder-count]")
    assert api(client)["hits"] == []


def test_the_json_twin_is_declared_in_the_openapi_document(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    assert "/api/search" in spec["paths"] and "/search" not in spec["paths"]
    hit = spec["components"]["schemas"]["SearchHitJson"]["properties"]
    assert {"key", "anchor", "snippet", "marks", "html", "url", "sessionUrl"} <= set(hit)
    (one_hit,) = api(client, q=RULE)["hits"]
    assert one_hit["sessionUrl"] == "/sessions/shop" and one_hit["url"].startswith("/sessions/shop?at=msg-")
