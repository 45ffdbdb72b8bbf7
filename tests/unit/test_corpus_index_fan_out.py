"""Indexing on every core (`FanOut`): the sessions read by a process pool are indexed exactly as they are
when read here, and a few stale sessions are still read here, by the reader given. Two first searches at once
run one pool; a pool that breaks leaves the rest to this process; a file that changes under its read waits for
the next search. A large log is read by the server's background process (`Elsewhere`) and indexed the same."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import orjson
import pytest
from dsh_inspect.sessions import search_index as corpus_index
from dsh_inspect.sessions.priority import Elsewhere
from dsh_inspect.sessions.registry import Entry, Registry
from dsh_inspect.sessions.search_index import (
    FAN_OUT_FROM,
    CorpusIndex,
    FanOut,
    Query,
    bring_up_to_date,
    read_afresh,
)

from tests.support.builders import LogBuilder, header, large_session


def _rows(index: CorpusIndex) -> list[tuple[object, ...]]:
    """Every row the index holds, with its session, by session and key."""
    return index._db.execute(
        "SELECT s.identity, s.events, s.title, r.key, r.signature, r.settled, r.anchor, r.kind, r.form, r.tool, "
        "r.error, r.seq, t.text FROM rows r JOIN sources s ON s.id = r.source JOIN row_text t ON t.rowid = r.id "
        "ORDER BY s.identity, r.key"
    ).fetchall()


def test_the_corpus_read_on_every_core_is_indexed_as_read_here(tmp_path: Path, corpus_dir: Path) -> None:
    entries = Registry([str(corpus_dir)]).entries()
    assert len(entries) >= FAN_OUT_FROM  # else the pool is never taken
    here, pooled = CorpusIndex(tmp_path / "here.sqlite3"), CorpusIndex(tmp_path / "pooled.sqlite3")
    bring_up_to_date(here, entries, read_afresh)
    told: list[int] = []
    indexed = bring_up_to_date(pooled, entries, read_afresh, lambda n, total, e: told.append(n), FanOut(2))
    assert indexed == len(entries) and told == list(range(1, len(entries) + 1))
    assert _rows(pooled) == _rows(here)
    sources = [e.source for e in entries]
    for q in ("the", "error", "模块", "ok"):
        assert pooled.query(Query(q), sources) == here.query(Query(q), sources)
    assert pooled.query(Query(errors=True), sources) == here.query(Query(errors=True), sources)
    assert bring_up_to_date(pooled, entries, read_afresh, fan_out=FanOut(2)) == 0  # each held at its version


def test_a_few_stale_sessions_are_read_here_by_the_reader_given(tmp_path: Path) -> None:
    for n in range(3):
        path = tmp_path / f"logs/s{n}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        log = LogBuilder()
        log.turn(1, f"prompt of session {n}")
        path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(f"s{n}"), *log.events]))
    registry = Registry([str(tmp_path / "logs")])
    reads: list[str] = []

    def read(entry: Entry):  # type: ignore[no-untyped-def]
        reads.append(entry.key)
        return read_afresh(entry)

    index = CorpusIndex(tmp_path / "index.sqlite3")
    assert bring_up_to_date(index, registry.entries(), read, fan_out=FanOut(2)) == 3
    assert sorted(reads) == sorted(e.key for e in registry.entries())
    assert index.query(Query("prompt of session 2"), [e.source for e in registry.entries()]).total == 1


def _write_sessions(folder: Path, count: int, prompt: str = "prompt of session") -> Registry:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        log = LogBuilder()
        log.turn(1, f"{prompt} {n}")
        (folder / f"s{n}.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(f"s{n}"), *log.events]))
    return Registry([str(folder)])


@pytest.mark.slow  # a pool of reading processes, started
def test_two_first_searches_at_once_index_each_session_once(tmp_path: Path) -> None:
    registry = _write_sessions(tmp_path / "logs", FAN_OUT_FROM + 6)
    index = CorpusIndex(tmp_path / "index.sqlite3")
    indexed: list[int] = []
    searches = [
        threading.Thread(
            target=lambda: indexed.append(bring_up_to_date(index, registry.entries(), read_afresh, fan_out=FanOut(2)))
        )
        for _ in range(2)
    ]
    for search in searches:
        search.start()
    for search in searches:
        search.join()
    assert sorted(indexed) == [len(registry.entries())] * 2  # both found them stale; the second waited, read none
    keys = [
        row[0] for row in index._db.execute("SELECT s.identity || r.key FROM rows r JOIN sources s ON s.id = r.source")
    ]
    assert len(keys) == len(set(keys)) > 0
    assert index.query(Query("prompt of session 7"), [e.source for e in registry.entries()]).total == 1


def test_a_reading_process_that_dies_leaves_the_rest_to_be_read_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = _write_sessions(tmp_path / "logs", FAN_OUT_FROM)

    def dies(*args: object) -> None:
        raise BrokenProcessPool("a reading process was killed")

    monkeypatch.setattr(corpus_index, "_index_on_every_core", dies)
    index = CorpusIndex(tmp_path / "index.sqlite3")
    assert bring_up_to_date(index, registry.entries(), read_afresh, fan_out=FanOut(2)) == FAN_OUT_FROM
    assert index.query(Query("prompt of session"), [e.source for e in registry.entries()]).sessions == FAN_OUT_FROM


@pytest.mark.parametrize("write_rows", [corpus_index.WRITE_ROWS, 2])
def test_a_file_that_changes_while_its_words_are_read_is_left_for_the_next_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_rows: int
) -> None:
    """A prompt too long to be kept decoded, rewritten in place with another event after the read and before its
    words are read: that session waits for the next search, and the others are indexed. So too when its rows are
    written a few at a time (`write_rows` 2, as a long log's are), their words read as they go."""
    monkeypatch.setattr(corpus_index, "WRITE_ROWS", write_rows)
    registry = _write_sessions(tmp_path / "logs", 3, prompt="long " * 2000 + "prompt of session")
    sources = [e.source for e in registry.entries()]

    def read_then_rewrite(entry: Entry):  # type: ignore[no-untyped-def]
        found = read_afresh(entry)
        if entry.key == "s1":
            assert found is not None and found[0] is not None
            found[0].log._kept = None  # as a page's read, which keeps nothing: its events are read again
            path = Path(entry.source.path)
            lines = path.read_bytes().splitlines(keepends=True)
            at = next(i for i, line in enumerate(lines) if b'"user/message"' in line)
            other = orjson.dumps({**orjson.loads(lines[at]), "type": "x/y", "data": {}})
            lines[at] = other + b" " * (len(lines[at]) - len(other) - 1) + b"\n"
            path.write_bytes(b"".join(lines))
        return found

    index = CorpusIndex(tmp_path / "index.sqlite3")
    bring_up_to_date(index, registry.entries(), read_then_rewrite)
    assert index.query(Query("prompt of session"), sources).sessions == 2
    assert len(index.versions()) == 2
    assert bring_up_to_date(index, registry.entries(), read_afresh) == 1  # read again, as it is now
    assert len(index.versions()) == 3 and index.query(Query("prompt of session"), sources).sessions == 2


def test_a_large_log_is_read_by_the_background_process_and_indexed_as_read_here(tmp_path: Path) -> None:
    large_session(tmp_path / "logs", "large")
    registry = _write_sessions(tmp_path / "logs", 2)
    entries = registry.entries()
    here = CorpusIndex(tmp_path / "here.sqlite3")
    bring_up_to_date(here, entries, read_afresh)
    reads: list[str] = []

    def read(entry: Entry):  # type: ignore[no-untyped-def]
        reads.append(entry.key)
        return read_afresh(entry)

    elsewhere = Elsewhere()
    away = CorpusIndex(tmp_path / "away.sqlite3")
    assert bring_up_to_date(away, entries, read, fan_out=FanOut(1, elsewhere=elsewhere)) == 3
    assert sorted(reads) == ["s0", "s1"]  # the large one was not read by this process's reader
    assert _rows(away) == _rows(here)
    assert away.query(Query("large result 7"), [e.source for e in entries]).sessions == 1
    # the process is another, and niced below this one, so the requests it serves come first
    assert elsewhere.run(os.getpid) != os.getpid()
    if sys.platform == "linux":
        assert elsewhere.run(os.getpriority, os.PRIO_PROCESS, 0) > os.getpriority(os.PRIO_PROCESS, 0)


class _WritingMeanwhile(Elsewhere):
    """The background process, and each time it is given work, another process's writer (a connection of its own
    to the same index file) trying the index's write lock while that work is under way."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path, self.others_wrote = path, list[bool]()

    def run(self, work, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        other = sqlite3.connect(self.path, timeout=0.5, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            self.others_wrote.append(True)
        except sqlite3.OperationalError:  # "database is locked": held by the pass that asked for this work
            self.others_wrote.append(False)
        finally:
            other.close()
        return super().run(work, *args, **kwargs)


def test_no_writer_waits_while_a_large_log_is_read_in_the_background(tmp_path: Path) -> None:
    """Reading a large log takes the background process seconds; another process's index worker and a deleted
    upload's `forget` must not wait that long for the write lock, nor the searches waiting for them."""
    large_session(tmp_path / "logs", "large")
    entries = _write_sessions(tmp_path / "logs", 2).entries()
    elsewhere = _WritingMeanwhile(tmp_path / "index.sqlite3")
    index = CorpusIndex(elsewhere.path)
    assert bring_up_to_date(index, entries, read_afresh, fan_out=FanOut(1, elsewhere=elsewhere)) == 3
    assert elsewhere.others_wrote == [True]
    assert index.query(Query("large result 7"), [e.source for e in entries]).sessions == 1
