"""The steps chart reads at a glance (issue 41 item 9): no tick label cut off, however long its number; enough
ticks up the y axis; cache read, cache write and uncached input told apart by colour and by pattern, in either
theme, at a phone's width and a desktop's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.support.builders import LogBuilder
from tests.support.request_logs import streamed_answer, write_log
from tests.support.server import live_server

pytestmark = pytest.mark.browser

TURNS = 24


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    b = LogBuilder()
    for turn in range(1, TURNS + 1):
        b.add("turn/start", {"turn": turn})
        b.add("step/start", {"turn": turn, "step": 1})
        b.user(f"Prompt {turn}")
        usage = {
            "inputTokens": 1_200_000 + turn * 10_000,
            "cacheReadTokens": 30_000_000 + turn * 400_000,
            "cacheWriteTokens": 5_000_000,
            "outputTokens": 40_000,
        }
        streamed_answer(b, turn, 1, f"Answer {turn}", usage)
        b.add("step/end", {"turn": turn, "step": 1})
        b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    root = tmp_path_factory.mktemp("logs")
    write_log(root / "big" / "session.jsonl", b.events, "big")
    with live_server([str(root)]) as url:
        yield url


def boxes(page: Any, selector: str) -> list[dict[str, float]]:
    return page.locator(selector).evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right}; })"
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [390, 1440])
def test_the_chart_reads_at_a_glance(browser: Browser, server: str, width: int, theme: str) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=theme, locale="en-US")
    try:
        page = context.new_page()
        page.goto(f"{server}/sessions/big/steps")
        expect(page.locator("[data-budget-chart]")).to_be_visible()
        (axis,) = boxes(page, "[data-budget-axis]")
        ticks = boxes(page, "[data-budget-axis] text")
        assert len(ticks) >= 5, "enough ticks to read a bar's height by"
        assert page.locator("[data-budget-axis] text").last.text_content() == "40,000,000"
        assert all(t["left"] >= axis["left"] for t in ticks), "no tick label cut at the axis's left edge"
        (plot,) = boxes(page, "[data-budget-plot]")
        first = boxes(page, "[data-budget-plot] > text.budget-tick")[0]
        assert first["left"] >= plot["left"], "the first step's key is not cut at the plot's left edge"
        paint = page.evaluate("""() => {
            const style = (selector) => getComputedStyle(document.querySelector(selector));
            return {
                read: style("[data-budget-plot] rect.budget-cache-read").fill,
                write: style("[data-budget-plot] rect.budget-cache-write").fill,
                input: style("[data-budget-plot] rect.budget-input").fill,
                readInk: style(".budget-cache-read-ink").stroke,
                writeInk: style(".budget-cache-write-ink").fill,
            };
        }""")
        assert "budget-cache-read-fill" in paint["read"] and "budget-cache-write-fill" in paint["write"], paint
        assert paint["input"].startswith("rgb"), "uncached input is solid"
        assert len({paint["readInk"], paint["writeInk"], paint["input"]}) == 3, paint
    finally:
        context.close()
