"""Where am I (issue 39, item 2): wherever the reader is in a 500-turn session, a head that stays in view names
the session (its title as text), its project and verdict, and the turn in view, which follows the scroll. In
both themes and languages, at 1440 px (beside the column, costing it no height) and 390 px (at the top of the
toolbar, the page no wider than the screen), with screenshots (`DSH_INSPECT_SHOTS`, tests/support/shots.py)
under its `39a/`."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.test_density import KEY, LOOKS, TURN_SEQS, TURNS, at_end, box, opened, server, shot, sticky_bottom

__all__ = ["server"]  # the long session's, shared with the density tests

pytestmark = pytest.mark.browser

WORDS = {"en-US": ("accepted", "Turn {n}"), "zh-CN": ("可接受", "第 {n} 轮")}


def turn_line_at(page: Page, turn: int, offset: float) -> None:
    """Scrolls the line of turn `turn` to `offset` px under the toolbar (negative: above its bottom), measured
    and scrolled at once, and again until it holds there: a window loading meanwhile keeps the rows on screen
    where they are, and one not loaded yet below may leave too little page to scroll that far."""
    page.wait_for_function(
        """([turn, offset]) => {
            const line = document.querySelector(`[data-chat-flow] [data-turn="${turn}"]`)?.closest(".flow-item");
            if (!line) return false;
            const bar = () => document.querySelector("[data-toolbar]").getBoundingClientRect().bottom;
            window.scrollBy(0, line.getBoundingClientRect().top - bar() - offset);
            return Math.abs(line.getBoundingClientRect().top - bar() - offset) < 1;
        }""",
        arg=[turn, offset],
        polling=100,
    )


LAST_TO = "Number([...document.querySelectorAll('[data-window]')].pop().dataset.to)"


def last_line_above(page: Page) -> int | None:
    """The turn of the last turn line at or above the toolbar's bottom edge, as the page lays it out now."""
    above = page.locator("[data-chat-flow] [data-turn]").evaluate_all(
        "(all, top) => all.filter(e => e.getBoundingClientRect().top <= top).map(e => Number(e.dataset.turn))",
        sticky_bottom(page) + 1,
    )
    return int(above[-1]) if above else None


def head_follows_the_layout(page: Page, pattern: str) -> int:
    """The turn the head names once it names the last turn line above the toolbar's bottom edge as laid out
    then: both are read again until they agree, since a window loading may move the rows between two reads."""
    said = page.locator("[data-reading-head] [data-reading-turn]")
    for _ in range(100):
        above = last_line_above(page)
        if above is not None and said.text_content() == pattern.format(n=above):
            return above
        page.wait_for_timeout(50)
    raise AssertionError(f"the head says {said.text_content()!r}; the last turn line above the toolbar is {above}")


@pytest.mark.parametrize("look", LOOKS, ids="-".join)
@pytest.mark.parametrize("width", [1440, 390])
def test_the_head_names_the_session_and_the_turn_in_view(browser: Browser, server: str, look: Any, width: int) -> None:
    page = opened(browser, look, width, 844 if width == 390 else 900)
    verdict, turn = WORDS[look[1]]
    at_end(page, server)
    head = page.locator("[data-reading-head]")
    # the title's text, not its Markdown
    expect(head.locator("[data-reading-title]")).to_have_text("Long reading session")
    expect(head.locator("[data-reading-project]")).to_have_text("long-project")
    expect(head.locator("[data-reading-project]")).to_have_attribute("title", "/workspace/long-project")
    expect(head.locator("[data-reading-verdict]")).to_have_text(verdict)
    # the screen's top is a few turns before the last: one of those
    expect(head.locator("[data-reading-turn]")).to_have_text(re.compile(turn.format(n=f"{TURNS // 100 - 1}9[6-9]")))
    shot(page, f"sticky-end-{'-'.join(look)}-{width}")
    # deep in the session it is still there, and says which turn the top of the screen is in
    middle = TURNS // 2
    page.goto(f"{server}/sessions/{KEY}?at=seq-{TURN_SEQS[middle - 1]}")
    expect(page.locator(".flow-item[data-current]")).to_be_in_viewport()
    # (a window loading above meanwhile may move the rows a little: the head says what the page shows)
    turn_line_at(page, middle, -3)
    expect(page.locator("[data-user-text]", has_text=f"Task {TURNS}:")).not_to_be_in_viewport()
    assert head_follows_the_layout(page, turn) in (middle - 1, middle)
    expect(head).to_be_in_viewport()
    turn_line_at(page, middle, 40)  # that turn's line now below the top: a turn before it is in view
    assert head_follows_the_layout(page, turn) < middle
    shot(page, f"sticky-middle-{'-'.join(look)}-{width}")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    flow, shown = box(page.locator("[data-chat-flow]")), box(head)
    if width == 1440:  # in the margin beside the column, costing the rows no height
        assert shown["x"] + shown["width"] <= flow["x"]
        assert sticky_bottom(page) < 50
    else:  # the top of the toolbar
        bar = box(page.locator("[data-toolbar]"))
        assert bar["y"] <= shown["y"] and shown["y"] + shown["height"] <= bar["y"] + bar["height"]
    page.context.close()


def test_at_the_top_the_first_turn_is_in_view(browser: Browser, server: str) -> None:
    page = opened(browser, LOOKS[0], 1440)
    page.goto(f"{server}/sessions/{KEY}")
    expect(page.locator("[data-reading-turn]")).to_have_text("Turn 1")
    expect(page.locator("[data-reading-verdict]")).to_have_text("accepted")
    page.context.close()


def test_the_turn_follows_windows_loaded_as_the_reader_scrolls(browser: Browser, server: str) -> None:
    page = opened(browser, LOOKS[0], 1440)
    page.goto(f"{server}/sessions/{KEY}")
    # past turn 20, windows away: later ones load in as their loaders come near, each of the rows the page has
    # room for (decision 0048); at the end of what is loaded, the next scroll waits for the next window
    for _ in range(60):
        end = int(page.evaluate(LAST_TO))
        page.evaluate("window.scrollBy(0, 2000)")
        if (last_line_above(page) or 0) > 20:
            break
        page.wait_for_function(
            f"end => {LAST_TO} > end || scrollY + innerHeight < document.body.scrollHeight - 2", arg=end
        )
    assert head_follows_the_layout(page, WORDS["en-US"][1]) > 20
    page.context.close()
