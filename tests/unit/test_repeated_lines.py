"""A fixture line repeated byte for byte (two million `{}` lines from a kilobyte of zstd, issue 15) is gathered
by the scan and, once each copy only says what the one before it said, counted by the reader, not read copy by
copy. What a person sees must not change: each check compares a log of repeated lines with its twin, whose
lines alternate two values of one field (the same lengths, the same findings), read line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dsh_inspect.history.session import SessionLog, load_session
from dsh_inspect.log.diagnostics import FINDINGS_LISTED, Location
from dsh_inspect.log.jsonl import JsonlScan
from dsh_inspect.log.plaintext import FilePlaintext
from dsh_inspect.log.records import RepeatedLines
from dsh_inspect.log.sources import RecordChanged, discover

from tests.support.builders import header
from tests.support.writers import header_line

COPIES = 2 * FINDINGS_LISTED + 500  # past the listing cap of every finding a copy gives


def write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(header_line(header("repeats")) + b"".join(line + b"\n" for line in lines))
    return path


def repeated_and_twin(tmp_path: Path, template: bytes, count: int = COPIES) -> tuple[Path, Path]:
    """`template` (holding `@`) with `@` as 1 on every line, and its twin alternating 1 and 2."""
    same = write(tmp_path / "same.jsonl", [template.replace(b"@", b"1")] * count)
    twin = write(tmp_path / "twin.jsonl", [template.replace(b"@", b"12"[i % 2 : i % 2 + 1]) for i in range(count)])
    return same, twin


def read(path: Path, **kwargs: Any) -> SessionLog:
    return load_session(discover([str(path)]).sources[0], **kwargs)


def said(log: SessionLog) -> list[tuple[str, str, str, int | None, int | None]]:
    """Every finding as a person reads it, but for the file's name."""
    return [
        (d.code, d.severity, d.message.replace(log.source.label, "FILE"), d.location.line, d.location.offset)
        for d in log.diagnostics
    ]


def place(location: Location | None) -> tuple[int | None, int | None] | None:
    return None if location is None else (location.line, location.offset)


def assert_read_alike(same: SessionLog, twin: SessionLog) -> None:
    assert (same.verdict.category, same.verdict.reason.replace(same.source.label, "FILE")) == (
        twin.verdict.category,
        twin.verdict.reason.replace(twin.source.label, "FILE"),
    )
    assert place(same.verdict.location) == place(twin.verdict.location)
    assert said(same) == said(twin)
    assert list(same.types) == list(twin.types)
    assert same.event_count == twin.event_count


@pytest.mark.parametrize(
    "template",
    [
        b'{"x":@}',  # no type: unknown, and an envelope whose type is not a string
        b'{"type":"x/unknown","data":@}',  # an unknown type, seq and time synthesized
        b'{"type":"x/unknown","seq":3,"time":5,"data":@}',  # a seq that continues no log: a tail dsh drops
        b'{"type":"x/unknown","time":5,"data":@}',  # a time of its own
        b'{"type":"x/unknown","ignorable":true,"data":@}',  # ignorable: read copy by copy
        b'{"type":"assistant/chunk","data":{"turn":0,"step":0,"text":"@"}}',  # a type rules read: copy by copy
        b'{"type":"x/unknown","data":"\xff@"}',  # bad UTF-8: a warning for each line, so never gathered
    ],
)
def test_repeated_lines_say_just_what_the_same_lines_read_one_by_one_say(tmp_path: Path, template: bytes) -> None:
    same, twin = repeated_and_twin(tmp_path, template)
    assert_read_alike(read(same), read(twin))


def test_the_scan_gathers_the_copies_of_a_line_and_yields_each_as_its_own_record(tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl", [b"{}"] * 5 + [b'{"a":1}'] + [b"{}\r"] * 3)
    scan = JsonlScan(FilePlaintext(str(path)))
    scan.read_header()
    items = list(scan.runs())
    # a fixture's one-object lines come as a run, up to a line that repeats the one before it
    assert [type(item).__name__ for item in items] == [
        "EventRun",
        "RepeatedLines",
        "EventRun",
        "Record",  # a line with a CR before its LF is read on its own
        "RepeatedLines",
    ]
    copies = items[1]
    assert isinstance(copies, RepeatedLines) and copies.count == 4
    records = list(copies.records())
    assert [r.location.line for r in records] == [3, 4, 5, 6]
    assert [r.events for r in records] == [[{"seq": s, "time": 0}] for s in (1, 2, 3, 4)]
    text = path.read_bytes()
    assert [text[r.start : r.start + r.length] for r in records] == [b"{}"] * 4
    assert isinstance(items[4], RepeatedLines)
    crlf = list(items[4].records())
    assert [text[r.start : r.start + r.length] for r in crlf] == [b"{}"] * 2  # the CR is not the record's
    assert [r.events[0]["seq"] for r in crlf] == [7, 8]


def test_findings_past_the_cap_are_counted_from_the_first_unlisted_copy(tmp_path: Path) -> None:
    log = read(write(tmp_path / "log.jsonl", [b"{}"] * COPIES))
    unlisted = [d for d in log.diagnostics if d.code == "unlisted"]
    first_unlisted = 2 + FINDINGS_LISTED  # line 2 holds the first copy
    assert [d.message for d in unlisted] == [
        f"{COPIES - FINDINGS_LISTED:,} more {code} findings, from line {first_unlisted:,} on, are not listed: "
        f"a session lists the first {FINDINGS_LISTED:,} of each kind"
        for code in ("unknown-type", "validation")
    ]
    assert log.event_count == COPIES and set(log.types) == {""}
    assert log.verdict.location is not None and log.verdict.location.line == 2


def test_a_first_screen_stops_inside_the_copies(tmp_path: Path) -> None:
    same, twin = repeated_and_twin(tmp_path, b'{"x":@}')
    first = read(same, events=FINDINGS_LISTED + 7)
    assert first.partial and first.event_count == FINDINGS_LISTED + 7
    assert said(first) == said(read(twin, events=FINDINGS_LISTED + 7))


def test_a_log_grown_by_more_copies_reads_on_as_if_read_whole(tmp_path: Path) -> None:
    line = b'{"type":"x/unknown","ignorable":true,"data":1}'  # a log refused is not read on: this one is accepted
    path = write(tmp_path / "log.jsonl", [line] * 1500)
    log = read(path)
    assert log.verdict.accepted
    with path.open("ab") as f:
        f.write((line + b"\n") * 2500)
    assert log.extend()
    assert log.event_count == 4000
    assert_read_alike(log, read(path))


def test_every_copy_reads_back_as_the_event_it_was_read_as(tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl", [b'{"type":"x/unknown","data":[1]}'] * COPIES + [b'{"type":"x/other"}'])
    log = read(path)
    events = list(log.raw_events(range(log.event_count)))
    assert events == [log.raw_event(seq) for seq in range(log.event_count)]
    assert [e["seq"] for e in events] == list(range(COPIES + 1))
    assert events[-1] == {"type": "x/other", "seq": COPIES, "time": 0}


def test_a_copy_changed_on_disk_since_it_was_read_is_told_not_shown_as_it_was(tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl", [b'{"x":1}'] * COPIES)
    log = read(path)
    text = bytearray(path.read_bytes())
    last = text.rfind(b'{"x":1}')
    text[last : last + 7] = b'{"x":2}'  # as long as it was: only its bytes tell
    path.write_bytes(bytes(text))
    assert next(log.raw_events(range(COPIES - 5, COPIES - 4)))["x"] == 1  # a copy before it reads as it did
    with pytest.raises(RecordChanged, match="no longer alike"):
        list(log.raw_events(range(log.event_count)))
