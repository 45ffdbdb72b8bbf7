"""A log changed under a running server in any way but an append: what the pages, their JSON twins and
the live tail of an open page say about it.

A grown file is read on only when the bytes read before are unchanged; a rewrite in place (same
inode), a shrink or a replacement is read afresh, and the live tail replaces the page's rows; a
verdict that changes reaches the open page's header; a key whose file was deleted, emptied or
rewritten with another session answers 404 at once, and the open page is told it is gone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from dsh_inspect.access import OPEN
from dsh_inspect.history.session import SessionLog
from dsh_inspect.sessions.registry import Registry
from dsh_inspect.settings import Settings
from dsh_inspect.web.present.strings import strings_for
from dsh_inspect.web.present.windows import transcript
from dsh_inspect.web.routes.live import Tail, page_mark
from dsh_inspect.web.state import WebState

from tests.support.builders import LogBuilder, header
from tests.support.live_stream import live_tail
from tests.support.rows import attrs, flow_rows, one, parse, text
from tests.support.server import live_server


def log_bytes(session_id: str, prompts: list[str]) -> bytes:
    b = LogBuilder()
    for turn, prompt in enumerate(prompts, 1):
        b.turn(turn, prompt)
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *b.events])


def rewrite_in_place(path: Path, data: bytes) -> None:
    """New bytes in the same file (the same inode), as a tool that truncates and writes does."""
    inode = path.stat().st_ino
    with path.open("r+b") as f:
        f.write(data)
        f.truncate()
    assert path.stat().st_ino == inode


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def server(root: Path) -> Iterator[str]:
    (root / "tail.jsonl").write_bytes(log_bytes("tail", ["old prompt one", "old prompt two"]))
    with live_server([str(root)]) as url:
        yield url


def row_texts(server: str, key: str) -> str:
    """What the JSON twin's rows say, all of it."""
    return httpx.get(f"{server}/api/sessions/{key}/rows").text


def test_a_corrupt_line_appended_changes_the_verdict_in_the_open_page_header(server: str, root: Path) -> None:
    assert httpx.get(f"{server}/api/sessions/tail").json()["verdict"]["category"] == "accepted"
    with live_tail(server, "tail") as stream:
        with (root / "tail.jsonl").open("ab") as f:
            f.write(b'{"type": "turn/start", "seq": \n')
        head = stream.until("facts")
    verdict = httpx.get(f"{server}/api/sessions/tail").json()["verdict"]
    assert verdict["category"] != "accepted"
    facts = one(head, "[data-session-facts]")
    assert facts["hx-swap-oob"] == "outerHTML:[data-session-facts]"
    assert attrs(facts, ".verdict", "data-verdict") == [verdict["category"]]
    assert text(facts, "[data-diagnostic-count]") == "1 diagnostic"
    assert one(head, "h1.page-title")["hx-swap-oob"] == "outerHTML:.session-head .page-title"


def test_a_log_rewritten_in_place_is_read_afresh_and_the_open_page_gets_the_new_rows(server: str, root: Path) -> None:
    path = root / "tail.jsonl"
    assert "old prompt two" in row_texts(server, "tail")
    with live_tail(server, "tail") as stream:
        # longer than before and the same inode: read on, it would keep the old rows
        rewrite_in_place(path, log_bytes("tail", ["new prompt one", "new prompt two", "new prompt three"]))
        notice = stream.until("notice")
    assert one(notice, "[data-live-rewritten]")
    flow = one(notice, "[hx-swap-oob]")
    assert flow["hx-swap-oob"] == "innerHTML:[data-chat-flow]"
    shown = " ".join(r.element.get_text(" ") for r in flow_rows(str(flow)))
    assert "new prompt three" in shown and "old prompt" not in shown
    rows = row_texts(server, "tail")
    assert "new prompt three" in rows and "old prompt" not in rows
    page = httpx.get(f"{server}/sessions/tail").text
    assert "old prompt" not in page


def test_a_log_rewritten_while_the_tail_first_reads_it_is_never_answered_with_the_rows_read_before(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race behind a page that got its old rows back as "rewritten": the tail connects, reads the log
    as the page showed it, and the file is rewritten before the tail compares it with the page."""
    path = root / "tail.jsonl"
    path.write_bytes(log_bytes("tail", ["old prompt one", "old prompt two"]))
    state = WebState(settings=Settings(), registry=Registry([str(root)]))
    entry = state.entry("tail")
    size, rows = path.stat().st_size, len(transcript(state, entry).rows)
    mark = page_mark(state, "tail", size)
    tail = Tail(state, entry, strings_for(None), OPEN)
    before = state.registry.log("tail")
    read_log, read = state.registry.log, []

    def read_then_rewritten(key: str) -> SessionLog | None:
        log = read_log(key)  # the log as the page showed it
        read.append(log)
        rewrite_in_place(path, log_bytes("tail", ["new prompt one", "new prompt two", "new prompt three"]))
        return log

    monkeypatch.setattr(state.registry, "log", read_then_rewritten)
    assert tail.safely(lambda: tail.start(rows, size, mark)) == []  # nothing of what is no longer there
    monkeypatch.undo()
    assert before is not None and read[0] is before, "the tail read the log as the page showed it"
    (notice,) = [m for m in tail.safely(tail.follow) if m.startswith("event: notice")]
    assert "data-live-rewritten" in notice and "new prompt three" in notice and "old prompt" not in notice


def test_a_log_that_shrank_replaces_the_open_page_rows(server: str, root: Path) -> None:
    path = root / "tail.jsonl"
    with live_tail(server, "tail") as stream:
        # written over, then cut short: a poll between the two reads the log not yet cut (its bytes the same, its
        # time new) and may send its rows again; the page must end with the log as it was left. (A known race is
        # left: a tail that starts while the file is cut may send the old header, then the new rows with none.)
        rewrite_in_place(path, log_bytes("tail", ["old prompt one"]))
        for _ in range(3):
            notice = stream.until("notice")
            if "old prompt two" not in parse(notice).get_text():
                break
        head = stream.until("facts")
    assert one(notice, "[data-live-rewritten]")
    assert "old prompt two" not in parse(notice).get_text()
    facts = httpx.get(f"{server}/api/sessions/tail").json()
    assert facts["turns"] == 1
    assert f"{facts['events']} events" in text(head, "[data-session-facts] .facts")


def test_a_log_rewritten_with_another_session_no_longer_answers_for_the_old_key(server: str, root: Path) -> None:
    path = root / "tail.jsonl"
    assert httpx.get(f"{server}/api/sessions/tail").json()["id"] == "tail"
    with live_tail(server, "tail") as stream:
        rewrite_in_place(path, log_bytes("other", ["old prompt one", "old prompt two", "a third"]))
        notice = stream.until("notice")
    assert one(notice, "[data-live-gone]")
    assert attrs(notice, "a[data-live-now]", "href") == ["/sessions/other"]
    assert httpx.get(f"{server}/api/sessions/tail").status_code == 404
    assert httpx.get(f"{server}/sessions/tail").status_code == 404
    other = httpx.get(f"{server}/api/sessions/other").json()
    assert other["id"] == "other" and other["header"]["id"] == "other"


@pytest.mark.parametrize("change", ["deleted", "emptied"])
def test_a_deleted_or_emptied_log_answers_404_at_once_and_the_open_page_is_told(
    server: str, root: Path, change: str
) -> None:
    path = root / "tail.jsonl"
    httpx.get(f"{server}/api/sessions/tail").raise_for_status()  # read once, so the server holds it
    with live_tail(server, "tail") as stream:
        if change == "deleted":
            path.unlink()
        else:
            path.write_bytes(b"")
        notice = stream.until("notice")
        assert one(notice, "[data-live-gone]")
        for url in ("/sessions/tail", "/sessions/tail/facts", "/sessions/tail/rows", "/sessions/tail/events/0"):
            page = httpx.get(f"{server}{url}")
            assert page.status_code == 404, url
            assert page.headers["content-type"].startswith("text/html") and one(page.text, "[data-missing]")
        for url in ("/api/sessions/tail", "/api/sessions/tail/rows", "/api/sessions/tail/events/0"):
            answer = httpx.get(f"{server}{url}")
            assert answer.status_code == 404 and answer.json() == {"detail": "no session 'tail'"}, url
        # the log comes back: the open page gets its rows again
        path.write_bytes(log_bytes("tail", ["back again"]))
        notice = stream.until("notice")
    assert one(notice, "[data-live-rewritten]") and "back again" in parse(notice).get_text()
    assert httpx.get(f"{server}/api/sessions/tail").status_code == 200


def test_the_open_page_header_redrawn_by_a_turn_keeps_its_times_and_cost(server: str, root: Path) -> None:
    """The live tail redraws the header the page was rendered with: every part of it, not the counts alone."""
    page = httpx.get(f"{server}/sessions/tail").text
    shown = {part: one(page, f"[data-session-facts] [{part}]") for part in ("data-session-timing", "data-session-cost")}
    before = log_bytes("tail", ["old prompt one", "old prompt two"])
    grown = log_bytes("tail", ["old prompt one", "old prompt two", "a third prompt"])
    assert grown.startswith(before)
    with live_tail(server, "tail") as stream:
        # appended, as dsh writes a turn (a rewrite would be seen emptied first, now and then, and the page told so)
        with (root / "tail.jsonl").open("ab") as f:
            f.write(grown[len(before) :])
        head = stream.until("facts")
    assert "3 turns" in text(head, "[data-session-facts] .facts")
    for part, before in shown.items():
        assert one(head, f"[data-session-facts] [{part}]") is not None, f"{part} left the header: {before}"
