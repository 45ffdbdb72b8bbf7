"""Moving through a long session in Chromium (issue 13): open anywhere in one load, jump to the end, and
a page that stays small while the reader walks it end to end."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest
from dsh_inspect.log.writer import append_batch
from playwright.sync_api import Page, expect

from tests.support.builders import LogBuilder, header
from tests.support.server import live_server, twin_rows

pytestmark = pytest.mark.browser

TURNS = 80  # 640 rows: about 4,800 elements if the page kept them all
WINDOW = 40  # the `window_rows` setting: 16 windows
DOM_LIMIT = 3000


def long_log(turns: int = TURNS) -> LogBuilder:
    b = LogBuilder()
    for turn in range(1, turns + 1):
        b.turn(turn, f"prompt number {turn}")
    return b


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("navigation")
    path = root / "long" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("long"), *long_log().events]))
    return root


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[str]:
    with live_server([str(root)], window_rows=WINDOW) as url:
        yield url


@pytest.fixture(scope="module")
def rows(server: str) -> list[dict[str, Any]]:
    return twin_rows(server, "long")


def documents(page: Page) -> list[str]:
    """The URLs of every document the page loads from now on (a hash change or a fetch is none)."""
    loaded: list[str] = []
    page.on("request", lambda r: loaded.append(r.url) if r.resource_type == "document" else None)
    return loaded


def same_document(page: Page) -> None:
    """A mark that only the document it was set in has: gone after any page load."""
    assert page.evaluate("window.__navigationMark === true")


def elements(page: Page) -> int:
    return int(page.evaluate("document.getElementsByTagName('*').length"))


def size(page: Page) -> int:
    """Every node of the page: its elements, and its text and comments too."""
    return int(
        page.evaluate("""() => {
        const walker = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
        let nodes = 1;
        while (walker.nextNode()) nodes++;
        return nodes;
    }""")
    )


def windows(page: Page) -> list[tuple[int, int]]:
    spans = page.evaluate("[...document.querySelectorAll('[data-window]')].map(w => [w.dataset.from, w.dataset.to])")
    return [(int(a), int(b)) for a, b in spans]


def last_answer(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in reversed(rows) if r["kind"] == "assistant-step" and r["anchor"].startswith("msg-"))


def test_at_the_last_message_shows_it_from_one_document_load(
    page: Page, server: str, rows: list[dict[str, Any]]
) -> None:
    loaded = documents(page)
    target = last_answer(rows)["anchor"]
    page.goto(f"{server}/sessions/long?at={target}")
    row = page.locator(f"[id='{target}']")
    expect(row).to_be_in_viewport()
    expect(row).to_contain_text("The file says alpha.")
    assert len(loaded) == 1
    assert elements(page) < DOM_LIMIT


def test_a_permalink_and_a_hash_change_open_far_rows_in_place(
    page: Page, server: str, rows: list[dict[str, Any]]
) -> None:
    loaded = documents(page)
    located: list[str] = []
    page.on("request", lambda r: located.append(r.url) if "/locate" in r.url else None)
    far = [r["anchor"] for r in rows if r["kind"] == "user"]
    first, second = far[50], far[20]  # turns 51 and 21: both outside the first window
    page.goto(f"{server}/sessions/long#{first}")
    expect(page.locator(f"[id='{first}']")).to_be_in_viewport()
    expect(page.locator(f"[id='{first}']")).to_contain_text("prompt number 51")
    page.evaluate("window.__navigationMark = true")
    page.evaluate(f"location.hash = '#{second}'")  # as a permalink followed inside the page
    expect(page.locator(f"[id='{second}']")).to_be_in_viewport()
    expect(page.locator(f"[id='{second}']")).to_have_attribute("data-current", "true")
    page.go_back()
    expect(page.locator(f"[id='{first}']")).to_be_in_viewport()
    same_document(page)
    assert len(loaded) == 1 and located == [], "no second page load and no /locate round trip"


@pytest.mark.parametrize("how", ["End", "G", "Latest", "Follow"])
def test_end_g_latest_and_follow_open_the_end(page: Page, server: str, rows: list[dict[str, Any]], how: str) -> None:
    page.goto(f"{server}/sessions/long")
    page.evaluate("window.__navigationMark = true")
    expect(page.locator("[data-window-next]")).to_be_attached()
    if how == "Latest":
        page.locator("[data-latest]").click()
    elif how == "Follow":
        page.locator("[data-follow]").check()
    else:
        page.keyboard.press(how if how == "End" else "Shift+G")
    last = page.locator(f"[id='{rows[-1]['anchor']}']")
    expect(last).to_be_in_viewport()
    expect(page.locator("[data-window-next]")).to_have_count(0)
    same_document(page)


def test_the_end_keys_leave_a_reader_typing_alone(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/long")
    page.locator("[data-search-input]").focus()
    page.keyboard.press("End")
    page.keyboard.type("G")
    expect(page.locator("[data-search-input]")).to_have_value("G")
    assert windows(page) == [(0, WINDOW)]


def first_row_on_screen(page: Page) -> tuple[str, float]:
    """The first row the viewport shows, and where it is on screen."""
    found = page.evaluate("""() => {
        const row = [...document.querySelectorAll('.flow-item')].find(r => r.getBoundingClientRect().bottom > 0);
        return [row.id, row.getBoundingClientRect().top];
    }""")
    return str(found[0]), float(found[1])


def top_of(page: Page, anchor: str) -> float:
    return float(page.evaluate("id => document.getElementById(id).getBoundingClientRect().top", anchor))


def test_a_walk_end_to_end_keeps_the_page_small_and_steady(page: Page, server: str, rows: list[dict[str, Any]]) -> None:
    page.goto(f"{server}/sessions/long")
    largest, dropped = size(page), False
    while page.locator("[data-window-next]").count():
        end = windows(page)[-1][1]
        # scrolled to the end of what is loaded: the next window comes in below, the farthest goes above
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        anchor, top = first_row_on_screen(page)
        page.wait_for_function("end => [...document.querySelectorAll('[data-window]')].pop().dataset.to > end", arg=end)
        largest = max(largest, size(page))
        if windows(page)[0][0] > 0:
            dropped = True
            assert abs(top_of(page, anchor) - top) < 2, "the rows on screen stay where they were"
    spans = windows(page)
    assert spans[-1][1] == len(rows) and dropped and largest < DOM_LIMIT, (spans, largest)
    assert all(a[1] == b[0] for a, b in pairwise(spans)), "kept windows are contiguous"
    # disclosures in the windows kept still open
    header = page.locator("[data-disclosure-row][data-expandable]").last
    header.click()
    expect(header).to_have_attribute("aria-expanded", "true")

    # and back: the windows dropped come back, in order, with the rows on screen held in place
    while page.locator("[data-window-earlier]").count():
        start = windows(page)[0][0]
        page.evaluate("window.scrollTo(0, 0)")
        anchor, top = first_row_on_screen(page)
        page.wait_for_function("start => document.querySelector('[data-window]').dataset.from < start", arg=start)
        largest = max(largest, size(page))
        assert abs(top_of(page, anchor) - top) < 2, "rows put back above do not push the view"
    shown = page.locator(".flow-item").evaluate_all("els => els.map(e => e.id)")
    assert shown == [r["anchor"] for r in rows[: len(shown)]] and largest < DOM_LIMIT


def test_the_end_opened_in_place_receives_live_rows(page: Page, tmp_path: Path) -> None:
    b = long_log(12)
    written = len(b.events)
    path = tmp_path / "growing" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("growing"), *b.events]))
    with live_server([str(tmp_path)], window_rows=20) as url:
        page.goto(f"{url}/sessions/growing")
        expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
        page.locator("[data-follow]").check()
        expect(page.locator("[data-window-next]")).to_have_count(0)
        b.turn(13, "a prompt written after the page opened")
        append_batch(path, b.events[written:])
        row = page.get_by_text("a prompt written after the page opened", exact=True)
        expect(row).to_be_in_viewport(timeout=10000)
        page.goto("about:blank")  # the live stream ends before its server does
