"""The outline in the session page's margin (issue 39, item 3), in Chromium: where the window has room, the
turns with their first prompts and the errors, compactions and subagents; a click opens the row in place, the
entry of the row in view is marked as the reader scrolls, and a 500-turn session's outline stays a few dozen
links. At 390 px it waits behind the reading head's Outline button, which opens it over the page until a jump,
Esc or the button closes it. Screenshots (`DSH_INSPECT_SHOTS`, tests/support/shots.py) go to its `39b/`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from dsh_inspect.demo.generate import SESSIONS
from dsh_inspect.log.writer import append_batch, write_artifact
from playwright.sync_api import Page, expect

from tests.e2e.test_render_export import nodes
from tests.support.builders import LogBuilder, header, numbered_turns
from tests.support.server import live_server
from tests.support.shots import shot

pytestmark = pytest.mark.browser

TURNS = 500
DOM_LIMIT = 3000
LOADED = 20_000  # ms: a far row's window comes from the server, seconds on a loaded machine


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("outline")
    numbered_turns(root / "long" / "session.jsonl", TURNS)
    (root / "live").mkdir()
    return root


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[str]:
    with live_server([str(root), str(SESSIONS)]) as url:
        yield url


def visit(page: Page, url: str, width: int, dark: bool) -> None:
    """The page at `url` in a window of that width (a laptop's height, or a phone's) and theme."""
    page.set_viewport_size({"width": width, "height": 900 if width > 1000 else 844})
    page.emulate_media(color_scheme="dark" if dark else "light")
    page.goto(url)


def read(page: Page) -> None:
    """Once the outline has read its twin: a server's first one reads the whole log, seconds on a loaded machine."""
    expect(page.locator("[data-outline][data-outline-ready]")).to_be_attached(timeout=30_000)


def test_a_long_session_s_outline_stays_small_and_jumps_to_a_far_turn(page: Page, server: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{server}/sessions/long")
    outline = page.locator("[data-outline]")
    expect(outline).to_be_visible()
    read(page)
    first = page.locator("[data-outline] a.outline-item").first
    expect(first).to_have_accessible_name("Turn 1 · prompt number 1")
    expect(first).to_have_attribute("aria-current", "location")
    drawn = page.locator("[data-outline] a.outline-item").count()
    assert 10 < drawn < 50, "only the entries in and near the outline's view"
    assert nodes(page) < DOM_LIMIT
    # the outline scrolled to a far turn, and a click opens it in place
    page.locator("[data-outline-list]").evaluate("list => { list.scrollTop = 399 * 28; }")
    far = page.get_by_role("link", name="Turn 400 · prompt number 400")
    expect(far).to_be_visible()
    page.evaluate("window.__outlineMark = true")
    far.click()
    row = page.locator("[data-chat-flow] .flow-item", has_text="prompt number 400").first
    expect(row).to_be_in_viewport(timeout=LOADED)
    assert page.evaluate("window.__outlineMark === true"), "opened in place, no page load"
    expect(page.locator("[data-outline] a.outline-item[aria-current]")).to_have_attribute(
        "data-label", "Turn 400 · prompt number 400"
    )
    assert nodes(page) < DOM_LIMIT
    shot(page, "39b/outline-long-1440")


def test_the_outline_follows_the_scroll(page: Page, server: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{server}/sessions/long")
    read(page)
    marked = page.locator("[data-outline] a.outline-item[aria-current]")
    expect(marked).to_have_attribute("data-label", "Turn 1 · prompt number 1")
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")  # the next window comes in
    expect(page.locator("[data-chat-flow-kind=user]", has_text="prompt number 8")).to_be_attached()
    for turn in (3, 5, 2):  # each prompt in turn just under the toolbar: its turn is marked
        label = f"Turn {turn} · prompt number {turn}"
        for _ in range(4):  # a window that comes in meanwhile moves the rows: the prompt is put back under the bar
            page.locator("[data-chat-flow-kind=user]", has_text=f"prompt number {turn}").first.evaluate(
                """row => window.scrollBy(0, row.getBoundingClientRect().top
                     - document.querySelector('[data-toolbar]').getBoundingClientRect().bottom + 2)"""
            )
            try:
                expect(marked).to_have_attribute("data-label", label, timeout=1500)
                break
            except AssertionError:
                continue
        expect(marked).to_have_attribute("data-label", label)


@pytest.mark.parametrize(("lang", "dark"), [("en", False), ("zh", True)])
def test_a_demo_s_outline_lists_its_errors_compactions_and_subagents(
    page: Page, server: str, lang: str, dark: bool
) -> None:
    visit(page, f"{server}/sessions/demo-tools?lang={lang}", 1440, dark)
    read(page)
    errors = page.locator("[data-outline] a[data-outline-kind='error']")
    expect(errors).to_have_count(2)
    said = ("Error" if lang == "en" else "错误") + " · Error: old_string not found in README.md"
    expect(errors.first).to_have_accessible_name(said)
    shot(page, f"39b/outline-demo-tools-{lang}-{'dark' if dark else 'light'}-1440")
    errors.nth(1).click()
    expect(page.locator("[data-chat-flow] .flow-item[data-current]")).to_be_in_viewport()
    page.goto(f"{server}/sessions/demo-compaction?lang={lang}")
    expect(page.locator("[data-outline] a[data-outline-kind='compaction']")).to_have_count(1)
    page.goto(f"{server}/sessions/demo-subagent-parent?lang={lang}")
    subagent = page.locator("[data-outline] a[data-outline-kind='subagent']")
    said = ("Subagent" if lang == "en" else "子代理") + " · subagent · Find the flaky test"
    expect(subagent).to_have_accessible_name(re.compile("^" + re.escape(said)))


def test_a_live_session_s_new_turn_joins_its_outline(page: Page, server: str, root: Path) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    log = LogBuilder()
    for turn in (1, 2):
        log.turn(turn, f"live prompt {turn}")
    first = next(i for i, e in enumerate(log.events) if e["type"] == "turn/end") + 1
    path = write_artifact(root / "live", header("live-outline"), [log.events[:first]], "none")
    page.goto(f"{server}/sessions/live-outline")
    entries = page.locator("[data-outline] a.outline-item")
    expect(entries).to_have_count(1)
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    append_batch(path, log.events[first:])
    expect(entries).to_have_count(2, timeout=10_000)
    expect(entries.nth(1)).to_have_attribute("data-label", "Turn 2 · live prompt 2")


def test_at_390_px_the_outline_waits_behind_its_button_and_nothing_is_fetched(page: Page, server: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if r.url.endswith("/outline") else None)
    page.goto(f"{server}/sessions/demo-tools")
    expect(page.locator("[data-chat-flow] .flow-item").first).to_be_attached()
    expect(page.locator("[data-outline]")).to_be_hidden()
    expect(page.get_by_role("button", name="Outline")).to_have_attribute("aria-expanded", "false")
    assert page.locator("[data-outline] a").count() == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert asked == []
    shot(page, "39b/outline-demo-tools-390")


@pytest.mark.parametrize(("lang", "dark"), [("en", False), ("zh", True)])
def test_at_390_px_the_outline_button_opens_it_over_the_page_and_a_jump_closes_it(
    page: Page, server: str, lang: str, dark: bool
) -> None:
    visit(page, f"{server}/sessions/long?lang={lang}", 390, dark)
    button = page.get_by_role("button", name="Outline" if lang == "en" else "大纲")
    outline = page.get_by_role("navigation", name="Outline" if lang == "en" else "大纲")
    turn = "Turn {n} · prompt number {n}" if lang == "en" else "第 {n} 轮 · prompt number {n}"
    latest = page.locator("[data-latest]").bounding_box()
    toolbar = page.locator("[data-toolbar]").bounding_box()
    assert latest and toolbar and latest["y"] + latest["height"] <= toolbar["y"] + toolbar["height"], (
        "Latest is in the bar"
    )
    button.click()
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(outline).to_be_visible()
    read(page)
    expect(outline.get_by_role("link", name=turn.format(n=1))).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scroll
    shot(page, f"39b/outline-long-open-{lang}-{'dark' if dark else 'light'}-390")
    page.locator("[data-outline-list]").evaluate("list => { list.scrollTop = 299 * 28; }")
    page.evaluate("window.__outlineMark = true")
    outline.get_by_role("link", name=turn.format(n=300)).click()
    expect(outline).to_be_hidden()  # a jump closes it
    expect(button).to_have_attribute("aria-expanded", "false")
    row = page.locator("[data-chat-flow] .flow-item", has_text="prompt number 300").first
    expect(row).to_be_in_viewport(timeout=LOADED)
    assert page.evaluate("window.__outlineMark === true"), "opened in place, no page load"
    button.click()  # opened again, scrolled to the turn in view (about 300: a window that comes in above may move
    # the page a little), not at its top
    marked = outline.locator("a[aria-current]")
    expect(marked).to_have_attribute("data-outline-index", re.compile(r"^(2[5-9]\d|3\d\d)$"))
    expect(marked).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(outline).to_be_hidden()
    expect(button).to_be_focused()
    button.click()
    expect(outline).to_be_visible()
    button.click()  # its button closes it too
    expect(outline).to_be_hidden()
