"""A message with a 100,000-character id in Chromium: its permalink and its identity link are short, and both
open it (issue 15 item 8)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from dsh_inspect.history.message_handles import message_handle
from playwright.sync_api import Page, expect

from tests.support.server import live_server
from tests.web.test_message_ids_in_urls import LONG, odd_log

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root: Path = tmp_path_factory.mktemp("long-ids")
    (root / "odd.jsonl").write_bytes(odd_log())
    with live_server([str(root)]) as url:
        yield url


def test_clicking_a_long_ids_permalink_opens_it_by_a_short_anchor(page: Page, server: str) -> None:
    anchor = f"msg-{message_handle(LONG)}"
    page.goto(f"{server}/sessions/odd")
    row = page.locator(f"[id='{anchor}']")
    row.hover()  # its meta line shows in full on hover (docs/ui.md, the reading view)
    row.locator("[data-row-message]").first.click()
    expect(page).to_have_url(re.compile(rf"/sessions/odd#{re.escape(anchor)}$"))
    assert len(page.url) < 200
    expect(row).to_have_attribute("data-current", "true")
    page.goto(page.url.replace("#", "?at=", 1))  # the same anchor as an `?at=` link opens at it too
    expect(page.locator(f"[id='{anchor}']")).to_be_in_viewport()
    page.locator(f"[id='{anchor}']").hover()
    page.locator(f"[id='{anchor}'] [data-identity-link]").first.click()
    expect(page).to_have_url(
        re.compile(r"/sessions/odd/messages/%7E[0-9a-f]{16}$|/sessions/odd/messages/~[0-9a-f]{16}$")
    )
    expect(page.locator("[data-identity]")).to_have_attribute("data-message-id", LONG)
