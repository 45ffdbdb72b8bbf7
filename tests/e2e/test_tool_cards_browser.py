"""Tool cards in Chromium (issue 41, item 1): a failed edit opens on old_string against new_string, removed and
added told apart; a shell card opens on its description and command line, its exit a red pill; a grep's
matches are listed per file, the rest behind "… 4 more lines", which opens without a script."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_inspect.testing.plugin import PAGE_WATCH
from playwright.sync_api import Page, expect

from tests.support.tool_logs import CWD, session

pytestmark = pytest.mark.browser
ERROR_RED = "rgb(236, 19, 19)"  # --error (docs/ui.md §4)


def opened(page: Page, name: str, nth: int = 0) -> Any:
    """The tool row of a `name` call, opened."""
    row = page.locator(f".flow-item:has([data-tool='{name}'])").nth(nth)
    row.locator("[data-disclosure-row]").click()
    return row


def test_a_failed_edit_shows_old_and_new_as_a_diff(seed_session: Any, chromium_page: Page) -> None:
    page = chromium_page
    page.goto(seed_session(session(), cwd=CWD))
    edit = opened(page, "edit")
    expect(edit.locator("[data-ask-path]")).to_have_text("settings.txt")
    removed, added = edit.locator("[data-tool-diff] del"), edit.locator("[data-tool-diff] ins")
    expect(removed).to_have_text(["color: blue", 'say "hi"'])
    expect(added).to_have_text(["color: green"])
    # removed and added read apart: their own backgrounds, and a sign before each
    backgrounds = {x.evaluate("e => getComputedStyle(e).backgroundColor") for x in (removed.first, added.first)}
    assert len(backgrounds) == 2 and "rgba(0, 0, 0, 0)" not in backgrounds
    signs = [x.evaluate("e => getComputedStyle(e, '::before').content") for x in (removed.first, added.first)]
    assert signs == ['"-"', '"+"']
    expect(edit.locator("[data-tool-output]")).to_contain_text("old_string not found")
    expect(edit.locator("[data-tool-input]")).to_have_count(0)


def test_a_bash_card_shows_its_command_and_an_exit_pill(seed_session: Any, chromium_page: Page) -> None:
    page = chromium_page
    page.goto(seed_session(session(), cwd=CWD))
    bash = opened(page, "bash")
    expect(bash.locator("[data-ask-description]")).to_have_text("Run the tests")
    expect(bash.locator("[data-ask-body]")).to_have_text("pytest -q tests")
    pill = bash.locator("[data-exit]")
    expect(pill).to_have_text("exit code 1")
    assert pill.evaluate("e => getComputedStyle(e).color") == ERROR_RED
    expect(bash.locator("[data-tool-output]")).to_have_text("2 failed")


def test_a_grep_lists_its_matches_and_opens_the_rest(seed_session: Any, chromium_page: Page) -> None:
    page = chromium_page
    page.goto(seed_session(session(), cwd=CWD))
    grep = opened(page, "grep")
    expect(grep.locator("[data-search-summary]")).to_have_text("9 of 42 matches · 3 files")
    hidden = grep.locator(".search-match", has_text="# TODO c6")
    expect(hidden).to_be_hidden()
    grep.get_by_text("… 4 more lines").click()
    expect(hidden).to_be_visible()


def test_a_search_match_in_a_card_disclosure_is_opened_and_shown(seed_session: Any, chromium_page: Page) -> None:
    page = chromium_page
    page.goto(seed_session(session(), cwd=CWD))
    page.keyboard.press("/")
    page.keyboard.type("TODO c6")  # behind the grep card's "… 4 more lines"
    mark = page.locator(".flow-item[data-current] [data-search-more] mark[data-search-mark]")
    expect(mark).to_have_text("TODO c6")
    expect(mark).to_be_visible()
    expect(mark).to_be_in_viewport()


def test_a_body_not_fetched_says_so_and_comes_on_the_next_opening(
    seed_session: Any, chromium_page: Page, request: pytest.FixtureRequest
) -> None:
    """A row's body comes when the row first opens (decision 0048): when the connection drops, the row says
    so, with what happened; opened again, it asks again and shows the body, then keeps it."""
    page = chromium_page
    page.goto(seed_session(session(), cwd=CWD))
    page.route("**/row-bodies/**", lambda route: route.abort())  # the connection drops: no server can say so
    bash = opened(page, "bash")
    expect(bash.locator("[data-body-failed]")).to_contain_text("Not fetched")
    expect(bash.locator("[data-tool-output]")).to_have_count(0)
    page.unroute("**/row-bodies/**")
    # Chromium logs the dropped request as a console error: expected, and only that
    watch = request.node.stash[PAGE_WATCH]
    assert all("ERR_FAILED" in p for p in watch.problems), watch.problems
    watch.problems.clear()
    header = bash.locator("[data-disclosure-row]")
    header.click()
    expect(bash.locator("[data-body-failed]")).to_have_count(0)  # closed, the note goes
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "/row-bodies/" in r.url else None)
    header.click()
    expect(bash.locator("[data-tool-output]")).to_have_text("2 failed")
    header.click()
    header.click()
    expect(bash.locator("[data-tool-output]")).to_have_text("2 failed")
    assert len(fetched) == 1, fetched  # kept in the row once fetched
