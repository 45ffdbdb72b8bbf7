"""Moving through a long session in Chromium (issue 13): open anywhere in one load, jump to the end, and
a page that stays small while the reader walks it end to end."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from dsh_inspect.log.writer import append_batch
from dsh_inspect.testing.plugin import PAGE_WATCH
from playwright.sync_api import Page, expect

from tests.support.builders import PROVIDER, LogBuilder, header
from tests.support.server import live_server, twin_rows

pytestmark = pytest.mark.browser

TURNS = 80  # 640 rows: about 4,800 elements if the page kept them all
FAULTS, FAILED = 14, (2, 11)  # a session whose turns 2 and 11 read a file that is gone: the second past a window
WINDOW = 40  # the `window_rows` setting: 16 windows
DOM_LIMIT = 3000


def long_log(turns: int = TURNS) -> LogBuilder:
    b = LogBuilder()
    for turn in range(1, turns + 1):
        b.turn(turn, f"prompt number {turn}")
    return b


def heavy_log(turns: int = TURNS) -> LogBuilder:
    """Turns whose answer is a list of sixty items: rows of many nodes, fewer of which fit the page."""
    b = LogBuilder()
    for turn in range(1, turns + 1):
        b.add("turn/start", {"turn": turn})
        b.add("step/start", {"turn": turn, "step": 1})
        b.user(f"prompt number {turn}")
        b.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial" if turn == 1 else "change"})
        b.assistant(turn, 1, [{"type": "text", "text": "\n".join(f"- item {i} of turn {turn}" for i in range(60))}])
        b.add("step/end", {"turn": turn, "step": 1})
        b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return b


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("navigation")
    path = root / "long" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("long"), *long_log().events]))
    faults = LogBuilder()
    for turn in range(1, FAULTS + 1):
        faults.turn(turn, f"prompt number {turn}", failed=turn in FAILED)
    path = root / "faults" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("faults"), *faults.events]))
    path = root / "heavy" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("heavy"), *heavy_log().events]))
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
    # still at the start (the next window may have loaded under it, the rows being dense), not at the end
    assert windows(page)[0] == (0, WINDOW)


def first_row_on_screen(page: Page) -> tuple[str, float]:
    """The first row the viewport shows, and where it is on screen."""
    found = page.evaluate("""() => {
        const row = [...document.querySelectorAll('.flow-item')].find(r => r.getBoundingClientRect().bottom > 0);
        return [row.id, row.getBoundingClientRect().top];
    }""")
    return str(found[0]), float(found[1])


def top_of(page: Page, anchor: str) -> float:
    return float(page.evaluate("id => document.getElementById(id).getBoundingClientRect().top", anchor))


def fetched_windows(page: Page) -> list[tuple[int, int]]:
    """The rows (from, to) of every window of rows the page fetches from now on."""
    spans: list[tuple[int, int]] = []

    def count(response: Any) -> None:
        if "/rows?" in response.url:
            found = re.search(r'data-window data-from="(\d+)" data-to="(\d+)"', response.text())
            assert found, response.url
            spans.append((int(found[1]), int(found[2])))

    page.on("response", count)
    return spans


def test_a_walk_end_to_end_keeps_the_page_small_and_steady(page: Page, server: str, rows: list[dict[str, Any]]) -> None:
    fetched = fetched_windows(page)
    page.goto(f"{server}/sessions/long")
    largest, dropped = size(page), False
    # the loop reads where the windows end once per step: a load may end between two reads
    while (end := windows(page)[-1][1]) < len(rows):
        # scrolled to the end of what is loaded: the next window comes in below, the farthest goes above
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        anchor, top = first_row_on_screen(page)
        page.wait_for_function("end => [...document.querySelectorAll('[data-window]')].pop().dataset.to > end", arg=end)
        largest = max(largest, size(page))
        if windows(page)[0][0] > 0:
            dropped = True
            assert abs(top_of(page, anchor) - top) < 2, "the rows on screen stay where they were"
    expect(page.locator("[data-window-next]")).to_have_count(0)
    spans = windows(page)
    assert dropped and largest < DOM_LIMIT, (spans, largest)
    # a window asks for what the page has room for: no row comes twice on the way down (issue 37)
    assert all(a[1] == b[0] for a, b in pairwise([(0, WINDOW), *fetched])), fetched
    assert all(a[1] == b[0] for a, b in pairwise(spans)), "kept windows are contiguous"
    # disclosures in the windows kept still open
    header = page.locator("[data-disclosure-row][data-expandable]").last
    header.click()
    expect(header).to_have_attribute("aria-expanded", "true")

    # and back: the windows dropped come back, in order, with the rows on screen held in place
    while (start := windows(page)[0][0]) > 0:
        page.evaluate("window.scrollTo(0, 0)")
        anchor, top = first_row_on_screen(page)
        page.wait_for_function("start => document.querySelector('[data-window]').dataset.from < start", arg=start)
        largest = max(largest, size(page))
        assert abs(top_of(page, anchor) - top) < 2, "rows put back above do not push the view"
    expect(page.locator("[data-window-earlier]")).to_have_count(0)
    shown = page.locator(".flow-item").evaluate_all("els => els.map(e => e.id)")
    assert shown == [r["anchor"] for r in rows[: len(shown)]] and largest < DOM_LIMIT


def test_a_walk_through_heavy_rows_fetches_each_row_once(page: Page, server: str) -> None:
    """Rows of many nodes: each window asks for the rows the page has room for, fewer than a whole window, so
    that none is trimmed as it comes and fetched again (decision 0048); the page stays small."""
    total = len(twin_rows(server, "heavy"))
    fetched = fetched_windows(page)
    page.goto(f"{server}/sessions/heavy")
    first = windows(page)[0]
    largest = size(page)
    while (end := windows(page)[-1][1]) < total:
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_function("end => [...document.querySelectorAll('[data-window]')].pop().dataset.to > end", arg=end)
        largest = max(largest, size(page))
    expect(page.locator("[data-window-next]")).to_have_count(0)
    assert all(a[1] == b[0] for a, b in pairwise([first, *fetched])), fetched
    assert fetched[-1][1] == total and any(b - a < WINDOW for a, b in fetched[:-1]), fetched
    assert largest < DOM_LIMIT, largest


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


def marked(page: Page) -> Any:
    return page.locator(".flow-item[data-current]")


def found(server: str, session: str, facet: str) -> list[str]:
    """The anchors of the rows the session's search lists for `facet`, in order."""
    with httpx.Client() as client:
        return [m["anchor"] for m in client.get(f"{server}/api/sessions/{session}/search?{facet}").json()["matches"]]


@pytest.mark.parametrize(("key", "facet"), [("t", "kind=turn"), ("e", "errors=true"), ("c", "kind=tool-call")])
def test_keys_step_to_the_next_and_previous_turn_error_and_tool_call(
    page: Page, server: str, key: str, facet: str
) -> None:
    wanted = found(server, "faults", facet)
    page.goto(f"{server}/sessions/faults")
    page.evaluate("window.__navigationMark = true")
    steps = min(len(wanted), 5)  # far enough to open a window the page did not hold
    first = 1 if key == "t" else 0  # the first turn is the row on screen already: `t` goes on to the second
    for n in range(first, steps):
        page.keyboard.press(key)
        expect(marked(page)).to_have_attribute("id", wanted[n])
        expect(marked(page)).to_be_in_viewport()
    page.keyboard.press(f"Shift+{key.upper()}")
    expect(marked(page)).to_have_attribute("id", wanted[steps - 2])
    expect(marked(page)).to_be_in_viewport()
    same_document(page)


def test_the_turn_keys_cross_windows_in_place(page: Page, server: str, rows: list[dict[str, Any]]) -> None:
    turns = [r["anchor"] for r in rows if r["kind"] == "turn"]
    page.goto(f"{server}/sessions/long#{turns[40]}")
    page.evaluate("window.__navigationMark = true")
    expect(marked(page)).to_have_attribute("id", turns[40])
    page.keyboard.press("Shift+T")
    expect(marked(page)).to_have_attribute("id", turns[39])
    for n in range(40, 47):  # past the window's end and on
        page.keyboard.press("t")
        expect(marked(page)).to_have_attribute("id", turns[n])
    expect(marked(page)).to_be_in_viewport()
    same_document(page)


def test_a_hash_naming_no_row_says_so_as_at_does(page: Page, server: str, request: pytest.FixtureRequest) -> None:
    page.goto(f"{server}/sessions/long?at=msg-not-here")
    said = page.locator("[data-at-missing]").text_content()
    assert said == "No row msg-not-here in this session: it is shown from the start."
    page.goto(f"{server}/sessions/long#msg-not-here")
    expect(page.locator("[data-at-missing]")).to_have_text(said)
    expect(page.locator("[data-at-missing]")).to_have_attribute("role", "note")
    # Chromium logs the window's refused request (404: no such row) as a console error: expected, and only that
    watch = request.node.stash[PAGE_WATCH]
    assert all("status of 404" in p for p in watch.problems), watch.problems
    watch.problems.clear()


def test_question_mark_lists_every_key_that_works(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/long")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    keys = dialog.locator("dt kbd").all_text_contents()
    assert keys == ["/", "Esc", "j", "k", "t", "T", "e", "E", "c", "C", "End", "G", "Enter", "Space", "?"]
    expect(dialog).to_contain_text("Next turn; with Shift, the previous")
    expect(dialog).to_contain_text("The session's end, as the Latest button opens it")


def test_turn_keys_in_a_row_go_on_from_the_last(page: Page, server: str, rows: list[dict[str, Any]]) -> None:
    turns = [r["anchor"] for r in rows if r["kind"] == "turn"]
    page.goto(f"{server}/sessions/long")
    for _ in range(7):  # as fast as keys go: no waiting between them, the seventh across a window's end
        page.keyboard.press("t")
    expect(marked(page)).to_have_attribute("id", turns[7])
    expect(marked(page)).to_be_in_viewport()
