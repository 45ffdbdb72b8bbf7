"""The upload catalog's records, and the embedded catalog: one SQLite file (WAL, synchronous=FULL) naming
every published blob and the sessions it holds.

Writers take SQLite's write lock (`BEGIN IMMEDIATE`) and keep it while they
publish or remove the blob, so across threads and processes a blob and its
row come and go together. The schema is `migrations/sqlite/` (schema.py).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
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
    events: int | None = None  # as stored when uploaded; None for uploads catalogued before it was kept

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
    base: str | None = None  # the upload whose whole bytes this one's start with, kept once (decision 0018)
    tail: str | None = None  # with a base: the blob of the bytes after the base's
    hidden: bool = False  # deleted by a user, kept as the base of another upload: listed nowhere
    uploaded_by: str | None = None  # the actor that published it (docs/decisions/0020-access-control.md)
    # what its senders labelled it with (`push --label`, a CI job's id), first given first: the same bytes sent
    # again add theirs; an extension carries its base's too
    labels: tuple[str, ...] = ()

    @property
    def blob(self) -> str:
        """The blob this upload's row keeps: its tail, or its own bytes when stored whole."""
        return self.tail or self.digest


@dataclass(frozen=True, slots=True)
class UploadPage:
    """A page of the uploads a user sees, newest first (`Catalog.page`), and where it lies among them all."""

    uploads: tuple[Upload, ...]
    total: int  # every upload a user sees
    newer: int  # those newer than this page's first: what the pages before it hold
    more: bool  # older ones follow this page's last


class BaseGone(Exception):
    """The upload an extension was to continue was deleted meanwhile: store it whole instead."""


# an `uploads` row (digest, name, size, carrier, media, uploaded_at, base, tail, hidden, uploaded_by, labels): its
# table is STRICT, carrier holds only the Kind that `insert` wrote, and labels a JSON array of strings
_UploadRow = tuple[str, str, int, Kind, int, int, str | None, str | None, int | bool, str | None, str]
UPLOAD_COLUMNS = "digest, name, size, carrier, media, uploaded_at, base, tail, hidden, uploaded_by, labels"
SELECT_UPLOADS = (
    "SELECT u.digest, u.name, u.size, u.carrier, u.media, u.uploaded_at, u.base, u.tail, u.hidden, u.uploaded_by, "
    "u.labels, s.ordinal, s.kind, s.member, s.session_id, s.header, s.verdict, s.events "
)
_FIELDS = len(UPLOAD_COLUMNS.split(","))


MAX_LABELS = 20  # the labels one upload or append may be sent with
LABEL_CHARS = 100  # a label's characters, at most
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def label_problem(label: str) -> str | None:
    """Why `label` cannot label an upload (never saying it back: it may be long); None when it can."""
    if not 1 <= len(label) <= LABEL_CHARS:
        return f"a label is 1 to {LABEL_CHARS} characters, not {len(label)}"
    if _CONTROL.search(label):
        return "a label holds no control characters"
    return None


def with_labels(labels: Sequence[str], more: Sequence[str]) -> tuple[str, ...]:
    """`labels`, then each of `more` they lack, in order: what an upload is labelled once `more` arrive too."""
    return tuple(dict.fromkeys([*labels, *more]))


def labels_text(labels: Sequence[str]) -> str:
    """Labels as the `labels` column keeps them: a JSON array."""
    return orjson.dumps(list(labels)).decode()


def labels_of(text: str | None) -> tuple[str, ...]:
    """The `labels` column read back: the strings of its array (anything but an array reads as none)."""
    try:
        value = orjson.loads(text or "[]")
    except orjson.JSONDecodeError:
        return ()
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def placeholders(mark: str, columns: str = UPLOAD_COLUMNS) -> str:
    """`VALUES (…)` for each of `columns`, in a driver's mark (`?`, `%s`)."""
    return ", ".join([mark] * len(columns.split(",")))


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

    def ping(self) -> None:
        """One read of the file; raises sqlite3.Error."""
        self.thread_connection().execute("SELECT 1").fetchone()

    def thread_connection(self) -> sqlite3.Connection:
        """This thread's connection for reads asked per request (the version, a token), kept open."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def heard(self) -> int:
        """The catalog's version: processes sharing the file tell each other of a change through it (one row of
        a local file, read in microseconds)."""
        return self.version()

    def version(self) -> int:
        version: int = self.thread_connection().execute("SELECT version FROM catalog_state").fetchone()[0]
        return version

    def publish(self, upload: Upload, store_blob: Callable[[], None], drop_blob: Callable[[], None]) -> Upload | None:
        """`Catalog.publish`; the same bytes again add their `labels` to the upload catalogued (which is
        answered with them), and a hidden upload shown again keeps its labels and gains theirs."""
        with self.connection() as conn, self.writing(conn):
            current = self._get(conn, upload.digest)
            if current is not None and current.hidden:  # the same bytes again, after a user deleted them
                conn.execute(
                    "UPDATE uploads SET hidden = 0, uploaded_at = ?, labels = ? WHERE digest = ?",
                    (upload.uploaded_at, labels_text(with_labels(current.labels, upload.labels)), upload.digest),
                )
                _bump(conn)
                return None
            if current is not None:  # the same bytes again: labelled with theirs too
                labels = with_labels(current.labels, upload.labels)
                if labels != current.labels:
                    conn.execute("UPDATE uploads SET labels = ? WHERE digest = ?", (labels_text(labels), upload.digest))
                    _bump(conn)
                return replace(current, labels=labels)
            if upload.base is not None and self._get(conn, upload.base) is None:
                raise BaseGone(upload.base)
            store_blob()
            try:
                _insert(conn, upload)
                _bump(conn)
            except BaseException:
                drop_blob()
                raise
        return None

    def remove(self, digest: str, drop_blob: Callable[[str], None]) -> bool:
        with self.connection() as conn, self.writing(conn):
            removed = self._get(conn, digest)
            if removed is None or removed.hidden:
                return False
            if conn.execute("SELECT 1 FROM uploads WHERE base = ? LIMIT 1", (digest,)).fetchone():
                conn.execute("UPDATE uploads SET hidden = 1 WHERE digest = ?", (digest,))
                _bump(conn)
                return True
            gone: Upload | None = removed
            while gone is not None:  # the upload, then each hidden base no upload extends any more
                conn.execute("DELETE FROM uploads WHERE digest = ?", (gone.digest,))
                _bump(conn)
                if not _needed(conn, gone.blob):
                    drop_blob(gone.blob)
                below = self._get(conn, gone.base) if gone.base is not None else None
                extended = (
                    below is not None
                    and conn.execute("SELECT 1 FROM uploads WHERE base = ? LIMIT 1", (below.digest,)).fetchone()
                )
                gone = below if below is not None and below.hidden and not extended else None
        return True

    def sweep(self, blobs: Iterable[str], drop_blob: Callable[[str], None]) -> None:
        with self.connection() as conn, self.writing(conn):
            for digest in list(blobs):
                if not _needed(conn, digest):
                    drop_blob(digest)

    def stored_bytes(self) -> int:
        with self.connection() as conn:
            total: int = conn.execute("SELECT coalesce(sum(size), 0) FROM uploads").fetchone()[0]
        return total

    def holding(self, session_id: str) -> list[Upload]:
        with self.connection() as conn:
            return _select(
                conn, "WHERE u.digest IN (SELECT digest FROM upload_sessions WHERE session_id = ?)", (session_id,)
            )

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

    def page(self, limit: int, before: tuple[int, str] | None = None) -> UploadPage:
        shown, args = (_NEWEST, (limit + 1,)) if before is None else (_OLDER, (*before, limit + 1))
        with self.connection() as conn:
            conn.execute("BEGIN")  # one snapshot: the page and its counts agree
            try:
                uploads = _select(conn, shown, args, newest_first=True)
                total = conn.execute(_SHOWN_COUNT).fetchone()[0]
                newer = conn.execute(_SHOWN_COUNT + _NEWER, before).fetchone()[0] if before else 0
            finally:
                conn.execute("COMMIT")
        return UploadPage(tuple(uploads[:limit]), total, newer, len(uploads) > limit)


# the newest uploads a user sees through the `uploads_newest` index; their sessions join afterwards
_NEWEST = (
    "WHERE u.digest IN (SELECT digest FROM uploads WHERE NOT hidden ORDER BY uploaded_at DESC, digest DESC LIMIT ?)"
)


# a later page (`page`): the uploads older than the last shown, through the same index
_OLDER = (
    "WHERE u.digest IN (SELECT digest FROM uploads WHERE NOT hidden AND (uploaded_at, digest) < (?, ?) "
    "ORDER BY uploaded_at DESC, digest DESC LIMIT ?)"
)
_SHOWN_COUNT = "SELECT count(*) FROM uploads WHERE NOT hidden"
_NEWER = " AND (uploaded_at, digest) >= (?, ?)"


def _insert(conn: sqlite3.Connection, upload: Upload) -> None:
    conn.execute(f"INSERT INTO uploads ({UPLOAD_COLUMNS}) VALUES ({placeholders('?')})", upload_row(upload))
    conn.executemany(
        f"INSERT INTO upload_sessions ({SESSION_COLUMNS}) VALUES ({placeholders('?', SESSION_COLUMNS)})",
        session_rows(upload),
    )


SESSION_COLUMNS = "digest, ordinal, kind, member, session_id, header, verdict, events"


def upload_row(upload: Upload) -> tuple[Any, ...]:
    u = upload
    return (
        u.digest,
        u.name,
        u.size,
        u.carrier,
        u.media,
        u.uploaded_at,
        u.base,
        u.tail,
        u.hidden,
        u.uploaded_by,
        labels_text(u.labels),
    )


def session_rows(upload: Upload) -> list[tuple[Any, ...]]:
    return [
        (s.digest, s.ordinal, s.kind, s.member, s.session_id, s.header_json, s.verdict, s.events)
        for s in upload.sessions
    ]


# whether a blob is some row's: an upload stored whole under it, or an extension's tail
NEEDED = "SELECT 1 FROM uploads WHERE (digest = {0} AND tail IS NULL) OR tail = {0} LIMIT 1"


def _needed(conn: sqlite3.Connection, blob: str) -> bool:
    return conn.execute(NEEDED.format(":b"), {"b": blob}).fetchone() is not None


def _bump(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE catalog_state SET version = version + 1")


def _select(conn: sqlite3.Connection, where: str, args: tuple[Any, ...], *, newest_first: bool = False) -> list[Upload]:
    order = "u.uploaded_at DESC, u.digest DESC" if newest_first else "u.uploaded_at, u.digest"
    query = (
        SELECT_UPLOADS + f"FROM uploads u LEFT JOIN upload_sessions s ON s.digest = u.digest {where} "
        f"ORDER BY {order}, s.ordinal"
    )
    return uploads_of(conn.execute(query, args).fetchall())


def uploads_of(rows: Iterable[Sequence[Any]]) -> list[Upload]:
    """Uploads from joined rows (an upload's columns, then one session's or NULLs), in the rows' order."""
    grouped: dict[str, tuple[_UploadRow, list[StoredSession]]] = {}
    for row in rows:
        _, sessions = grouped.setdefault(row[0], (cast(_UploadRow, tuple(row[:_FIELDS])), []))
        if row[_FIELDS] is not None:
            sessions.append(StoredSession(row[0], *row[_FIELDS:]))
    return [Upload(*h[:6], tuple(s), h[6], h[7], bool(h[8]), h[9], labels_of(h[10])) for h, s in grouped.values()]
