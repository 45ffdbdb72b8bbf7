"""Search across sessions in Chromium: type a phrase, press Enter, follow a hit to its row (issue 14)."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest
from playwright.sync_api import Page, expect

from tests.support.builders import LogBuilder, header
from tests.support.instructions import instructions_log
from tests.support.server import indexed, live_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("finder")
    (root / "shop.jsonl").write_bytes(instructions_log("shop", "价格以人民币计。"))
    b = LogBuilder()
    for turn in range(1, 41):
        b.turn(turn, "where is the narwhal" if turn == 35 else f"prompt number {turn}")
    (root / "long.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("long"), *b.events]))
    with live_server([str(root)], window_rows=20) as url:
        indexed(url)
        yield url


def test_a_hit_deep_in_a_long_session_opens_with_its_row_in_view(page: Page, server: str) -> None:
    page.goto(f"{server}/")
    page.click("[data-finder-link]")
    page.fill("[data-finder-form] input[name=q]", "narwhal")
    page.press("[data-finder-form] input[name=q]", "Enter")
    hit = page.locator('[data-finder-session="long"] [data-finder-hit]')
    expect(hit).to_have_count(1)
    expect(hit.locator("mark")).to_have_text("narwhal")
    anchor = hit.get_attribute("data-anchor")
    hit.locator("a").click()
    row = page.locator(f"[id='{anchor}']")
    expect(row).to_be_in_viewport()
    expect(row).to_contain_text("where is the narwhal")


def test_a_chinese_phrase_finds_the_instructions_card(page: Page, server: str) -> None:
    page.goto(f"{server}/search?q=人民币")
    hit = page.locator("[data-finder-hit]")
    expect(hit).to_have_count(1)
    expect(hit).to_contain_text("context · instructions")
    anchor = hit.get_attribute("data-anchor")
    hit.locator("a").click()
    card = page.locator(f"[id='{anchor}']")
    expect(card).to_be_in_viewport()
    expect(card).to_contain_text("AGENTS.md")
