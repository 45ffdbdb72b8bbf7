"""The upload catalog: one SQLite file (WAL, synchronous=FULL) naming every
published blob and the sessions it holds.

Writers take SQLite's write lock (`BEGIN IMMEDIATE`) and keep it while they
publish or remove the blob, so across threads and processes a blob and its
row come and go together.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..log.sources import Kind

SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS uploads (
  digest      TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  size        INTEGER NOT NULL,
  carrier     TEXT NOT NULL,
  media       INTEGER NOT NULL,
  uploaded_at INTEGER NOT NULL
) STRICT""",
    """CREATE TABLE IF NOT EXISTS upload_sessions (
  digest     TEXT NOT NULL REFERENCES uploads(digest) ON DELETE CASCADE,
  ordinal    INTEGER NOT NULL,
  kind       TEXT NOT NULL,
  member     TEXT,
  session_id TEXT,
  header     TEXT,
  verdict    TEXT NOT NULL,
  PRIMARY KEY (digest, ordinal)
) STRICT""",
)


@dataclass(frozen=True, slots=True)
class StoredSession:
    digest: str
    ordinal: int
    kind: Kind
    member: str | None
    session_id: str | None
    header_json: str | None  # kept as text: each reader gets its own dict
    verdict: str  # as read when uploaded; the session page reads it again

    @property
    def header(self) -> dict[str, Any] | None:
        value = orjson.loads(self.header_json) if self.header_json else None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class Upload:
    digest: str
    name: str
    size: int
    carrier: Kind
    media: int  # images kept beside the logs (an export ZIP's media/)
    uploaded_at: int  # ms since the epoch
    sessions: tuple[StoredSession, ...]


# an `uploads` row (digest, name, size, carrier, media, uploaded_at): its table is STRICT, and carrier
# holds only the Kind that `insert` wrote
_UploadRow = tuple[str, str, int, Kind, int, int]


class Catalog:
    def __init__(self, path: Path) -> None:
        self.path = path
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode = wal")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise RuntimeError(f"{path}: upload catalog schema {version} is newer than this dsh-inspect knows")
            with self.writing(conn):
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect()
        try:
            yield conn
        finally:
            conn.close()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    @contextmanager
    def writing(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """One write transaction holding the lock for its whole body."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @staticmethod
    def insert(conn: sqlite3.Connection, upload: Upload) -> None:
        conn.execute(
            "INSERT INTO uploads VALUES (?, ?, ?, ?, ?, ?)",
            (upload.digest, upload.name, upload.size, upload.carrier, upload.media, upload.uploaded_at),
        )
        conn.executemany(
            "INSERT INTO upload_sessions VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(s.digest, s.ordinal, s.kind, s.member, s.session_id, s.header_json, s.verdict) for s in upload.sessions],
        )

    @staticmethod
    def remove(conn: sqlite3.Connection, digest: str) -> bool:
        return conn.execute("DELETE FROM uploads WHERE digest = ?", (digest,)).rowcount > 0

    def get(self, digest: str, conn: sqlite3.Connection | None = None) -> Upload | None:
        uploads = self._select(conn, "WHERE u.digest = ?", (digest,))
        return uploads[0] if uploads else None

    def all(self) -> list[Upload]:
        return self._select(None, "", ())

    def _select(self, conn: sqlite3.Connection | None, where: str, args: tuple[Any, ...]) -> list[Upload]:
        query = (
            "SELECT u.digest, u.name, u.size, u.carrier, u.media, u.uploaded_at, "
            "s.ordinal, s.kind, s.member, s.session_id, s.header, s.verdict "
            f"FROM uploads u LEFT JOIN upload_sessions s ON s.digest = u.digest {where} "
            "ORDER BY u.uploaded_at, u.digest, s.ordinal"
        )
        if conn is None:
            with self.connection() as own:
                rows = own.execute(query, args).fetchall()
        else:
            rows = conn.execute(query, args).fetchall()
        grouped: dict[str, tuple[_UploadRow, list[StoredSession]]] = {}
        for row in rows:
            _, sessions = grouped.setdefault(row[0], (row[:6], []))
            if row[6] is not None:
                sessions.append(StoredSession(row[0], *row[6:]))
        return [Upload(*h, tuple(s)) for h, s in grouped.values()]

    def digests(self, conn: sqlite3.Connection) -> set[str]:
        return {d for (d,) in conn.execute("SELECT digest FROM uploads")}
