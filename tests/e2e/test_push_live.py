"""A push followed live in Chromium (issue 34, docs/decisions/0024-push.md): two server processes on one data
folder (the embedded store), a session page open on A, a turn appended through B with `POST /api/pushes`. The
page on A shows the new turn's prompt within two seconds of the append's 201, without reloading, each row once,
and its header's counts follow."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.builders import T0
from tests.support.process import ServeProcess, serve_process
from tests.support.server import twin_rows
from tests.support.upload_model import log_bytes, phrase

pytestmark = pytest.mark.browser

FOLLOWED_WITHIN = 2.0  # seconds from an append's 201 to its rows on a page open on another process


@pytest.fixture
def servers(page: Page, tmp_path: Path) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    """A and B: two processes on one `--data-dir`, as two workers or two services on one machine share it."""
    with serve_process([], tmp_path / "shared") as a, serve_process([], tmp_path / "shared") as b:
        try:
            yield a, b
        finally:
            page.goto("about:blank")  # the page's live request ends before its server does


def upload(server: ServeProcess, data: bytes) -> None:
    answer = httpx.post(f"{server.url}/api/uploads", params={"name": "session.jsonl"}, content=data, timeout=60)
    assert answer.status_code == 201, answer.text


def append(server: ServeProcess, sid: str, held: bytes, data: bytes) -> httpx.Response:
    """`data`'s bytes after `held` (what the server holds), as `dsh-inspect push` sends them."""
    assert data.startswith(held)
    return httpx.post(
        f"{server.url}/api/pushes/{sid}",
        params={"created": T0},
        headers={
            "Upload-Offset": str(len(held)),
            "If-Match": f'"{hashlib.sha256(held).hexdigest()}"',
            "Content-Type": "application/octet-stream",
        },
        content=data[len(held) :],
        timeout=60,
    )


def open_followed(page: Page, server: ServeProcess, sid: str, turns: int) -> None:
    """The session's page on `server`, its live tail connected, marked so that a reload would show."""
    page.goto(f"{server.url}/sessions/{sid}")
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    expect(facts(page, "turns")).to_have_text(f"{turns} turns")
    expect(prompt(page, sid, turns + 1)).to_have_count(0)
    page.evaluate("window.__noReload = 1")
    watch_for(page, phrase(sid, 0, turns + 1))


def watch_for(page: Page, text: str) -> None:
    """Have the page note when a row holding `text` lands, in its own clock (ms since the epoch): the time
    without the test's polling."""
    page.evaluate(
        """text => {
            window.__landedAt = undefined;
            const seen = () => [...document.querySelectorAll('.flow-item')].some(e => e.textContent.includes(text));
            new MutationObserver((_, observer) => {
                if (seen()) { window.__landedAt = performance.timeOrigin + performance.now(); observer.disconnect(); }
            }).observe(document.body, {childList: true, subtree: true});
        }""",
        text,
    )


def facts(page: Page, count: str) -> Any:
    return page.locator(f"[data-session-facts] [data-session-count='{count}']")


def prompt(page: Page, sid: str, turn: int) -> Any:
    """The row of turn `turn`'s prompt (its words are that turn's alone)."""
    return page.locator(".flow-item", has_text=phrase(sid, 0, turn))


def followed(page: Page, sid: str, answer: httpx.Response, turn: int) -> float:
    """Seconds from the append's 201 to its turn's prompt row on the page, as the test's wait (which polls)
    saw it; what the page's own clock says is printed too."""
    answered_at, answered_wall = time.monotonic(), time.time()
    assert answer.status_code == 201, answer.text
    prompt(page, sid, turn).wait_for(state="visible", timeout=15_000)
    waited = time.monotonic() - answered_at
    landed = page.evaluate("window.__landedAt")
    in_page = f"{landed / 1000 - answered_wall:.3f} s" if landed else "not noted"
    print(f"\nturn {turn}: its prompt row {waited:.3f} s after the 201 (by the page's clock: {in_page})")
    return waited


def check_page(page: Page, server: ServeProcess, sid: str, data: bytes, turns: int) -> None:
    """The page on `server` holds every row of the session once, in order, with its header as the log reads
    now, and was not reloaded."""
    assert page.evaluate("window.__noReload") == 1, "the page was not reloaded"
    expect(facts(page, "turns")).to_have_text(f"{turns} turns")
    twin = httpx.get(f"{server.url}/api/sessions/{sid}", timeout=60).json()
    assert twin["events"] == data.count(b"\n") - 1 and twin["turns"] == turns
    expect(facts(page, "events")).to_have_text(f"{twin['events']} events")
    expect(page.locator("[data-session-facts] [data-verdict]")).to_have_attribute("data-verdict", "accepted")
    for turn in range(1, turns + 1):
        expect(prompt(page, sid, turn)).to_have_count(1)
    seqs = [int(s) for s in page.locator(".flow-item").evaluate_all("els => els.map(e => e.dataset.seq)")]
    assert seqs == [r["seq"] for r in twin_rows(server.url, sid)], "each row once, in order"
    # it only grew: the page must not say that it was rewritten (nor have redrawn its rows as if it was)
    expect(page.locator("[data-live-rewritten]")).to_have_count(0)


def test_a_turn_appended_through_b_shows_on_a_page_open_on_a_within_two_seconds(
    page: Page, servers: tuple[ServeProcess, ServeProcess]
) -> None:
    """The log's second push grew one pushed whole: the page on A read it from its upload's blob, and reads the
    rest from the session's growing copy."""
    a, b = servers
    sid = "pushed-live"
    two, three = log_bytes(sid, 2, 0), log_bytes(sid, 3, 0)
    upload(b, two)
    open_followed(page, a, sid, 2)
    waited = followed(page, sid, append(b, sid, two, three), 3)
    assert waited <= FOLLOWED_WITHIN, f"the new turn showed {waited:.2f} s after the append's 201"
    check_page(page, a, sid, three, 3)


def test_each_turn_appended_through_b_shows_on_a_within_two_seconds(
    page: Page, servers: tuple[ServeProcess, ServeProcess]
) -> None:
    """A session that grew by appends already: the page on A reads on in the growing copy, a turn a push."""
    a, b = servers
    sid = "pushed-live-on"
    upload(b, log_bytes(sid, 1, 0))
    assert append(b, sid, log_bytes(sid, 1, 0), log_bytes(sid, 2, 0)).status_code == 201
    for turns in (2, 3, 4):
        held, data = log_bytes(sid, turns, 0), log_bytes(sid, turns + 1, 0)
        if turns == 2:
            open_followed(page, a, sid, 2)
        else:
            watch_for(page, phrase(sid, 0, turns + 1))
        waited = followed(page, sid, append(b, sid, held, data), turns + 1)
        assert waited <= FOLLOWED_WITHIN, f"turn {turns + 1} showed {waited:.2f} s after the append's 201"
        check_page(page, a, sid, data, turns + 1)
