"""A log read for the search index keeps its events as its read parsed them (`load_session(keep_bytes=)`), so
its rows and their words parse nothing twice: the same events either way, a log past the bound read again from
its file, and a growing log read on from storage."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from dsh_inspect.history.session import EVENTS_KEPT, SessionLog, load_session
from dsh_inspect.log.sources import RecordChanged, discover

from tests.support.builders import LogBuilder, header


def lines_of(turns: range) -> list[bytes]:
    b = LogBuilder()
    for n in turns:
        b.turn(n, f"prompt {n}")
    return [orjson.dumps(x) + b"\n" for x in [header("kept"), *b.events]]


def read(path: Path, keep_bytes: int) -> SessionLog:
    return load_session(discover([str(path)]).sources[0], keep_bytes=keep_bytes)


def every_event(log: SessionLog) -> list[object]:
    return [(e.seq, e.type, e.data, e.message) for e in log.events()]


def test_kept_events_are_the_events_read_again(tmp_path: Path) -> None:
    path = tmp_path / "kept.jsonl"
    path.write_bytes(b"".join(lines_of(range(1, 4))))
    plain = read(path, 0)
    kept = read(path, 1 << 20)
    assert kept._kept is not None and len(kept._kept) == kept.stored_count
    assert every_event(kept) == every_event(plain) and kept.verdict == plain.verdict
    path.write_bytes(b"")  # what is kept needs no file: every event is answered from the read
    assert every_event(kept) == every_event(plain)


def test_a_log_past_the_bound_is_read_again_from_its_file(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"".join(lines_of(range(1, 40))))
    log = read(path, 2048)
    assert log._kept is None
    assert every_event(log) == every_event(read(path, 0))


def test_a_growing_log_read_on_keeps_nothing_and_reads_its_new_events(tmp_path: Path) -> None:
    path = tmp_path / "grows.jsonl"
    lines = lines_of(range(1, 5))
    path.write_bytes(b"".join(lines[:10]))
    log = read(path, 1 << 20)
    assert log._kept is not None
    with path.open("ab") as f:
        f.write(b"".join(lines[10:]))
    assert log.extend()
    assert log._kept is None
    assert every_event(log) == every_event(read(path, 0))


def test_a_log_keeping_decoded_events_decodes_each_once_while_it_keeps_them(tmp_path: Path) -> None:
    """The one-file export reads every event for its facts, then again for its rows: past the few a log keeps."""
    path = tmp_path / "twice.jsonl"
    path.write_bytes(b"".join(lines_of(range(1, 40))))
    log = read(path, 0)
    assert log.stored_count > EVENTS_KEPT
    expected = every_event(log)
    with log.keeping_decoded(log.stored_count):
        assert every_event(log) == expected
        path.write_bytes(b"")  # read again now, an event would not decode
        assert every_event(log) == expected
    with pytest.raises(RecordChanged):  # let go: the first events are read from the file again
        log.event(0)
