"""What daily readers expect on each row (issue 14, deliverable 5), in Chromium: copy puts the text on the
clipboard and says "Copied"; a row's time in the reader's time zone; a failed tool's OUT in docs/ui.md's error
red; titles aligned with what is under them and the session toolbar on one line from 1280 to 1920 px;
the header's counts following the live tail."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_inspect.cli import main
from dsh_inspect.demo.generate import SESSIONS
from dsh_inspect.log.writer import append_batch, write_artifact
from playwright.sync_api import Page, expect

from tests.support.builders import LogBuilder, header
from tests.support.geometry import left_edges, on_one_line
from tests.support.row_logs import CHILD, COMMAND, PARENT, timed_log, write
from tests.support.server import live_server

pytestmark = pytest.mark.browser
ERROR_RED = "rgb(236, 19, 19)"  # --dsw-alias-state-error-primary (docs/ui.md §4)
WIDTHS = (1280, 1680, 1920)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("extras-browser")
    write(root, PARENT, timed_log())
    child = LogBuilder()
    child.turn(1, "child prompt")
    write(root, CHILD, child, parentSession=PARENT, origin="subagent", delegationDepth=1)
    return root


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[str]:
    with live_server([str(root)]) as url:
        yield url


def allow_clipboard(page: Page, server: str) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)


def clipboard(page: Page) -> Any:
    return page.evaluate("navigator.clipboard.readText()")


def shown_word(button: Any) -> str:
    """The word a copy button shows: the stylesheet draws it from its data-label."""
    return str(button.evaluate("b => getComputedStyle(b, '::before').content")).strip('"')


def tool(page: Page, name: str) -> Any:
    return page.locator(f".flow-item:has([data-tool='{name}'])")


def test_copy_puts_the_text_on_the_clipboard_and_says_copied(page: Page, server: str) -> None:
    allow_clipboard(page, server)
    page.goto(f"{server}/sessions/{PARENT}")
    user = page.locator(".flow-item[data-chat-flow-kind='user']")
    button = user.locator("button[data-copy-from]")  # its name changes to Copied
    expect(button).to_have_accessible_name("Copy")
    assert shown_word(button) == "Copy"
    button.click()
    expect(button).to_have_accessible_name("Copied")
    assert shown_word(button) == "Copied"
    expect(page.locator("[data-copy-status][aria-live='polite']")).to_have_text("Copied")  # announced
    assert clipboard(page) == "Say hello & <wave>"
    expect(button).to_have_accessible_name("Copy", timeout=5000)  # a moment later it reads Copy again
    assert shown_word(button) == "Copy"
    ident = user.get_by_role("button", name="Copy id")
    ident.click()
    assert clipboard(page) == user.locator("[data-row-message]").inner_text()
    # a tool's IN and OUT, once open; and the shell command
    shell = tool(page, "bash")
    shell.get_by_role("button", name="Bash").click()
    shell.locator(".card-section[data-tool-asked] button[data-copy]").click()
    assert clipboard(page) == COMMAND  # its IN is the command line it asked (docs/ui.md §5.3)
    out = shell.locator(".card-section:has([data-tool-output]) button[data-copy]")
    out.click()
    expect(out).to_have_accessible_name("Copied")
    assert clipboard(page) == "ls: /nope: No such file"
    shell.get_by_role("button", name="Copy command").click()
    assert clipboard(page) == COMMAND


def test_a_path_button_copies_its_path_without_opening_the_row(page: Page, server: str) -> None:
    allow_clipboard(page, server)
    page.goto(f"{server}/sessions/{PARENT}")
    read = tool(page, "read")
    header_row = read.locator("[data-disclosure-row]")
    path = header_row.locator("button.path-link")
    path.click()
    expect(path).to_have_text("Copied")
    assert clipboard(page) == "notes.txt"
    expect(header_row).to_have_attribute("aria-expanded", "false")
    expect(path).to_have_text("notes.txt", timeout=5000)


def test_a_failed_tools_out_is_error_red(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/{PARENT}")
    shell = tool(page, "bash")
    shell.get_by_role("button", name="Bash").click()
    out = shell.locator("pre[data-tool-output]")
    expect(out).to_be_visible()
    assert out.evaluate("e => getComputedStyle(e).color") == ERROR_RED
    read = tool(page, "read")
    read.locator("[data-disclosure-row]").click()
    expect(read.locator("pre[data-tool-output]")).to_have_text("the notes")
    assert read.locator("pre[data-tool-output]").evaluate("e => getComputedStyle(e).color") != ERROR_RED
    assert read.locator("[data-tool-input]").count() == 0


def test_times_are_shown_in_the_readers_time_zone(browser: Any, server: str) -> None:
    context = browser.new_context(viewport={"width": 1680, "height": 1000}, locale="en-US", timezone_id="Asia/Shanghai")
    try:
        page = context.new_page()
        page.goto(f"{server}/sessions/{PARENT}")
        turn = page.locator(".flow-item[data-chat-flow-kind='turn'] time").first
        # T0, 14:13:20 UTC, is 22:13 in Shanghai; the whole timestamp is on hover
        expect(turn).to_have_text("2026-09-21 22:13")
        assert turn.get_attribute("datetime") == "2026-09-21T14:13:20.000Z"
        title = turn.get_attribute("title") or ""
        assert "September 21, 2026" in title and "10:13:20 PM" in title
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_titles_line_up_with_the_content_under_them(page: Page, server: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 1000})
    pages = {
        "/": ["[data-list-form]"],
        f"/sessions/{PARENT}": ["[data-session-facts]", "[data-chat-flow] .flow-item"],
        f"/sessions/{PARENT}/steps": [".mv-nav"],
        f"/sessions/{PARENT}/steps/1.1": [".mv-nav"],
        f"/sessions/{PARENT}/events/0": ["[data-event-json]"],
    }
    for path, under in pages.items():
        page.goto(f"{server}{path}")
        title, *content = left_edges(page, [".page-title", *under])
        assert content == [title] * len(content), f"{path} at {width}px: title at {title}, content at {content}"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_session_toolbar_stays_on_one_line(page: Page, server: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(f"{server}/sessions/{PARENT}")
    assert on_one_line(page, "[data-toolbar]")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "nor wider than the page"
    page.get_by_role("searchbox").fill("alpha")  # its count showing takes room too
    expect(page.locator("[data-search-count]")).not_to_be_empty()
    assert on_one_line(page, "[data-toolbar]")


# What a search box's placeholder needs, in its own font, against the room inside the box.
PLACEHOLDER_FITS = """el => {
    const style = getComputedStyle(el);
    const pen = document.createElement("canvas").getContext("2d");
    pen.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const sides = ["paddingLeft", "paddingRight", "borderLeftWidth", "borderRightWidth"];
    const room = el.getBoundingClientRect().width - sides.reduce((sum, side) => sum + parseFloat(style[side]), 0);
    return [pen.measureText(el.placeholder).width, room];
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [390, *WIDTHS])
def test_the_search_placeholder_is_shown_whole(browser: Any, server: str, width: int, lang: str) -> None:
    language = {"Accept-Language": lang}
    context = browser.new_context(viewport={"width": width, "height": 1000}, extra_http_headers=language)
    try:
        page = context.new_page()
        page.goto(f"{server}/sessions/{PARENT}")
        needs, room = page.locator("[data-search-input]").evaluate(PLACEHOLDER_FITS)
        assert needs <= room, f"{needs:.0f}px of placeholder in {room:.0f}px at {width}px, {lang}"
        assert on_one_line(page, "[data-toolbar]") or width < 1200
    finally:
        context.close()


def test_the_live_tail_updates_the_header_counts(page: Page, server: str, root: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    first = len(b.events)
    b.turn(2, "And again")
    path = write_artifact(root, header("counted"), [b.events[:first]], "none")
    page.goto(f"{server}/sessions/counted")
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    count = page.locator("[data-session-facts]").locator
    expect(count("[data-session-count='events']")).to_have_text(f"{first} events")
    expect(count("[data-session-count='turns']")).to_have_text("1 turn")
    expect(count("[data-session-count='steps']")).to_have_text("2 steps")
    append_batch(path, b.events[first:])
    expect(page.get_by_text("And again", exact=True)).to_be_visible(timeout=10000)
    expect(count("[data-session-count='events']")).to_have_text(f"{len(b.events)} events")
    expect(count("[data-session-count='turns']")).to_have_text("2 turns")
    expect(count("[data-session-count='steps']")).to_have_text("4 steps")
    # the rows that came are worded in the reader's time zone as the first ones were
    expect(page.locator(".flow-item[data-chat-flow-kind='turn'] time")).to_have_count(2)
    expect(page.locator("time[data-local-time]")).to_have_count(0)


def test_copy_works_in_a_one_file_export_offline(page: Page, tmp_path: Path) -> None:
    out = tmp_path / "tools.html"
    assert main(["render", str(SESSIONS), "--session", "demo-tools", "-o", str(out)]) == 0
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.context.set_offline(True)
    page.goto(out.as_uri())
    user = page.locator(".flow-item[data-chat-flow-kind='user']").first
    button = user.locator("button[data-copy-from]")
    button.click()
    expect(button).to_have_accessible_name("Copied")
    assert clipboard(page) == user.locator("[data-user-text]").inner_text()
    # a row's time is worded by the same script, and says nothing of a server
    assert page.locator("time[datetime]").count() > 0 and page.locator("time[data-local-time]").count() == 0
