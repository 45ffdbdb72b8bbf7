"""In-session search as people expect it, and bookkeeping folded with nothing hidden, in Chromium (issue 14)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dsh_inspect.cli import main
from dsh_inspect.log.writer import append_batch, write_artifact
from playwright.sync_api import Page, expect

from tests.conftest import CORPUS
from tests.support.builders import PROVIDER, LogBuilder, header
from tests.support.server import live_server

pytestmark = pytest.mark.browser

TURNS = 40
THOUGHTFUL = TURNS + 1
COUNT = "[data-search-count]"


def searched_log() -> LogBuilder:
    """Forty turns, each with its bookkeeping (`request/header`); turn 20's tool result says "walrus" (in the
    row's collapsed body) and an inbox splice before it holds "zebrafish" in its JSON only; a last turn's answer
    thinks five times, the fifth thought saying "narwhal" past its first line."""
    b = LogBuilder()
    for kind in ("permission/preset", "sandbox/mode", "approval/policy"):
        b.add(kind, {"preset": "default"})
    for turn in range(1, TURNS + 1):
        if turn == 20:
            b.add("agent/inbox/spliced", {"inbox": "next-step", "messages": [{"text": "zebrafish"}]})
            b.add("turn/start", {"turn": turn})
            b.add("step/start", {"turn": turn, "step": 1})
            b.user("Read the notes please")
            call = f"call_{turn}"
            b.assistant(turn, 1, [{"type": "tool-call", "id": call, "name": "read", "arguments": '{"file_path": "n"}'}])
            b.tool_round(turn, 1, call, "a walrus lives in the notes")
            b.add("step/end", {"turn": turn, "step": 1})
            b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        else:
            b.turn(turn, f"prompt number {turn}")
    turn = THOUGHTFUL
    b.add("turn/start", {"turn": turn})
    b.add("step/start", {"turn": turn, "step": 1})
    b.user("Think it over please")
    thoughts = [{"type": "reasoning", "text": f"Thought {n}.\nStill thinking."} for n in range(1, 5)]
    fifth = {"type": "reasoning", "text": "Thought 5.\nA narwhal, then."}
    b.assistant(turn, 1, [*thoughts, fifth, {"type": "text", "text": "Done thinking."}])
    b.add("step/end", {"turn": turn, "step": 1})
    b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return b


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("search-folds")


@pytest.fixture
def details(page: Page) -> Page:
    """The page in Details: a closed fold's head shows there (the reading view leaves closed folds out, as dsh
    shows no bookkeeping; docs/decisions/0036-reading-view.md), remembered as a reader's choice is."""
    page.add_init_script("localStorage.setItem('dsh-inspect-details', 'shown')")
    return page


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[str]:
    write_artifact(root, header("searched"), [searched_log().events], "none")
    paths = [str(root)]
    if CORPUS.is_dir():
        paths.append(str(CORPUS / "dsh-home"))
    with live_server(paths) as url:
        yield url


def type_search(page: Page, words: str) -> None:
    page.keyboard.press("/")
    expect(page.locator("[data-search-input]")).to_be_focused()
    page.keyboard.type(words)


def test_typing_finds_and_marks_matches_without_enter(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/searched")
    type_search(page, "prompt number 3")  # 3, 30…39: eleven rows
    expect(page.locator(COUNT)).to_have_text("1 of 11")
    marks = page.locator(".flow-item mark[data-search-mark]")
    expect(marks.first).to_be_visible()
    assert {m.lower() for m in marks.all_inner_texts()} == {"prompt number 3"}
    assert "prompt number 3" in (page.locator(".flow-item[data-current]").inner_text())
    page.keyboard.type("9")  # the marks follow what is typed
    expect(page.locator(COUNT)).to_have_text("1 of 1")
    expect(page.locator(".flow-item[data-current] mark[data-search-mark]")).to_have_text("prompt number 39")
    page.fill("[data-search-input]", "")
    expect(page.locator(COUNT)).to_have_text("")
    expect(page.locator("mark[data-search-mark]")).to_have_count(0)


def test_rows_loaded_later_are_marked_too(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/searched")
    type_search(page, "prompt number")
    expect(page.locator(COUNT)).to_have_text("1 of 39")
    later = page.locator(".flow-item", has_text="prompt number 39")
    expect(later).to_have_count(0)  # windows away from the first
    for _ in range(40):  # each window as big as the page has room for (decision 0048): a few of them, more when busy
        if later.count():
            break
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_timeout(500)
    expect(later.locator("mark[data-search-mark]")).to_have_text("prompt number", ignore_case=True)


def test_the_collapsed_body_holding_the_match_opens(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/searched")
    type_search(page, "walrus")  # in turn 20, beyond the first window
    expect(page.locator(COUNT)).to_have_text("1 of 1")
    mark = page.locator(".flow-item[data-current] [data-tool-output] mark[data-search-mark]")
    expect(mark).to_have_text("walrus")
    expect(mark).to_be_in_viewport()
    expect(page.locator(".flow-item[data-current] [data-disclosure-row]").first).to_have_attribute(
        "aria-expanded", "true"
    )
    expect(page.locator("[data-search-input]")).to_be_focused()  # typing goes on where it was


def test_of_five_thoughts_the_one_holding_the_match_opens_alone(page: Page, server: str) -> None:
    """The thoughts' bodies come when asked for (decision 0048): search fetches them, then opens the fifth, which
    holds the word, and leaves the four others closed."""
    page.goto(f"{server}/sessions/searched")
    type_search(page, "narwhal")
    expect(page.locator(COUNT)).to_have_text("1 of 1")
    mark = page.locator(".flow-item[data-current] .think-body mark[data-search-mark]")
    expect(mark).to_have_text("narwhal")
    expect(mark).to_be_in_viewport()
    headers = page.locator(".flow-item[data-current] [data-disclosure-row]")
    expect(headers).to_have_count(5)
    assert [h.get_attribute("aria-expanded") for h in headers.all()] == ["false"] * 4 + ["true"]


def test_a_word_only_in_raw_json_is_found_only_with_raw_ticked(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/searched")
    type_search(page, "zebrafish")
    expect(page.locator(COUNT)).to_have_text("no matches")
    page.get_by_label("Raw JSON too").check()
    expect(page.locator(COUNT)).to_have_text("1 of 1")
    current = page.locator(".flow-item[data-current]")
    expect(current).to_have_attribute("data-chat-flow-kind", "event")
    expect(current).to_be_visible()  # its fold opened
    expect(current.locator("mark[data-search-mark]")).to_have_text("zebrafish")  # in its opened JSON


def test_the_toolbar_stays_in_view_with_its_count(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/searched")
    type_search(page, "prompt number")
    expect(page.locator(COUNT)).to_have_text("1 of 39")
    page.mouse.wheel(0, 4000)
    # a function: a bare expression is polled with eval, which the page's CSP refuses once it must wait
    page.wait_for_function("() => window.scrollY > 500")  # the page is 1,700px high
    expect(page.locator(COUNT)).to_be_in_viewport()
    expect(page.locator("[data-search-input]")).to_be_in_viewport()
    assert page.locator("[data-toolbar]").evaluate("el => el.getBoundingClientRect().top") == 0


def test_j_and_k_step_through_the_rows_without_a_search(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/searched")
    shown = page.locator("[data-chat-flow] .flow-item:visible")
    marked = page.locator(".flow-item[data-current]")
    page.keyboard.press("j")
    expect(marked).to_have_attribute("id", shown.nth(0).get_attribute("id") or "")
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(marked).to_have_attribute("id", shown.nth(2).get_attribute("id") or "")
    page.keyboard.press("k")
    expect(marked).to_have_attribute("id", shown.nth(1).get_attribute("id") or "")
    assert marked.get_attribute("data-bookkeeping") is None, "a closed fold's rows are stepped over"


def test_question_mark_lists_the_shortcuts(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/searched")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    for described in ("Search this session", "Next match; with no search, the next row", "Show this list"):
        expect(dialog).to_contain_text(described)
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.get_by_role("button", name="Keyboard shortcuts (?)").click()
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()


def test_the_hidden_submit_button_takes_no_tab_stop(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/searched")
    page.locator("[data-search-input]").focus()
    focused = []
    for _ in range(10):
        page.keyboard.press("Tab")
        focused.append(page.evaluate("(el => el.getAttribute('type') + ':' + el.className)(document.activeElement)"))
    assert "submit:visually-hidden" not in focused
    assert any(f.startswith("checkbox") for f in focused)  # the walk went through the form


def test_a_fold_opens_to_show_each_of_its_rows(details: Page, server: str) -> None:
    page = details
    page.goto(f"{server}/sessions/searched")
    fold = page.locator("[data-fold]").first
    head = fold.get_by_role("button", name="3 events: permission/preset, sandbox/mode, approval/policy")
    expect(head).to_have_attribute("aria-expanded", "false")
    rows = fold.locator(".flow-item")
    expect(rows).to_have_count(3)
    for n in range(3):
        expect(rows.nth(n)).to_be_hidden()
    head.focus()
    page.keyboard.press("Enter")  # a real button: the keyboard opens it
    expect(head).to_have_attribute("aria-expanded", "true")
    assert [rows.nth(n).is_visible() for n in range(3)] == [True, True, True]
    assert [rows.nth(n).get_attribute("data-bookkeeping") for n in range(3)] == ["", "", ""]
    head.click()
    expect(rows.first).to_be_hidden()


def test_show_bookkeeping_is_remembered_across_a_reload(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/searched")
    bookkeeping = page.locator(".flow-item[data-bookkeeping]")
    expect(bookkeeping.first).to_be_hidden()
    page.get_by_label("Show bookkeeping").check()
    expect(bookkeeping.first).to_be_visible()
    expect(page.locator("[data-fold-toggle]").first).to_be_hidden()  # unfolded: the rows as they are
    page.reload()
    expect(page.get_by_label("Show bookkeeping")).to_be_checked()
    assert bookkeeping.evaluate_all("rows => rows.every(r => r.getClientRects().length > 0)")
    page.get_by_label("Show bookkeeping").uncheck()
    expect(bookkeeping.first).to_be_hidden()
    page.reload()
    expect(bookkeeping.first).to_be_hidden()


def test_a_permalink_into_a_fold_opens_it(page: Page, server: str) -> None:
    rows = httpx.get(f"{server}/api/sessions/searched/rows").json()["rows"]
    target = [r for r in rows if r["bookkeeping"]][4]
    page.goto(f"{server}/sessions/searched#{target['anchor']}")
    row = page.locator(f"[id='{target['anchor']}']")
    expect(row).to_be_visible()
    expect(row).to_be_in_viewport()
    expect(page.locator("[data-fold][data-open]")).to_have_count(1)


def test_a_real_sessions_first_screen_shows_no_unfolded_bookkeeping_row(
    details: Page, server: str, corpus_dir: Path
) -> None:
    page = details
    listed = httpx.get(f"{server}/api/sessions").json()["sessions"]
    keys = [s["key"] for s in listed if s["key"] != "searched"]
    assert len(keys) >= 4
    for key in keys:
        page.goto(f"{server}/sessions/{key}")
        bookkeeping = page.locator(".flow-item[data-bookkeeping]")
        total = bookkeeping.count()
        assert total > 0, key
        assert bookkeeping.evaluate_all("rows => rows.filter(r => r.getClientRects().length > 0).length") == 0, key
        heads = page.locator("[data-fold-toggle]")
        for n in range(heads.count()):
            heads.nth(n).click()
        assert bookkeeping.evaluate_all("rows => rows.filter(r => r.getClientRects().length > 0).length") == total


@pytest.mark.parametrize("when", ["while-following", "before-the-tail-connected"])
def test_bookkeeping_rows_arriving_live_fold_too(details: Page, server: str, root: Path, when: str) -> None:
    """Rows appended while the page follows fold as they arrive. Appended before the tail connected (or
    while it reconnected), the tail sends the last turn again, its own fold with it: each run of rows is
    still folded once, in its own fold, as the server draws it."""
    page = details
    b = LogBuilder()
    b.turn(1, "first prompt")
    first = len(b.events)
    b.add("turn/start", {"turn": 2})
    b.add("session/title", {"title": "Live"})
    b.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "change"})
    b.add("step/start", {"turn": 2, "step": 1})
    b.user("second prompt")
    key = f"live-folds-{when}"
    path = write_artifact(root, header(key), [b.events[:first]], "none")
    if when == "before-the-tail-connected":
        page.route(f"**/sessions/{key}/live?*", lambda route: (append_batch(path, b.events[first:]), route.continue_()))
    page.goto(f"{server}/sessions/{key}")
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    if when == "while-following":
        append_batch(path, b.events[first:])
    expect(page.get_by_text("second prompt", exact=True)).to_be_visible(timeout=10000)
    folds = page.locator("[data-fold]")
    expect(folds).to_have_count(2)  # turn 1's request/header, and turn 2's bookkeeping
    live = folds.filter(has=page.locator('[data-event-type="session/title"]'))
    head = live.get_by_role("button", name="2 events: session/title, request/header")
    expect(head).to_have_attribute("aria-expanded", "false")
    bookkeeping = page.locator(".flow-item[data-bookkeeping]")
    assert bookkeeping.evaluate_all("rows => rows.filter(r => r.getClientRects().length > 0).length") == 0
    head.click()
    expect(live.locator(".flow-item")).to_have_count(2)
    expect(live.locator(".flow-item").nth(1)).to_be_visible()
    assert fold_heads(page) == fold_heads(fresh_page(page, f"{server}/sessions/{key}"))


def fold_heads(page: Page) -> list[list[str]]:
    """Each fold's head as a reader meets it: its words, its title (every type), and the rows it says it holds
    and does hold."""
    heads: list[list[str]] = page.locator("[data-fold] > [data-fold-toggle]").evaluate_all(
        "hs => hs.map(h => [h.textContent, h.title, h.dataset.foldCount,"
        " String(h.parentElement.querySelectorAll(':scope > [data-fold-rows] > .flow-item').length)])"
    )
    return heads


def fresh_page(page: Page, url: str) -> Page:
    """`url` opened anew in a page of its own, beside `page`."""
    fresh = page.context.new_page()
    fresh.goto(url)
    expect(fresh.locator("[data-fold]").first).to_be_attached()
    return fresh


def test_a_fold_followed_live_reads_as_a_fresh_page_draws_it(details: Page, server: str, root: Path) -> None:
    """Bookkeeping rows arriving live join the fold the page's last row is in, a run row among them (65 like
    events: one row, sent again whole as it grows) counting each of its events; the head the server words
    for it reads as on a fresh page, and a fold the reader opened stays open."""
    page = details
    b = LogBuilder()
    b.turn(1, "first prompt")
    b.add("session/title", {"title": "Live"})  # the page ends in a fold of one
    first = len(b.events)
    for i in range(65):
        b.add("sandbox/mode", {"mode": f"m{i}"})
    grown = len(b.events)
    for i in range(65, 70):
        b.add("sandbox/mode", {"mode": f"m{i}"})
    b.add("approval/policy", {"policy": "never"})
    b.turn(2, "second prompt")
    key = "live-fold-heads"
    path = write_artifact(root, header(key), [b.events[:first]], "none")
    page.goto(f"{server}/sessions/{key}")
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    fold = page.locator("[data-fold]").filter(has=page.locator('[data-event-type="session/title"]'))
    head = fold.locator("[data-fold-toggle]")
    expect(head).to_have_text("1 event: session/title")
    head.click()
    append_batch(path, b.events[first:grown])
    expect(head).to_have_text("66 events: session/title, sandbox/mode")
    append_batch(path, b.events[grown:])
    expect(page.get_by_text("second prompt", exact=True)).to_be_visible(timeout=10000)
    expect(head).to_have_text("72 events: session/title, sandbox/mode, approval/policy")
    expect(head).to_have_attribute("aria-expanded", "true")
    expect(fold.locator("[data-run]")).to_have_attribute("data-run-count", "70")
    expect(fold.locator("[data-fold-rows] > .flow-item")).to_have_count(3)
    expect(fold.locator("[data-fold-rows] > .flow-item").last).to_be_visible()
    assert fold_heads(page) == fold_heads(fresh_page(page, f"{server}/sessions/{key}"))


def test_folds_open_in_a_one_file_export_and_a_permalink_opens_its_fold(page: Page, tmp_path: Path) -> None:
    root = tmp_path / "logs"
    write_artifact(root, header("exported"), [searched_log().events], "none")
    out = tmp_path / "exported.html"
    assert main(["render", str(root), "--session", "exported", "-o", str(out)]) == 0
    page.context.set_offline(True)
    page.goto(out.as_uri())
    page.get_by_label("Details").check()  # a closed fold's head shows in Details (the export's switch works too)
    fold = page.locator("[data-fold]").first
    expect(fold.locator(".flow-item").first).to_be_hidden()
    fold.locator("[data-fold-toggle]").click()
    expect(fold.locator(".flow-item").first).to_be_visible()
    # a closed fold's rows wait in its template while its window is mounted (docs/ui.md): the permalink brings them
    kept = page.locator("[data-fold]").nth(5).locator("template[data-fold-kept]")
    anchor = kept.evaluate("t => t.content.querySelector('.flow-item').id")
    expect(page.locator(f"[id='{anchor}']")).to_have_count(0)
    page.goto(f"{out.as_uri()}#{anchor}")
    inside = page.locator(f"[id='{anchor}']")
    expect(inside).to_be_visible()
    expect(inside).to_be_in_viewport()
