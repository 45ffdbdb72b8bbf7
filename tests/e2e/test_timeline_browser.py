"""A session's timeline in Chromium (issue 40): spans on a canvas with their figures on hover and focus, a click
that opens the span's row, keyboard zoom and pan, both themes and languages, and a 500-turn session whose page
stays small at any zoom."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_inspect.log.writer import write_artifact
from playwright.sync_api import Browser, BrowserContext, Page, expect

from benchmarks.generate import FULL, LONG_ID, build_long
from tests.support.server import live_server
from tests.support.shots import shot
from tests.support.timed_logs import CHILD_TITLES, CHILDREN, PARENT, write_subagent_family

pytestmark = pytest.mark.browser

DEMOS = Path(__file__).resolve().parents[2] / "app" / "demo" / "sessions"
DOM_LIMIT = 3000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("timeline")
    write_artifact(root, *build_long(LONG_ID, 500, FULL, FULL.seed + 1), "zstd")
    write_subagent_family(root / "family")
    with live_server([str(DEMOS), str(root)]) as url:
        yield url


def view(page: Page) -> tuple[int, int]:
    """The time the canvas shows, ms from the session's start (static/timeline.js's `data-view`)."""
    start, end = str(page.locator("[data-timeline]").get_attribute("data-view")).split("-")
    return int(start), int(end)


def spans(page: Page) -> list[list[Any]]:
    return page.evaluate("JSON.parse(document.querySelector('[data-timeline-data]').textContent).spans")


def point_at(page: Page, span: list[Any], lanes: int) -> tuple[float, float]:
    """Where span `span` is drawn on the page, at the zoom that fits the session: the middle of its bar."""
    box = page.locator("[data-timeline-canvas]").bounding_box()
    assert box is not None
    total = page.evaluate("JSON.parse(document.querySelector('[data-timeline-data]').textContent).end")
    gutter = min(132, box["width"] * 0.28)
    left = gutter + span[1] / total * (box["width"] - gutter)
    right = gutter + (span[2] if span[2] is not None else total) / total * (box["width"] - gutter)
    return box["x"] + (left + max(right, left + 2)) / 2, box["y"] + 22 + span[0] * 28 + 14


def test_hovering_a_span_says_its_figures_and_a_click_opens_its_row(chromium_page: Page, server: str) -> None:
    page = chromium_page
    page.goto(f"{server}/sessions/demo-tools/timeline")
    expect(page.locator("[data-timeline][data-timeline-ready]")).to_have_count(1)
    drawn = spans(page)
    widest = max(drawn, key=lambda s: (s[2] or 0) - s[1])  # the longest model call: easy to point at
    page.mouse.move(*point_at(page, widest, 3))
    expect(page.locator("[data-timeline-tip]")).to_have_text(widest[5])
    assert widest[5].startswith("model call · deepseek-v4-flash · ") and "TTFT" in widest[5]
    page.mouse.click(*point_at(page, widest, 3))
    page.wait_for_url(f"**/sessions/demo-tools?at={widest[4]}")
    expect(page.locator(f"[id='{widest[4]}']")).to_be_in_viewport()


def test_the_keyboard_steps_through_spans_zooms_pans_and_opens(chromium_page: Page, server: str) -> None:
    page = chromium_page
    page.goto(f"{server}/sessions/demo-tools/timeline")
    canvas = page.locator("[data-timeline-canvas]")
    canvas.focus()
    drawn = spans(page)
    expect(page.locator("[data-timeline-tip]")).to_have_text(drawn[0][5])  # focus shows the first span
    page.keyboard.press("ArrowRight")
    expect(page.locator("[data-timeline-tip]")).to_have_text(drawn[1][5])
    whole = view(page)
    for _ in range(3):
        page.keyboard.press("+")
    zoomed = view(page)
    assert zoomed[1] - zoomed[0] < (whole[1] - whole[0]) / 3, (whole, zoomed)
    page.keyboard.press("Shift+ArrowRight")
    assert view(page)[0] > zoomed[0], "panned later"
    page.keyboard.press("0")
    assert view(page) == whole
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/sessions/demo-tools?at={drawn[1][4]}")


def test_an_open_span_and_a_subagent_have_lanes_of_their_own(chromium_page: Page, server: str) -> None:
    page = chromium_page
    page.goto(f"{server}/sessions/demo-crash/timeline")
    tool = next(s for s in spans(page) if s[2] is None)
    assert tool[5] == "tool run · bash · still running when the log ends"
    page.goto(f"{server}/sessions/demo-subagent-parent/timeline")
    lanes = page.evaluate("JSON.parse(document.querySelector('[data-timeline-data]').textContent).lanes")
    assert [lane[1] for lane in lanes] == ["Model calls", "Between turns", "Find the flaky test"]


def timeline_in(browser: Browser, url: str, theme: str, lang: str, width: int) -> tuple[BrowserContext, Page]:
    """The timeline at `url` drawn in a context of its own: `theme`, `lang`'s locale, `width` px wide."""
    context = browser.new_context(
        viewport={"width": width, "height": 900},
        color_scheme=theme,  # type: ignore[arg-type]
        locale="zh-CN" if lang == "zh" else "en-US",
    )
    page = context.new_page()
    page.goto(url)
    expect(page.locator("[data-timeline][data-timeline-ready]")).to_have_count(1)
    return context, page


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize(("lang", "lane"), [("en", "Model calls"), ("zh", "模型调用")])
def test_both_themes_and_languages(browser: Browser, server: str, theme: str, lang: str, lane: str) -> None:
    for width in (1440, 390):
        context, page = timeline_in(browser, f"{server}/sessions/demo-compaction/timeline", theme, lang, width)
        lanes = page.evaluate("JSON.parse(document.querySelector('[data-timeline-data]').textContent).lanes")
        assert lanes[0][1] == lane
        # the canvas is painted in the theme's colours: the page's background behind its lanes
        painted = page.evaluate("""() => {
            const c = document.querySelector('[data-timeline-canvas]');
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let inked = 0;
            for (let i = 3; i < d.length; i += 4) if (d[i] > 0) inked++;
            return inked;
        }""")
        assert painted > 1000
        shot(page, f"40/timeline-{theme}-{lang}-{width}", full_page=True)
        context.close()


def test_a_500_turn_timeline_stays_small_at_any_zoom(chromium_page: Page, server: str) -> None:
    page = chromium_page
    page.goto(f"{server}/sessions/{LONG_ID}/timeline")
    expect(page.locator("[data-timeline][data-timeline-ready]")).to_have_count(1)
    assert len(spans(page)) > 1500
    canvas = page.locator("[data-timeline-canvas]")
    canvas.focus()
    sizes = [page.evaluate("document.getElementsByTagName('*').length")]
    for key in ["+"] * 8 + ["Shift+ArrowRight"] * 5 + ["-"] * 3 + ["ArrowRight"] * 20:
        page.keyboard.press(key)
        sizes.append(page.evaluate("document.getElementsByTagName('*').length"))
    canvas.hover()
    page.mouse.wheel(0, -400)
    sizes.append(page.evaluate("document.getElementsByTagName('*').length"))
    assert max(sizes) < DOM_LIMIT and max(sizes) == min(sizes), "a canvas: the DOM never grows with the zoom"
    start, end = view(page)
    assert end - start < 60_000, "zoomed in to under a minute of an 8-minute session"


def drawn_at(page: Page, start: int, end: int, row: int) -> tuple[float, float]:
    """The middle of a bar from `start` to `end` (ms from the session's start) on canvas row `row`, at the zoom
    shown (`data-view`)."""
    box = page.locator("[data-timeline-canvas]").bounding_box()
    assert box is not None
    shown = view(page)
    gutter = min(132, box["width"] * 0.28)
    plot = box["width"] - gutter
    left, right = ((ms - shown[0]) / (shown[1] - shown[0]) * plot + gutter for ms in (start, end))
    return box["x"] + (left + max(right, left + 2)) / 2, box["y"] + 22 + row * 28 + 14


def test_a_subagents_lane_opens_its_sessions_spans_in_place(chromium_page: Page, server: str) -> None:
    page = chromium_page
    page.goto(f"{server}/sessions/{PARENT}/timeline")
    expect(page.locator("[data-timeline][data-timeline-ready]")).to_have_count(1)
    flaky, docs = page.locator("button[data-timeline-child]").all()
    expect(flaky).to_have_text(CHILD_TITLES[0])
    expect(flaky).to_have_attribute("aria-expanded", "false")
    canvas = page.locator("[data-timeline-canvas]")
    closed = canvas.bounding_box()
    assert closed is not None
    assert closed["height"] == 22 + 3 * 28, "model calls, then a lane per subagent session"
    flaky.click()
    expect(flaky).to_have_attribute("aria-expanded", "true")
    opened = canvas.bounding_box()
    assert opened is not None and opened["height"] == 22 + 5 * 28, "its model calls and tool runs beneath it"
    docs_box = docs.bounding_box()
    assert docs_box is not None and docs_box["y"] == opened["y"] + 22 + 4 * 28 + 3, "the next lane moved down"
    child = page.evaluate("JSON.parse(document.querySelector('[data-timeline-data]').textContent).children[0]")
    tool = child["spans"][1]  # its shell command: the second of its spans, on its second lane (row 3 of the canvas)
    page.mouse.move(*drawn_at(page, tool[1], tool[2], 3))
    expect(page.locator("[data-timeline-tip]")).to_have_text(f"{CHILD_TITLES[0]} · tool run · bash · 1.0 s")
    page.mouse.click(*drawn_at(page, tool[1], tool[2], 3))
    page.wait_for_url(f"**/sessions/{CHILDREN[0]}?at={tool[4]}")
    expect(page.locator(f"[id='{tool[4]}']")).to_be_in_viewport()


def test_the_keyboard_opens_and_closes_a_subagents_lane(chromium_page: Page, server: str) -> None:
    page = chromium_page
    page.goto(f"{server}/sessions/{PARENT}/timeline")
    flaky, docs = page.locator("button[data-timeline-child]").all()
    flaky.focus()
    page.keyboard.press("Enter")
    expect(flaky).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("Space")
    expect(flaky).to_have_attribute("aria-expanded", "false")
    # on the canvas: → to the span that started the second subagent, Space opens its session's lanes
    page.locator("[data-timeline-canvas]").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator("[data-timeline-tip]")).to_have_text("subagent · subagent · 40 ms")
    page.keyboard.press("Space")
    expect(docs).to_have_attribute("aria-expanded", "true")
    expect(page.locator("[data-timeline-tip]")).to_have_text("subagent · subagent · 40 ms")  # its span kept focus
    page.keyboard.press("ArrowRight")  # the parent's answer, then the subagent's first call: in start order
    page.keyboard.press("ArrowRight")
    expect(page.locator("[data-timeline-tip]")).to_contain_text(f"{CHILD_TITLES[1]} · model call")
    flaky.click()
    assert page.evaluate("document.getElementsByTagName('*').length") < DOM_LIMIT


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_opened_lanes_in_both_themes_and_languages(browser: Browser, server: str, theme: str, lang: str) -> None:
    for width in (1440, 390):
        context, page = timeline_in(browser, f"{server}/sessions/{PARENT}/timeline", theme, lang, width)
        for toggle in page.locator("button[data-timeline-child]").all():
            toggle.click()
            expect(toggle).to_have_attribute("aria-expanded", "true")
        toggle_box = page.locator("button[data-timeline-child]").first.bounding_box()
        canvas_box = page.locator("[data-timeline-canvas]").bounding_box()
        assert toggle_box is not None and canvas_box is not None
        assert toggle_box["x"] + toggle_box["width"] <= canvas_box["x"] + min(132, canvas_box["width"] * 0.28)
        shot(page, f"40b/nested-{theme}-{lang}-{width}", full_page=True)
        context.close()
