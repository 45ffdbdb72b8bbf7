"""Dark theme from the OS preference, a remembered toggle, and Chinese strings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.test_context_rows import contexts_log
from tests.support.server import live_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("logs")
    contexts_log(root / "contexts" / "session.jsonl")
    with live_server([str(root)]) as url:
        yield url


def body_colour(page) -> str:  # type: ignore[no-untyped-def]
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def test_dark_follows_the_os_and_the_toggle_is_remembered(browser: Browser, server: str) -> None:
    context = browser.new_context(viewport={"width": 1680, "height": 1000}, locale="en-US", color_scheme="dark")
    page = context.new_page()
    page.goto(f"{server}/sessions/contexts")
    assert body_colour(page) == "rgb(18, 18, 19)"
    page.get_by_role("button", name="Context injection fixture", exact=True).click()
    body = page.locator("[data-context-injection-body]")
    expect(body).to_have_css("background-color", "rgb(27, 27, 28)")
    expect(body).to_have_css("color", "rgb(173, 178, 184)")
    page.get_by_role("button", name="Switch between light and dark").click()
    assert body_colour(page) == "rgb(255, 255, 255)"
    page.reload()
    assert body_colour(page) == "rgb(255, 255, 255)", "the choice survives a reload"
    page.get_by_role("button", name="Switch between light and dark").click()
    page.reload()
    assert body_colour(page) == "rgb(18, 18, 19)"
    context.close()


def test_chinese_strings_when_the_browser_prefers_chinese(browser: Browser, server: str) -> None:
    context = browser.new_context(viewport={"width": 1680, "height": 1000}, locale="zh-CN")
    page = context.new_page()
    page.goto(f"{server}/sessions/contexts")
    agents = page.get_by_role("button", name="上下文注入 AGENTS.md", exact=True)
    agents.click()
    expect(page.locator("[data-context-files] li")).to_have_text(["AGENTS.md已载入"])
    assert page.locator("[data-context-files] li").all_inner_texts() == ["AGENTS.md\n已载入"]
    page.get_by_role("button", name="跨会话召回 Research notes", exact=True).click()
    expect(page.locator("[data-context-recalls]")).to_contain_text("保留 18 条 · 省略 42 条")
    catalog = page.get_by_role("button", name="上下文注入 skill-catalog", exact=True)
    catalog.click()
    expect(page.locator("[data-context-entries-truncated]")).to_have_text("…还有 5 条")
    context.close()


@pytest.mark.parametrize("width", [390, 1440])
def test_the_top_bars_switch_changes_the_language_and_it_stays(browser: Browser, server: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900}, locale="en-US")
    page = context.new_page()
    page.goto(f"{server}/sessions/contexts")
    switch = page.get_by_role("navigation", name="Language")
    expect(switch.get_by_role("link")).to_have_text(["EN", "中文"])
    switch.get_by_role("link", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.get_by_role("button", name="上下文注入 AGENTS.md", exact=True)).to_be_visible()
    page.get_by_role("link", name="会话", exact=True).click()  # the crumb to the list: no `?lang=` in its URL
    expect(page.get_by_role("heading", level=1)).to_have_text("会话")
    page.get_by_role("navigation", name="语言").get_by_role("link", name="EN").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Sessions")
    page.goto(f"{server}/sessions/contexts")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    context.close()
