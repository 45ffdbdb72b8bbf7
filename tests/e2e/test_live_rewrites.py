"""Live tail in Chromium when a log changes other than by an append: the open page's header follows a
verdict that changes, its rows are replaced when the file is rewritten, and it says when the log is
gone, all without a reload."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from playwright.sync_api import Page, expect

from tests.support.builders import LogBuilder, header
from tests.support.server import live_server

pytestmark = pytest.mark.browser


def log_bytes(session_id: str, prompts: list[str]) -> bytes:
    b = LogBuilder()
    for turn, prompt in enumerate(prompts, 1):
        b.turn(turn, prompt)
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *b.events])


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rewrites")


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[str]:
    with live_server([str(root)]) as url:
        yield url


def open_live(page: Page, url: str) -> None:
    """Open a session page, wait for its live tail, and mark the page so that a reload would show."""
    page.goto(url)
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    if page.locator("[data-outline]").is_visible():  # the outline has read the session before the test changes it
        expect(page.locator("[data-outline-ready]")).to_be_attached()
    page.evaluate("window.dshNotReloaded = true")


def not_reloaded(page: Page) -> bool:
    return page.evaluate("window.dshNotReloaded === true") is True


def test_a_corrupt_line_appended_turns_the_header_verdict_without_a_reload(page: Page, server: str, root: Path) -> None:
    path = root / "corrupt.jsonl"
    path.write_bytes(log_bytes("corrupt", ["first prompt"]))
    open_live(page, f"{server}/sessions/corrupt")
    verdict = page.locator("[data-session-facts] .verdict")
    expect(verdict).to_have_attribute("data-verdict", "accepted")
    expect(page.locator("[data-diagnostic-count]")).to_have_attribute("data-diagnostic-count", "0")
    with path.open("ab") as f:
        f.write(b'{"type": "turn/start", "seq": \n')
    expect(verdict).not_to_have_attribute("data-verdict", "accepted", timeout=10000)
    expect(verdict).to_have_text("repaired")
    expect(page.locator("[data-diagnostic-count]")).to_have_attribute("data-diagnostic-count", "1")
    expect(page.locator("[data-session-facts]")).to_have_count(1)
    assert not_reloaded(page)


def test_a_log_rewritten_in_place_replaces_the_rows_without_a_reload(page: Page, server: str, root: Path) -> None:
    path = root / "rewritten.jsonl"
    path.write_bytes(log_bytes("rewritten", ["old prompt one", "old prompt two"]))
    open_live(page, f"{server}/sessions/rewritten")
    expect(page.get_by_text("old prompt two", exact=True)).to_be_visible()
    with path.open("r+b") as f:  # the same inode, longer than before
        f.write(log_bytes("rewritten", ["new prompt one", "new prompt two", "new prompt three"]))
        f.truncate()
    expect(page.locator("[data-live-rewritten]")).to_be_visible(timeout=10000)
    expect(page.get_by_text("new prompt three", exact=True)).to_be_visible()
    expect(page.get_by_text("old prompt one", exact=True)).to_have_count(0)
    expect(page.get_by_text("old prompt two", exact=True)).to_have_count(0)
    assert not_reloaded(page)
    # the live tail goes on from the new rows
    b = LogBuilder()
    for turn, prompt in enumerate(["new prompt one", "new prompt two", "new prompt three", "new prompt four"], 1):
        b.turn(turn, prompt)
    fourth = next(i for i, e in enumerate(b.events) if e["type"] == "turn/start" and e["data"]["turn"] == 4)
    with path.open("ab") as f:
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in b.events[fourth:]))
    expect(page.get_by_text("new prompt four", exact=True)).to_be_visible(timeout=10000)
    expect(page.locator("[data-session-facts]")).to_contain_text(f"{len(b.events)} events")
    assert not_reloaded(page)


@pytest.mark.parametrize("change", ["deleted", "emptied", "another session"])
def test_a_log_gone_from_disk_is_said_to_be_gone(page: Page, server: str, root: Path, change: str) -> None:
    key = f"gone-{change.replace(' ', '-')}"
    path = root / f"{key}.jsonl"
    path.write_bytes(log_bytes(key, ["a prompt"]))
    open_live(page, f"{server}/sessions/{key}")
    if change == "deleted":
        path.unlink()
    elif change == "emptied":
        path.write_bytes(b"")
    else:
        with path.open("r+b") as f:
            f.write(log_bytes(f"{key}-now", ["a prompt", "another prompt"]))
    gone = page.locator("[data-live-gone]")
    expect(gone).to_be_visible(timeout=10000)
    expect(page.get_by_text("a prompt", exact=True)).to_be_visible()  # what it held stays in view
    assert not_reloaded(page)
    if change == "another session":
        page.locator("[data-live-now]").click()
        expect(page.locator("h1.page-title")).to_have_text(f"{key}-now")
    else:  # opened again, it is a "not found" page (a reload would log the 404 as a console error)
        missing = page.request.get(f"{server}/sessions/{key}")
        assert missing.status == 404 and "data-missing" in missing.text()
