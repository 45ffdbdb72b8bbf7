"""A log rewritten in place with only its middle changed (the same inode, as long or longer): the registry,
the open page's live tail and the cross-session index all see the change, as they see any other rewrite
(docs/decisions/0010-rewrite-detection.md)."""

from __future__ import annotations

import io
import os
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from dsh_inspect.access import OPEN
from dsh_inspect.log.diagnostics import Location
from dsh_inspect.log.sources import RecordChanged, SessionSource
from dsh_inspect.sessions import registry as registry_module
from dsh_inspect.sessions.registry import BLOCK, Registry
from dsh_inspect.sessions.search_index import CorpusIndex, Query, bring_up_to_date, read_afresh
from dsh_inspect.settings import Settings
from dsh_inspect.web.present.strings import strings_for
from dsh_inspect.web.present.windows import transcript
from dsh_inspect.web.routes.live import Tail, page_mark
from dsh_inspect.web.state import WebState

from tests.support.builders import LogBuilder, header
from tests.support.rows import flow_rows, one
from tests.support.server import app_client, live_server, twin_rows
from tests.unit.test_reread_checks import changed_line, replace_line, write_log
from tests.web.test_live_rewrites import live_tail

TURNS = 7  # turns of far more bytes than the 4 KiB at each end the old fingerprint sampled
OLD, NEW = b"middle prompt, as first written", b"middle prompt, as written later"


def log_bytes(session_id: str = "tail") -> bytes:
    b = LogBuilder()
    for turn in range(1, TURNS + 1):
        b.turn(turn, OLD.decode() if turn == TURNS // 2 else f"prompt number {turn} " + "padding " * 400)
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *b.events])


def rewrite_middle(path: Path, *, appended: bytes = b"") -> None:
    """The middle prompt's bytes changed in place, nothing else (then `appended`, if any, at the end); the
    mtime moved on, as a second later (a file system's clock may not tick between two quick writes)."""
    data = path.read_bytes()
    at = data.index(OLD)
    assert 8192 < at < len(data) - 8192
    before = path.stat()
    with path.open("r+b") as f:
        f.seek(at)
        f.write(NEW)
        f.seek(0, os.SEEK_END)
        f.write(appended)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    after = path.stat()
    assert after.st_ino == before.st_ino and after.st_size == before.st_size + len(appended)


def shown(registry: Registry, key: str) -> str:
    log = registry.log(key)
    assert log is not None
    return orjson.dumps([log.raw_event(s) for s in range(log.stored_count)]).decode()


def test_the_registry_reads_a_log_whose_middle_changed_afresh(tmp_path: Path) -> None:
    path = tmp_path / "tail.jsonl"
    path.write_bytes(log_bytes())
    registry = Registry([str(tmp_path)])
    assert OLD.decode() in shown(registry, "tail")
    before = registry.log("tail")
    rewrite_middle(path)
    assert registry.log("tail") is not before  # what it found where (its index) is found again
    assert NEW.decode() in shown(registry, "tail") and OLD.decode() not in shown(registry, "tail")


def test_a_middle_change_and_an_append_is_read_afresh_not_read_on(tmp_path: Path) -> None:
    path = tmp_path / "tail.jsonl"
    path.write_bytes(log_bytes())
    registry = Registry([str(tmp_path)])
    before = registry.log("tail")
    assert before is not None
    b = LogBuilder()
    for turn in range(1, TURNS + 2):
        b.turn(turn, f"turn {turn}")
    extra = [e for e in b.events if e["seq"] >= before.stored_count]
    rewrite_middle(path, appended=b"".join(orjson.dumps(e) + b"\n" for e in extra[:1]))
    after = registry.log("tail")
    assert after is not None and after is not before
    assert NEW.decode() in shown(registry, "tail") and OLD.decode() not in shown(registry, "tail")


def every_row(server: str, key: str) -> str:
    """The JSON of every row of session `key`, window by window as the twin pages them."""
    return orjson.dumps(twin_rows(server, key)).decode()


def test_the_open_page_gets_the_rows_of_a_log_whose_middle_changed(tmp_path: Path) -> None:
    path = tmp_path / "tail.jsonl"
    path.write_bytes(log_bytes())
    with live_server([str(tmp_path)]) as server:
        assert OLD.decode() in every_row(server, "tail")
        with live_tail(server, "tail") as stream:
            rewrite_middle(path)
            notice = stream.until("notice")
        assert one(notice, "[data-live-rewritten]")
        flow = " ".join(r.element.get_text(" ") for r in flow_rows(str(one(notice, "[hx-swap-oob]"))))
        assert NEW.decode() in flow and OLD.decode() not in flow  # the rows the page shows anew hold the middle
        rows = every_row(server, "tail")
        assert NEW.decode() in rows and OLD.decode() not in rows


def test_the_search_index_drops_the_rows_of_a_log_whose_middle_changed(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    path = logs / "tail.jsonl"
    path.write_bytes(log_bytes())
    registry = Registry([str(logs)])
    index = CorpusIndex(tmp_path / "search.sqlite3")

    def hits(q: str) -> int:
        registry.refresh()
        bring_up_to_date(index, registry.entries(), read_afresh)
        return len(index.query(Query(q), [e.source for e in registry.entries()]).hits)

    assert hits("as first written") == 1
    rewrite_middle(path)
    assert hits("as first written") == 0
    assert hits("as written later") == 1


def test_an_event_whose_record_changed_under_a_request_answers_gone_then_the_log_as_it_is(tmp_path: Path) -> None:
    """A rewrite the file's version does not show (within one tick of its clock): the record reread is checked."""
    path = tmp_path / "reread.jsonl"
    lines = write_log(path)
    with app_client([str(tmp_path)]) as client:
        assert client.get("/api/sessions/reread/events/0").json()["seq"] == 0  # the log read, event 2 not
        before = path.stat()
        at = replace_line(path, lines, 3, changed_line(lines[3]))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        page = client.get("/sessions/reread/events/2")
        assert page.status_code == 404 and "text/html" in page.headers["content-type"]
        assert f"byte {at}: the record holds other events than were read there" in page.text
        assert "x/y" not in page.text
        # the stale copy was dropped: the log is read as it is now, by the page and its JSON twin alike
        assert client.get("/api/sessions/reread/events/2").json()["type"] == "x/y"
        assert client.get("/sessions/reread/events/2").status_code == 200


def test_an_open_page_whose_log_changed_under_a_reread_gets_its_rows_again_with_the_notice(tmp_path: Path) -> None:
    path = tmp_path / "reread.jsonl"
    write_log(path)
    state = WebState(settings=Settings(), registry=Registry([str(tmp_path)]))
    entry = state.entry("reread")
    tail = Tail(state, entry, strings_for(None), OPEN)
    size = path.stat().st_size
    shown = len(transcript(state, entry).rows)
    assert tail.safely(lambda: tail.start(shown, size, page_mark(state, "reread", size))) == []
    held = state.registry.log("reread")

    def reread_changed() -> list[str]:
        raise RecordChanged(Location(file=entry.source.label, offset=0), "the record holds other events")

    assert tail.safely(reread_changed) == []  # nothing sent of what could not be read
    assert state.registry.log("reread") is not held  # the stale copy was dropped: read afresh
    sent = tail.safely(tail.follow)
    assert sent and sent[0].startswith("event: notice") and "data-live-rewritten" in sent[0]


class Piecemeal(io.FileIO):
    """A file whose reads come back a few bytes at a time, as an unbuffered read may (a network file system)."""

    def readinto(self, buffer: Any) -> int:
        return super().readinto(memoryview(buffer)[:1000])

    def read(self, size: int | None = -1) -> bytes:
        return super().read(1000 if size is None or size < 0 else min(size, 1000))


def test_a_fingerprint_is_of_every_byte_read_though_reads_come_back_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Else a log's mark would not match its own bytes, and an open page would be told it was rewritten."""
    path = tmp_path / "short-reads.jsonl"
    data = os.urandom(2 * BLOCK + 12_345)
    path.write_bytes(data)
    monkeypatch.setattr(registry_module, "open", lambda p, mode, buffering: Piecemeal(p, "r"), raising=False)
    for size in (len(data) - 100, BLOCK, 500):
        expected = zlib.crc32(data[:size]).to_bytes(4, "big") + size.to_bytes(8, "big")
        assert registry_module.fingerprint(SessionSource(str(path), "jsonl"), size) == expected, size
