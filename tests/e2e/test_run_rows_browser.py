"""A run of like rows in Chromium (issue 15 item 4): opened, it shows its rows a page at a time, loading
the next page as the reader scrolls; a permalink to a row inside it opens the run at that row."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.bombs import tiny_records_root
from tests.support.server import live_server

pytestmark = pytest.mark.browser

WINDOW = 40
RUN = "seq-1000-2999"  # 3,000 `{}` lines: the first 1,000 stay rows, each after its two listed findings


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tiny_records_root(tmp_path_factory.mktemp("run-rows"), 3_000)
    with live_server([str(root)], window_rows=WINDOW) as url:
        yield url


def test_opening_a_run_shows_its_rows_and_scrolling_loads_more(server: str, page: Page) -> None:
    page.goto(f"{server}/sessions/tiny-records?at={RUN}")
    run = page.locator(f"[id='{RUN}'] details[data-run]")
    expect(run.locator("summary")).to_contain_text("2,000 events whose type is not a string")
    run.locator("summary").click()
    rows = run.locator("[data-run-rows] > .flow-item")
    expect(rows.first).to_have_attribute("id", "seq-1000")
    expect(rows).to_have_count(WINDOW)
    run.locator("[data-run-next]").scroll_into_view_if_needed()
    expect(rows).to_have_count(2 * WINDOW)
    expect(page.locator("#seq-1079")).to_be_attached()
    page.locator("#seq-1005 [data-disclosure-row]").click()  # an inner row opens as any event row does
    expect(page.locator("#seq-1005 [data-event-detail]")).to_contain_text('"seq": 1005')


def test_a_permalink_inside_a_run_opens_the_run_at_that_row(server: str, page: Page) -> None:
    page.goto(f"{server}/sessions/tiny-records?at=seq-2500")
    target = page.locator("#seq-2500")
    expect(target).to_be_visible()
    expect(target).to_have_attribute("data-current", "true")
    expect(page.locator(f"[id='{RUN}'] details[data-run]")).to_have_attribute("open", "")
    page.locator("[data-run-earlier]").click()
    expect(page.locator("#seq-2455")).to_be_attached()


def test_earlier_rows_of_a_run_opened_a_few_rows_in_are_each_shown_once(server: str, page: Page) -> None:
    page.goto(f"{server}/sessions/tiny-records?at=seq-1020")  # its page starts 15 rows in: fewer than a page before
    expect(page.locator("#seq-1020")).to_be_visible()
    page.locator("[data-run-earlier]").click()
    expect(page.locator("#seq-1000")).to_be_attached()
    expect(page.locator("[data-run-earlier]")).to_have_count(0)
    rows = page.locator(f"[id='{RUN}'] [data-run-rows] > .flow-item")
    expect(rows).to_have_count(15 + WINDOW)  # rows 0–14, then the page opened at 15
    expect(page.locator("[id='seq-1015']")).to_have_count(1)
