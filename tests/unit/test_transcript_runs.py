"""Long runs of like events as one run row (issue 15 item 4): a million tiny events cost no row each,
and every event is still shown, found and counted."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from dsh_inspect.history import transcript
from dsh_inspect.history.transcript import RUN_MIN, Row, each_row, run_rows, transcript_rows
from dsh_inspect.sessions.session_search import row_searchable, row_shown

from tests.support.bombs import tiny_records_jsonl
from tests.support.builders import LogBuilder, header
from tests.support.logs import load_path


def write(tmp_path: Path, builder: LogBuilder) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(), *builder.events]))
    return path


def rows_of(path: Path) -> list[Row]:
    return transcript_rows(load_path(path))[1]


def without_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Row]:
    """The rows as they were before runs: a row per event."""
    with monkeypatch.context() as m:
        m.setattr(transcript, "RUN_MIN", 10**9)
        return rows_of(path)


def like_events(b: LogBuilder, count: int, type_: str = "x/future", **envelope: object) -> None:
    for i in range(count):
        b.add(type_, {"n": i}, **envelope)


def test_a_long_run_of_unknown_events_is_one_row_that_holds_each_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = LogBuilder()
    b.turn(1, "before")
    first = len(b.events)
    like_events(b, 100, ignorable=True)
    b.turn(2, "after")
    path = write(tmp_path, b)
    assert load_path(path).verdict.accepted

    rows = rows_of(path)
    runs = [r for r in rows if r.count > 1]
    assert [(r.kind, r.seq, r.count, r.key) for r in runs] == [("unknown", first, 100, f"seq-{first}-{first + 99}")]
    assert list(each_row(rows)) == without_runs(path, monkeypatch), "each row of a run is the row it was"
    assert [r.seq for r in run_rows(runs[0], 98)] == [first + 98, first + 99]


def test_plain_events_of_one_type_run_too_and_a_different_type_starts_another(tmp_path: Path) -> None:
    b = LogBuilder()
    like_events(b, 70, "session/title")  # a known type no row kind takes: plain `event` rows
    like_events(b, 80, "x/future", ignorable=True)
    rows = rows_of(write(tmp_path, b))
    assert [(r.kind, r.seq, r.count) for r in rows] == [("event", 0, 70), ("unknown", 70, 80)]


def test_a_run_shorter_than_the_threshold_stays_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = LogBuilder()
    b.turn(1)
    like_events(b, RUN_MIN - 1, ignorable=True)
    path = write(tmp_path, b)
    rows = rows_of(path)
    assert all(r.count == 1 for r in rows)
    assert rows == without_runs(path, monkeypatch)


def test_findings_inside_a_run_split_it_and_show_where_they_lie(tmp_path: Path) -> None:
    """The tiny-records log: each of the first 1,000 `{}` lines has its two listed findings before it, so
    those stay rows; the rest is one run; every event is covered once and every finding is a row."""
    path = tiny_records_jsonl(tmp_path / "tiny.jsonl", 5_000)
    log = load_path(path)
    rows = transcript_rows(log)[1]
    runs = [r for r in rows if r.count > 1]
    assert [(r.kind, r.seq, r.count) for r in runs] == [("unknown", 1000, 4000)]
    assert [r.seq for r in each_row(rows) if r.diagnostic is None] == list(range(5000))
    assert len([r for r in rows if r.kind == "diagnostic"]) == len(log.diagnostics)
    assert len(rows) < 3_100, "no row per event"


def test_a_run_finds_the_words_of_any_of_its_rows(tmp_path: Path) -> None:
    b = LogBuilder()
    for i in range(100):
        b.add("session/title", {"title": f"title number {i}"})
    path = write(tmp_path, b)
    readable, rows = transcript_rows(load_path(path))
    [run] = rows
    assert "title number 57" in row_shown(readable, run, words_only=True).text
    assert "title number 99" in row_searchable(readable, run).text
    tiny = tiny_records_jsonl(tmp_path / "tiny.jsonl", 1_200)  # past the findings listed for each line
    readable, rows = transcript_rows(load_path(tiny))
    [run] = [r for r in rows if r.count > 1]
    assert '"seq":1100,' in row_searchable(readable, run).raw, "a run's raw JSON holds each of its events"


def test_rows_outside_dsh_view_run_apart_from_those_inside_it(tmp_path: Path) -> None:
    b = LogBuilder()
    like_events(b, 70, ignorable=True)
    path = write(tmp_path, b)
    with path.open("ab") as f:
        f.write(b"{not json\n")
        for i in range(70):
            f.write(orjson.dumps({"type": "x/future", "seq": 71 + i, "time": 1, "data": {}, "ignorable": True}) + b"\n")
    rows = rows_of(path)
    runs = [(r.key, r.count, r.outside is not None) for r in rows if r.count > 1]
    assert runs[0] == ("seq-0-69", 70, False)
    assert len(runs) == 2 and runs[1][2] and runs[1][0].startswith("outside-"), runs
