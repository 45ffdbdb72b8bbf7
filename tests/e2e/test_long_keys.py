"""The session list in Chromium with very long keys: every row's title, counts and verdict fill in, asked
for in a request whose URL carries no key."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest
from playwright.sync_api import Page, Request, expect

from tests.support.builders import LogBuilder, header
from tests.support.server import live_server

pytestmark = pytest.mark.browser

SESSIONS = 200
ID_LENGTH = 500


def long_id(i: int) -> str:
    return f"{i:03d}-" + "k" * (ID_LENGTH - 4)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("long-keys")
    for i in range(SESSIONS):
        b = LogBuilder()
        b.turn(1, "Read a.txt please")
        b.add("session/title", {"title": f"Title {i:03d}", "messageSeqs": [2], "source": {"kind": "fallback"}})
        head = {**header(long_id(i)), "createdAt": 1_700_000_000_000 + i}
        folder = root / f"s{i:03d}"
        folder.mkdir()
        (folder / "session.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [head, *b.events]))
    with live_server([str(root)]) as url:
        yield url


def test_the_list_fills_every_title_count_and_verdict_of_long_keys(page: Page, server: str) -> None:
    asked: list[Request] = []
    page.on("request", lambda r: asked.append(r) if "/sessions-summaries" in r.url else None)
    page.goto(f"{server}/")
    rows = page.locator("tr[data-session-key]")
    expect(rows).to_have_count(50)
    newest = SESSIONS - 1
    for n in (newest, newest - 25, newest - 49):
        row = page.locator(f'tr[data-session-key="{long_id(n)}"]')
        expect(row.locator("[data-session-title]")).to_have_text(f"Title {n:03d}", timeout=10000)
    expect(page.locator("[data-session-title]", has_text="Title")).to_have_count(50)
    expect(page.locator("tr[data-session-key] .verdict[data-verdict=accepted]")).to_have_count(50)
    expect(page.locator("tr[data-session-key]", has_text="1 turn · 2 steps")).to_have_count(50)
    seen = [(r.method, r.url[:80]) for r in asked]
    assert asked and all(r.method == "POST" and len(r.url) < 100 for r in asked), seen
