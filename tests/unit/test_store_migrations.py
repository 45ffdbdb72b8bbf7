"""The embedded catalog's schema is numbered steps applied at start (app/store/migrations/sqlite/), never by hand."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from dsh_inspect.store import UploadStore
from dsh_inspect.store.schema import migrations

from tests.support.uploads import jsonl_bytes, put

FIRST_SCHEMA = """
CREATE TABLE uploads (digest TEXT PRIMARY KEY, name TEXT NOT NULL, size INTEGER NOT NULL, carrier TEXT NOT NULL,
  media INTEGER NOT NULL, uploaded_at INTEGER NOT NULL) STRICT;
CREATE TABLE upload_sessions (digest TEXT NOT NULL REFERENCES uploads(digest) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL, kind TEXT NOT NULL, member TEXT, session_id TEXT, header TEXT, verdict TEXT NOT NULL,
  PRIMARY KEY (digest, ordinal)) STRICT;
INSERT INTO uploads VALUES ('%s', 'old.jsonl', 3, 'jsonl', 0, 1);
INSERT INTO upload_sessions VALUES ('%s', 0, 'jsonl', NULL, 'old', NULL, 'accepted');
PRAGMA user_version = 1;
"""


def test_a_catalog_of_the_first_schema_is_migrated_and_keeps_its_uploads(tmp_path: Path) -> None:
    digest = "a" * 64
    (tmp_path / "blobs" / "aa").mkdir(parents=True)
    (tmp_path / "blobs" / "aa" / digest).write_bytes(b"old")
    with sqlite3.connect(tmp_path / "catalog.sqlite3") as conn:
        conn.executescript(FIRST_SCHEMA % (digest, digest))
    store = UploadStore(tmp_path)
    assert [u.name for u in store.uploads()] == ["old.jsonl"]
    with sqlite3.connect(tmp_path / "catalog.sqlite3") as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (len(migrations("sqlite")),)
    before = store.catalog.version()
    put(store, jsonl_bytes("new"), "new.jsonl")
    assert store.catalog.version() > before, "an upload moves the version other processes watch"


def test_a_catalog_written_by_a_newer_release_is_refused(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "catalog.sqlite3") as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(RuntimeError, match="schema 99 is newer"):
        UploadStore(tmp_path)
