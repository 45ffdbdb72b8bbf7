"""The outline in the session page's margin (issue 39, item 3), in Chromium: where the window has room, the
turns with their first prompts and the errors, compactions and subagents; a click opens the row in place, the
entry of the row in view is marked as the reader scrolls, and a 500-turn session's outline stays a few dozen
links. Hidden at 390 px. Screenshots go to /tmp/shots/39b/ for a person to look at."""

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

pytestmark = pytest.mark.browser

TURNS = 500
DOM_LIMIT = 3000
SHOTS = Path("/tmp/shots/39b")


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


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def entries(page: Page) -> object:
    return page.locator("[data-outline] a.outline-item")


def test_a_long_session_s_outline_stays_small_and_jumps_to_a_far_turn(page: Page, server: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{server}/sessions/long")
    outline = page.locator("[data-outline]")
    expect(outline).to_be_visible()
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
    expect(row).to_be_in_viewport()
    assert page.evaluate("window.__outlineMark === true"), "opened in place, no page load"
    expect(page.locator("[data-outline] a.outline-item[aria-current]")).to_have_attribute(
        "data-label", "Turn 400 · prompt number 400"
    )
    assert nodes(page) < DOM_LIMIT
    shot(page, "outline-long-1440")


def test_the_outline_follows_the_scroll(page: Page, server: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{server}/sessions/long")
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
    page.set_viewport_size({"width": 1440, "height": 900})
    page.emulate_media(color_scheme="dark" if dark else "light")
    page.goto(f"{server}/sessions/demo-tools?lang={lang}")
    errors = page.locator("[data-outline] a[data-outline-kind='error']")
    expect(errors).to_have_count(2)
    said = ("Error" if lang == "en" else "错误") + " · Error: old_string not found in README.md"
    expect(errors.first).to_have_accessible_name(said)
    shot(page, f"outline-demo-tools-{lang}-{'dark' if dark else 'light'}-1440")
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


def test_at_390_px_the_outline_is_hidden_and_nothing_is_fetched(page: Page, server: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if r.url.endswith("/outline") else None)
    page.goto(f"{server}/sessions/demo-tools")
    expect(page.locator("[data-chat-flow] .flow-item").first).to_be_attached()
    expect(page.locator("[data-outline]")).to_be_hidden()
    assert page.locator("[data-outline] a").count() == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert asked == []
    shot(page, "outline-demo-tools-390")
