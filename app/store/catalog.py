"""The upload catalog's records, and the embedded catalog: one SQLite file (WAL, synchronous=FULL) naming
every published blob and the sessions it holds.

Writers take SQLite's write lock (`BEGIN IMMEDIATE`) and keep it while they
publish or remove the blob, so across threads and processes a blob and its
row come and go together. The schema is `migrations/sqlite/` (schema.py).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import orjson

from ..log.sources import Kind
from .schema import pending


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


class SqliteCatalog:
    """The embedded catalog: one SQLite file. Several processes on one machine share it safely: WAL lets
    readers go on while one writer holds the write lock, and a writer waits for it (busy timeout) instead of
    failing; every add and delete raises `catalog_state.version` in its own transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()  # each thread's connection for the version check, asked per request
        with self.connection() as conn:
            conn.execute("PRAGMA journal_mode = wal")
            with self.writing(conn):  # one process migrates; the others wait for the lock, then find it done
                reached = conn.execute("PRAGMA user_version").fetchone()[0]
                for step in pending("sqlite", reached, str(path)):
                    for statement in step.statements:
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {step.version}")

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

    def version(self) -> int:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        version: int = conn.execute("SELECT version FROM catalog_state").fetchone()[0]
        return version

    def publish(self, upload: Upload, store_blob: Callable[[], None], drop_blob: Callable[[], None]) -> Upload | None:
        with self.connection() as conn, self.writing(conn):
            current = self._get(conn, upload.digest)
            if current is not None:
                return current
            store_blob()
            try:
                _insert(conn, upload)
                _bump(conn)
            except BaseException:
                drop_blob()
                raise
        return None

    def remove(self, digest: str, drop_blob: Callable[[], None]) -> bool:
        with self.connection() as conn:
            with self.writing(conn):
                removed = conn.execute("DELETE FROM uploads WHERE digest = ?", (digest,)).rowcount > 0
                if removed:
                    _bump(conn)
            if removed:
                with self.writing(conn):
                    if self._get(conn, digest) is None:
                        drop_blob()
        return removed

    def sweep(self, blobs: Iterable[str], drop_blob: Callable[[str], None]) -> None:
        with self.connection() as conn, self.writing(conn):
            known = {d for (d,) in conn.execute("SELECT digest FROM uploads")}
            for digest in list(blobs):
                if digest not in known:
                    drop_blob(digest)

    def get(self, digest: str) -> Upload | None:
        with self.connection() as conn:
            return self._get(conn, digest)

    @staticmethod
    def _get(conn: sqlite3.Connection, digest: str) -> Upload | None:
        uploads = _select(conn, "WHERE u.digest = ?", (digest,))
        return uploads[0] if uploads else None

    def all(self) -> list[Upload]:
        with self.connection() as conn:
            return _select(conn, "", ())

    def newest(self, limit: int) -> list[Upload]:
        with self.connection() as conn:
            return _select(conn, _NEWEST, (limit,), newest_first=True)


# the newest uploads through the `uploads_newest` index; their sessions join afterwards
_NEWEST = "WHERE u.digest IN (SELECT digest FROM uploads ORDER BY uploaded_at DESC, digest DESC LIMIT ?)"


def _insert(conn: sqlite3.Connection, upload: Upload) -> None:
    conn.execute(
        "INSERT INTO uploads VALUES (?, ?, ?, ?, ?, ?)",
        (upload.digest, upload.name, upload.size, upload.carrier, upload.media, upload.uploaded_at),
    )
    conn.executemany(
        "INSERT INTO upload_sessions VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(s.digest, s.ordinal, s.kind, s.member, s.session_id, s.header_json, s.verdict) for s in upload.sessions],
    )


def _bump(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE catalog_state SET version = version + 1")


def _select(conn: sqlite3.Connection, where: str, args: tuple[Any, ...], *, newest_first: bool = False) -> list[Upload]:
    order = "u.uploaded_at DESC, u.digest DESC" if newest_first else "u.uploaded_at, u.digest"
    query = (
        "SELECT u.digest, u.name, u.size, u.carrier, u.media, u.uploaded_at, "
        "s.ordinal, s.kind, s.member, s.session_id, s.header, s.verdict "
        f"FROM uploads u LEFT JOIN upload_sessions s ON s.digest = u.digest {where} "
        f"ORDER BY {order}, s.ordinal"
    )
    return uploads_of(conn.execute(query, args).fetchall())


def uploads_of(rows: Iterable[Sequence[Any]]) -> list[Upload]:
    """Uploads from joined rows (an upload's columns, then one session's or NULLs), in the rows' order."""
    grouped: dict[str, tuple[_UploadRow, list[StoredSession]]] = {}
    for row in rows:
        _, sessions = grouped.setdefault(row[0], (cast(_UploadRow, tuple(row[:6])), []))
        if row[6] is not None:
            sessions.append(StoredSession(row[0], *row[6:]))
    return [Upload(*h, tuple(s)) for h, s in grouped.values()]
