"""Corpus logs written as zstd artifacts and SQLite stores read back event for event."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from dsh_inspect.history.session import load_session
from dsh_inspect.log.sources import discover

from tests.conftest import CORPUS
from tests.support.logs import fixture_events, load_path, stored_events
from tests.support.writers import batches_of, new_store, write_jsonl, write_sqlite_session, write_zstd

pytestmark = pytest.mark.corpus

LOGS = sorted(p for p in (CORPUS / "sessions").rglob("*.jsonl") if p.stat().st_size > 200) if CORPUS.is_dir() else []


def _without_time(events: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "time"} for e in events]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(CORPUS / "sessions")))
def test_corpus_log_survives_jsonl_zstd_and_sqlite(corpus_dir: Path, tmp_path: Path, path: Path) -> None:
    fixture = load_path(path)
    header, events = fixture_events(path)
    if not events:
        pytest.skip("header-only fixture")
    strict = {
        "type": "session",
        "version": 0,
        "id": header["id"],
        "createdAt": 1_790_000_000_000,
        "cwd": "/work/project",
        "delegationDepth": 0,
    }
    batches = batches_of(events, 7)
    plain = load_path(write_jsonl(tmp_path / "plain/session.jsonl", strict, batches))
    zstd = load_path(write_zstd(tmp_path / "zstd/session.jsonl.zstd", strict, batches))
    conn = new_store(tmp_path / "store.sqlite")
    write_sqlite_session(conn, strict, batches)
    conn.close()
    (sqlite_source,) = discover([str(tmp_path / "store.sqlite")]).sources
    sqlite = load_session(sqlite_source)

    assert (plain.carrier, zstd.carrier, sqlite.carrier) == ("jsonl", "jsonl-zstd", "sqlite")
    reference = stored_events(plain)
    assert _without_time(reference) == _without_time(stored_events(fixture))
    for log in (plain, zstd, sqlite):
        assert log.verdict.category == "accepted", (log.carrier, log.verdict)
        assert stored_events(log) == reference, log.carrier
        assert [m.id for m in log.history_at()] == [m.id for m in fixture.history_at()]
    for log in (fixture, plain, zstd, sqlite):
        # scattered events read a stretch at a time (a comparison's messages) read as each alone does
        picked = sorted({*range(0, log.event_count, 3), *log.surface_ops})
        assert list(log.raw_events_at(picked)) == [log.raw_event(seq) for seq in picked], log.carrier


def test_a_large_data_value_is_stored_as_a_zstd_blob_and_read_back(corpus_dir: Path, tmp_path: Path) -> None:
    _, events = fixture_events(corpus_dir / "sessions/examples/acp-agent/tests/snapshots/fs-read/session.jsonl")
    big = next(e for e in events if e["type"] == "tool/result")
    big["data"]["message"]["content"][0]["content"] = [{"type": "text", "text": "line of a long file\n" * 2000}]
    strict = {"type": "session", "version": 0, "id": "big", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}
    conn = new_store(tmp_path / "s.sqlite")
    write_sqlite_session(conn, strict, [events])
    blob_rows = conn.execute("SELECT seq FROM events WHERE typeof(data) = 'blob'").fetchall()
    conn.close()
    assert (big["seq"],) in blob_rows
    (source,) = discover([str(tmp_path / "s.sqlite")]).sources
    log = load_session(source)
    assert log.verdict.category == "accepted"
    text = log.event(big["seq"]).message.content[0].content[0].text
    assert len(text.encode()) > 4096 and text.startswith("line of a long file")


def test_an_sqlite_store_with_many_sessions_lists_them_all(corpus_dir: Path, tmp_path: Path) -> None:
    conn = new_store(tmp_path / "many.sqlite")
    names = ["text-turn", "fs-read", "cancel"]
    for name in names:
        _, events = fixture_events(corpus_dir / f"sessions/examples/acp-agent/tests/snapshots/{name}/session.jsonl")
        write_sqlite_session(conn, {"id": name, "version": 0, "createdAt": 5, "cwd": "/w"}, [events])
    conn.close()
    found = discover([str(tmp_path / "many.sqlite")])
    assert sorted(s.member for s in found.sources) == sorted(names)
    assert all(load_session(s).verdict.category == "accepted" for s in found.sources)
    # read-only: the store file is not changed by reading it
    assert sqlite3.connect(tmp_path / "many.sqlite").execute("PRAGMA user_version").fetchone()[0] == 17
