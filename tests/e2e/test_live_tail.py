"""Live tail in Chromium: appended rows arrive in order over SSE, nothing open closes, torn lines complete."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from dsh_inspect.log.writer import append_batch, batch_bytes, write_artifact, zstd_frame
from playwright.sync_api import Page, Route, expect

from tests.support.builders import PROVIDER, LogBuilder, header
from tests.support.server import live_server, twin_rows

pytestmark = pytest.mark.browser


def growing_session() -> LogBuilder:
    b = LogBuilder()
    b.turn(1, "first prompt")
    b.user("<system-reminder>ctx</system-reminder>", {"kind": "plugin", "plugin": "fixture"})
    for turn in (2, 3):
        b.turn(turn, f"prompt {turn}")
    return b


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {"zstd": tmp_path_factory.mktemp("zstd-root"), "none": tmp_path_factory.mktemp("plain-root")}


@pytest.fixture(scope="module")
def server(roots: dict[str, Path]) -> Iterator[str]:
    with live_server([str(roots["zstd"]), str(roots["none"])]) as url:
        yield url


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_appended_rows_arrive_in_order_and_open_rows_stay_open(
    page: Page, server: str, roots: dict[str, Path], compression: str
) -> None:
    events = growing_session().events
    first_turn = next(i for i, e in enumerate(events) if e["type"] == "turn/end") + 2  # + the context row
    sid = f"live-{compression}"
    path = write_artifact(roots[compression], header(sid), [events[:first_turn]], compression)  # type: ignore[arg-type]
    page.goto(f"{server}/sessions/{sid}")
    context = page.get_by_role("button", name="Context injection fixture", exact=True)
    context.click()
    expect(context).to_have_attribute("aria-expanded", "true")
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    rest = events[first_turn:]
    append_batch(path, rest[: len(rest) // 2])
    append_batch(path, rest[len(rest) // 2 :])
    expect(page.get_by_text("prompt 3", exact=True)).to_be_visible(timeout=10000)
    seqs = [int(s) for s in page.locator(".flow-item").evaluate_all("els => els.map(e => e.dataset.seq)")]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    api = page.request.get(f"{server}/api/sessions/{sid}/rows").json()
    assert api["nextFrom"] is None and seqs == [r["seq"] for r in api["rows"]]
    expect(context).to_have_attribute("aria-expanded", "true")
    expect(page.locator("[data-context-injection-body]")).to_have_count(1)


def test_rows_the_page_has_are_not_doubled_when_its_log_moved_on_before_the_tail_connected(
    page: Page, server: str, roots: dict[str, Path]
) -> None:
    """The race behind a page that showed its last rows twice: the log grew by a frame cut short between
    the page's render and its live tail's first read (held here until it did); the frame then completes."""
    events = growing_session().events
    first_turn = next(i for i, e in enumerate(events) if e["type"] == "turn/end") + 2
    path = write_artifact(roots["zstd"], header("live-moved"), [events[:first_turn]], "zstd")
    frame = zstd_frame(batch_bytes(events[first_turn:]))

    def torn_before_connecting(route: Route) -> None:
        with path.open("ab") as f:
            f.write(frame[:7])
        route.continue_()

    page.route("**/sessions/live-moved/live?*", torn_before_connecting)
    page.goto(f"{server}/sessions/live-moved")
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()  # the page's scripts are up
    context = page.get_by_role("button", name="Context injection fixture", exact=True)
    context.click()
    expect(context).to_have_attribute("aria-expanded", "true")
    expect(page.locator("[data-verdict]")).to_have_text("repaired", timeout=10000)  # the torn frame, read
    expect(context).to_have_attribute("aria-expanded", "true")
    with path.open("ab") as f:
        f.write(frame[7:])
    expect(page.get_by_text("prompt 3", exact=True)).to_be_visible(timeout=10000)
    seqs = [int(s) for s in page.locator(".flow-item").evaluate_all("els => els.map(e => e.dataset.seq)")]
    api = page.request.get(f"{server}/api/sessions/live-moved/rows").json()
    assert seqs == [r["seq"] for r in api["rows"]], "each row once, in order, as the log holds them"
    expect(page.locator("[data-verdict]")).to_have_text("accepted")
    expect(context).to_have_attribute("aria-expanded", "true")


def test_a_pending_row_the_page_has_goes_when_its_line_completed_before_the_tail_connected(
    page: Page, server: str, roots: dict[str, Path]
) -> None:
    events = growing_session().events
    path = write_artifact(roots["none"], header("live-pending"), [events[:12]], "none")
    line = orjson.dumps(events[12]) + b"\n"
    with path.open("ab") as f:
        f.write(line[:20])

    def completed_before_connecting(route: Route) -> None:
        with path.open("ab") as f:
            f.write(line[20:] + batch_bytes(events[13:]))
        route.continue_()

    page.route("**/sessions/live-pending/live?*", completed_before_connecting)
    page.goto(f"{server}/sessions/live-pending")
    expect(page.get_by_text("prompt 3", exact=True)).to_be_visible(timeout=10000)
    expect(page.locator("[data-diagnostic='pending']")).to_have_count(0)
    seqs = [int(s) for s in page.locator(".flow-item").evaluate_all("els => els.map(e => e.dataset.seq)")]
    api = page.request.get(f"{server}/api/sessions/live-pending/rows").json()
    assert seqs == [r["seq"] for r in api["rows"]]


def parallel_calls(b: LogBuilder, turn: int, calls: int) -> int:
    """A turn of one step that calls `calls` tools at once; the index of its first result."""
    b.add("turn/start", {"turn": turn})
    b.add("step/start", {"turn": turn, "step": 1})
    b.user("read them all")
    b.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial" if turn == 1 else "change"})
    ids = [f"call_{turn}_{i}" for i in range(calls)]
    args = '{"file_path": "a.txt"}'
    b.assistant(turn, 1, [{"type": "tool-call", "id": i, "name": "read", "arguments": args} for i in ids])
    made = [b.tool_call(turn, 1, i) for i in ids]
    first_result = len(b.events)
    for call in made:
        b.tool_result(turn, 1, call, "alpha")
    b.add("step/end", {"turn": turn, "step": 1})
    b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return first_result


class HeldTail:
    """The live request of a page, held until the test lets it go (after it changed the log)."""

    def __init__(self, page: Page, key: str) -> None:
        self.routes: list[Route] = []
        page.route(f"**/sessions/{key}/live?*", self.hold)

    def hold(self, route: Route) -> None:
        self.routes.append(route)

    def release(self) -> None:
        self.routes.pop().continue_()


def assert_each_row_once(page: Page, server: str, key: str) -> None:
    """The page's rows are the last ones of the session, each once, in order; no fold is left empty or
    miscounted."""
    seqs = [int(s) for s in page.locator(".flow-item").evaluate_all("els => els.map(e => e.dataset.seq)")]
    every = [r["seq"] for r in twin_rows(server, key)]
    assert seqs == every[len(every) - len(seqs) :], (seqs, every)
    folds = page.locator("[data-fold]").evaluate_all(
        "fs => fs.map(f => [Number(f.querySelector(':scope > [data-fold-toggle]').dataset.foldCount),"
        " f.querySelectorAll('.flow-item').length])"
    )
    assert all(count == held > 0 for count, held in folds), folds


def test_every_tool_row_gets_the_result_that_arrived_before_the_tail_connected(
    page: Page, server: str, roots: dict[str, Path]
) -> None:
    """Eight calls at once, the page rendered before their results: the results land in the log before
    the page's tail connects, and every tool row shows its result, the first ones too."""
    b = LogBuilder()
    first_result = parallel_calls(b, 1, 8)
    path = write_artifact(roots["none"], header("live-results"), [b.events[:first_result]], "none")
    held = HeldTail(page, "live-results")
    page.goto(f"{server}/sessions/live-results")
    tools = page.locator(".flow-item[data-chat-flow-kind='tool-call'] [data-tool]")
    expect(tools).to_have_count(8)
    for i in range(8):
        expect(tools.nth(i)).to_have_attribute("data-state", "stopped")
    append_batch(path, b.events[first_result:])
    held.release()
    expect(page.locator("[data-verdict]")).to_have_text("accepted", timeout=10000)
    expect(tools).to_have_count(8)
    for i in range(8):
        expect(tools.nth(i)).to_have_attribute("data-state", "ok")
    assert_each_row_once(page, server, "live-results")


def test_only_the_open_turn_is_sent_again_when_the_log_moved_on_before_the_tail_connected(
    page: Page, server: str, roots: dict[str, Path]
) -> None:
    """A closed turn, then eight calls at once whose results arrive before the tail connects: the open
    turn's rows are drawn again, the closed turn's stay as they were."""
    b = LogBuilder()
    b.turn(1)
    turn_two = len(b.events)
    first_result = parallel_calls(b, 2, 8)
    path = write_artifact(roots["none"], header("live-keyed"), [b.events[:first_result]], "none")
    held = HeldTail(page, "live-keyed")
    page.goto(f"{server}/sessions/live-keyed")
    page.locator(".flow-item").evaluate_all(
        f"els => els.filter(e => Number(e.dataset.seq) < {turn_two}).forEach(e => e.dataset.probe = 'drawn once')"
    )
    append_batch(path, b.events[first_result:])
    held.release()
    tools = page.locator(".flow-item[data-chat-flow-kind='tool-call'] [data-tool]")
    for i in range(9):
        expect(tools.nth(i)).to_have_attribute("data-state", "ok", timeout=10000)
    assert_each_row_once(page, server, "live-keyed")
    drawn = page.locator(".flow-item").evaluate_all("els => els.map(e => [Number(e.dataset.seq), e.dataset.probe])")
    kept = [seq for seq, probe in drawn if probe]
    assert kept and kept == [seq for seq, _ in drawn if seq < turn_two], "turn 1's rows stay as they were drawn"


def test_a_page_at_the_end_of_a_long_turn_holds_each_row_once_when_its_log_moved_on(
    page: Page, roots: dict[str, Path]
) -> None:
    """The turn open when the page was drawn began before the page's first row (a window of 6 rows)."""
    b = LogBuilder()
    b.turn(1)
    first_result = parallel_calls(b, 2, 12)
    path = write_artifact(roots["none"], header("live-window"), [b.events[:first_result]], "none")
    with live_server([str(roots["none"])], window_rows=6) as small:
        held = HeldTail(page, "live-window")
        page.goto(f"{small}/sessions/live-window?at=end")
        expect(page.locator("[data-window-earlier]")).to_be_attached()
        append_batch(path, b.events[first_result:])
        held.release()
        expect(page.locator("[data-verdict]")).to_have_text("accepted", timeout=10000)
        tools = page.locator(".flow-item[data-chat-flow-kind='tool-call'] [data-tool]")
        expect(tools.last).to_have_attribute("data-state", "ok")
        assert_each_row_once(page, small, "live-window")
        opening = page.get_by_text("Read a.txt please", exact=True)  # the first row: every window loaded
        for _ in range(20):
            if opening.count():
                break
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_timeout(250)
        expect(opening).to_be_attached()
        assert_each_row_once(page, small, "live-window")
        page.goto("about:blank")  # the page's live request ends before its server does


def test_a_torn_line_shows_pending_then_completes(page: Page, server: str, roots: dict[str, Path]) -> None:
    events = growing_session().events
    path = write_artifact(roots["none"], header("live-torn"), [events[:12]], "none")
    page.goto(f"{server}/sessions/live-torn")
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    line = orjson.dumps(events[12]) + b"\n"
    with path.open("ab") as f:
        f.write(line[:20])
    pending = page.locator("[data-diagnostic='pending']")
    expect(pending).to_be_visible(timeout=10000)
    with path.open("ab") as f:
        f.write(line[20:])
    expect(pending).to_have_count(0, timeout=10000)
    expect(page.locator(f".flow-item[data-seq='{events[12]['seq']}']")).to_be_attached(timeout=10000)


def test_a_truncated_log_is_noticed_and_its_rows_replaced_in_place(
    page: Page, server: str, roots: dict[str, Path]
) -> None:
    events = growing_session().events
    path = write_artifact(roots["none"], header("live-cut"), [events], "none")
    page.goto(f"{server}/sessions/live-cut")
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    expect(page.get_by_text("prompt 3", exact=True)).to_be_visible()
    page.evaluate("window.dshNotReloaded = true")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")
    expect(page.locator("[data-live-rewritten]")).to_be_visible(timeout=10000)
    expect(page.get_by_text("prompt 3", exact=True)).to_have_count(0)
    expect(page.get_by_text("first prompt", exact=True)).to_be_visible()
    assert page.evaluate("window.dshNotReloaded") is True


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_an_open_tool_row_stays_open_when_its_result_arrives(
    page: Page, server: str, roots: dict[str, Path], compression: str
) -> None:
    b = LogBuilder()
    b.turn(1)
    call = next(i for i, e in enumerate(b.events) if e["type"] == "tool/call")
    sid = f"live-result-{compression}"
    # the log ends at the call: dsh's crash closer stands in for the result, at the seq the result takes
    path = write_artifact(roots[compression], header(sid), [b.events[: call + 1]], compression)  # type: ignore[arg-type]
    page.goto(f"{server}/sessions/{sid}")
    expect(page.locator("[data-live][data-live-connected]")).to_be_attached()
    tool = page.locator(".flow-item[data-chat-flow-kind='tool-call']")
    header_row = tool.get_by_role("button", name="Read")
    output = tool.locator("[data-tool-output]")
    expect(tool.locator("[data-tool]")).to_have_attribute("data-state", "stopped")
    header_row.click()
    expect(header_row).to_have_attribute("aria-expanded", "true")
    expect(output).to_contain_text("Its outcome is unknown.")
    append_batch(path, [b.events[call + 1]])
    expect(tool.locator("[data-tool]")).to_have_attribute("data-state", "ok", timeout=10000)
    expect(header_row).to_have_attribute("aria-expanded", "true")
    expect(output).to_have_text("alpha")
    # swapped in place, not wrapped in a copy; it now anchors at its result's message id
    result_id = b.events[call + 1]["data"]["message"]["id"]
    expect(page.locator(f".flow-item[data-chat-flow-key='seq-{call}']")).to_have_count(1)
    expect(page.locator(f".flow-item[data-chat-flow-key='seq-{call}']")).to_have_attribute("id", f"msg-{result_id}")
