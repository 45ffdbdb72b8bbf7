"""A long session in Chromium: the budget chart's y axis stays in view while its plot scrolls and its
compaction is marked; the last step's model view loads earlier messages on demand."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.request_logs import compaction_between_calls, write_log
from tests.support.server import live_server

pytestmark = pytest.mark.browser

TURNS = 60  # two steps a turn: at 8 px a slot the plot is about 1,000 px wide
WINDOW = 10
LAST = f"{TURNS}.2"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    b = compaction_between_calls()  # turns 1 and 2, a compaction between the calls of step 2.1
    for turn in range(3, TURNS + 1):
        b.turn(turn, f"Prompt {turn}")
    root = tmp_path_factory.mktemp("logs")
    write_log(root / "long" / "session.jsonl", b.events, "long")
    with live_server([str(root)], window_rows=WINDOW) as url:
        yield url


def test_the_y_axis_stays_in_view_while_the_plot_scrolls_and_the_compaction_is_marked(page: Page, server: str) -> None:
    page.set_viewport_size({"width": 800, "height": 800})
    page.goto(f"{server}/sessions/long/steps")
    axis = page.locator("[data-budget-axis]")
    plot = page.locator("[data-budget-scroll]")
    expect(plot.locator("svg[data-budget-plot]")).to_be_visible()
    marker = page.get_by_role("img", name=re.compile(r"compacted: 4 messages shadowed"))
    expect(marker).to_be_visible()
    expect(marker).to_have_attribute("data-marker", "compaction")
    expect(page.locator('[data-legend-marker="compaction"]')).to_have_text("Compaction")

    top = axis.locator("text").last  # the highest tick's label
    before = top.bounding_box()
    assert before is not None
    overflow = plot.evaluate("el => el.scrollWidth - el.clientWidth")
    assert overflow > 200, overflow  # the plot is wider than its place: it scrolls
    plot.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    assert plot.evaluate("el => el.scrollLeft") == overflow

    after = top.bounding_box()
    frame = plot.bounding_box()
    last_bar = page.locator(f'[data-bar="{LAST}"] rect').first.bounding_box()
    assert after is not None and frame is not None and last_bar is not None
    assert after == before  # the axis did not move
    assert after["x"] >= 0 and after["x"] + after["width"] <= frame["x"]  # in the page, left of the plot
    assert frame["x"] <= last_bar["x"] and last_bar["x"] + last_bar["width"] <= frame["x"] + frame["width"]
    marker_box = marker.bounding_box()
    assert marker_box is not None and marker_box["x"] + marker_box["width"] < frame["x"]  # scrolled away


def test_the_last_step_loads_earlier_messages_on_demand(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/long/steps/{LAST}")
    answered = page.locator("[data-call][data-answered]")
    messages = answered.locator(".mv-message")
    expect(messages).to_have_count(WINDOW)
    newest = messages.locator(".mv-position").all_inner_texts()
    expect(page.locator("[data-request-diff]").first).to_be_visible()

    answered.locator("[data-messages-earlier] button").click()
    expect(messages).to_have_count(2 * WINDOW)
    shown = [int(p) for p in messages.locator(".mv-position").all_inner_texts()]
    assert shown == list(range(shown[0], shown[0] + 2 * WINDOW)), shown  # the window before, in order
    assert [str(p) for p in shown[WINDOW:]] == newest
    # on to the first message: each window ends where the one after it begins, so none shows twice
    loader = answered.locator("[data-messages-earlier] button")
    while loader.count():
        before = messages.count()
        loader.click()
        expect(messages).not_to_have_count(before)
    shown = [int(p.replace(",", "")) for p in messages.locator(".mv-position").all_inner_texts()]
    assert shown == list(range(1, len(shown) + 1))
    expect(answered.locator("[data-messages] > summary")).to_have_text(f"{len(shown)} model-visible messages")
