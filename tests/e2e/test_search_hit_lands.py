"""A hit of the search across sessions lands open and marked (issue 41, item 3): following it opens the card
that holds the words, scrolls to them and marks them, as the session page's own search does."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest
from playwright.sync_api import Page, Route, expect

from tests.support.builders import LogBuilder, header
from tests.support.instructions import instructed_turn
from tests.support.server import indexed, live_server

pytestmark = pytest.mark.browser

RULE = "Quote every price in 人民币, never in dollars."
DEEP = 35  # the turn whose instructions hold the rule, windows away from the page's first rows


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("landing")
    b = LogBuilder()
    for turn in range(1, 41):
        if turn == DEEP:
            instructed_turn(b, turn, RULE)  # its card closed at first, its body fetched on open
        else:
            b.turn(turn, f"prompt number {turn}")
    (root / "shop.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("shop"), *b.events]))
    with live_server([str(root)], window_rows=20) as url:
        indexed(url)
        yield url


def test_a_hit_in_a_closed_card_opens_it_scrolls_to_the_words_and_marks_them(page: Page, server: str) -> None:
    page.goto(f"{server}/search?q=人民币")
    hit = page.locator("[data-finder-hit]")
    expect(hit).to_have_count(1)
    expect(hit.locator("[data-finder-step]")).to_have_text(f"Step {DEEP}.1")
    anchor = hit.get_attribute("data-anchor")
    hit.locator("a").click()
    card = page.locator(f"[id='{anchor}']")
    expect(card.locator('[data-disclosure-row][aria-expanded="true"]').first).to_be_visible()
    mark = card.locator("mark[data-current-mark]")
    expect(mark).to_have_text("人民币")
    expect(mark).to_be_in_viewport()
    expect(page.locator("[data-search-input]")).to_have_value("人民币")
    expect(page.locator("[data-search-count]")).to_have_text("1 of 1")


def test_a_hit_landing_before_the_page_has_loaded_still_fetches_the_cards_body(page: Page, server: str) -> None:
    """The landing opens the card as soon as the search answers; on a busy machine that can be before the last
    module has loaded, and so before htmx has gone over the page (DOMContentLoaded). The card's body is fetched
    all the same: here the last module is held back until the card is open."""
    page.goto(f"{server}/search?q=人民币")
    hit = page.locator("[data-finder-hit]")
    anchor, href = hit.get_attribute("data-anchor"), hit.locator("a").get_attribute("href")
    held: list[Route] = []
    # (a lambda: Playwright cannot take a bound built-in as a handler)
    page.route("**/static/clipped.js", lambda route: held.append(route))  # noqa: PLW0108
    page.goto(f"{server}{href}", wait_until="commit")
    page.wait_for_selector('[data-disclosure-row][hx-get][aria-expanded="true"]', state="attached")
    assert held and page.evaluate("document.readyState") == "interactive", "the page loaded before the card opened"
    for route in held:
        route.continue_()
    expect(page.locator(f"[id='{anchor}'] mark[data-current-mark]")).to_have_text("人民币")
