"""The team catalog: PostgreSQL, at a plain `postgresql://user@host:port/db` URL (libpq's own form, so
`PGPASSWORD` and `~/.pgpass` work as usual).

Every process of a team server talks to it: each add and delete is one transaction that also raises
`catalog_state.version`, so a process reading that one row knows at once whether to read the list again.
Two writers of one digest serialize on a session-level advisory lock keyed by it; different digests never
wait for each other. Migrations (`migrations/postgresql/`) run at start under a global advisory lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .catalog import (
    NEEDED,
    SELECT_UPLOADS,
    SESSION_COLUMNS,
    UPLOAD_COLUMNS,
    BaseGone,
    Upload,
    UploadPage,
    labels_text,
    placeholders,
    session_rows,
    upload_row,
    uploads_of,
    with_labels,
)
from .pg_connections import DEFAULT_WAITS, Connections, Waits
from .pg_notices import CHANNEL, CatalogNotices
from .schema import pending

if TYPE_CHECKING:
    import psycopg

# the key of the lock a start holds while it migrates (any constant no digest's lock can take: those are
# hashes in the two-key space)
_MIGRATING = 0x647368_2D696E  # "dsh-in"
_COLUMNS = SELECT_UPLOADS + "FROM uploads u LEFT JOIN upload_sessions s ON s.digest = u.digest "


class PostgresCatalog:
    def __init__(self, url: str, waits: Waits = DEFAULT_WAITS) -> None:
        self.url = url
        self.waits = waits  # the search index in the same database waits as long (team_search_index.py)
        self._connections = Connections(url, "catalog", waits)
        self._connection = self._connections.connection
        self.connection = self._connection  # for the access records kept in the same database (pg_access.py)
        self.ping = self._connections.ping
        self._notices: CatalogNotices | None = None
        with self._connection() as conn, self._connections.unbounded(conn):  # another start may be migrating
            self._migrate(conn)

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATING,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
            for step in pending("postgresql", row[0] if row else 0, self.url.rsplit("@", 1)[-1]):
                with conn.transaction():
                    for statement in step.statements:
                        conn.execute(statement.encode())  # no parameters: the file's text, as written
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (step.version, step.name)
                    )
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATING,))

    @contextmanager
    def _locked(self, conn: psycopg.Connection[Any], digest: str | None) -> Iterator[None]:
        """The digest's advisory lock, held across transactions; a dead process's goes with its connection.
        Nothing for None. Session-level locks nest: a lock already held is taken again and released once."""
        if digest is None:
            yield
            return
        with self._connections.unbounded(conn):  # the holder may be storing a large upload
            conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (digest,))
        try:
            yield
        finally:
            if not conn.closed:
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (digest,))

    def heard(self) -> int | None:
        """How many changes other processes (or this one) told of since this process began listening; None
        while it is not (the caller asks `version` instead). The listener starts on the first call."""
        if self._notices is None:
            self._notices = CatalogNotices(self.url, self.waits.connect)
        return self._notices.heard()

    def version(self) -> int:
        with self._connection() as conn:
            row = conn.execute("SELECT version FROM catalog_state").fetchone()
        return int(row[0]) if row else 0

    def get(self, digest: str) -> Upload | None:
        with self._connection() as conn:
            return _get(conn, digest)

    def all(self) -> list[Upload]:
        with self._connection() as conn:
            rows = conn.execute(_COLUMNS + "ORDER BY u.uploaded_at, u.digest, s.ordinal").fetchall()
        return uploads_of(rows)

    def newest(self, limit: int) -> list[Upload]:
        # the page first, through `uploads_newest`, then its sessions by key: `digest IN (page)` would have the
        # planner hash the page against a scan of every upload
        with self._connection() as conn:
            rows = conn.execute(
                "WITH page AS (SELECT * FROM uploads WHERE NOT hidden ORDER BY uploaded_at DESC, digest DESC LIMIT %s) "
                + SELECT_UPLOADS
                + "FROM page u LEFT JOIN upload_sessions s ON s.digest = u.digest "
                "ORDER BY u.uploaded_at DESC, u.digest DESC, s.ordinal",
                (limit,),
            ).fetchall()
        return uploads_of(rows)

    def page(self, limit: int, before: tuple[int, str] | None = None) -> UploadPage:
        # as `newest`, the page first through `uploads_newest` (a row comparison is a range of it), then its
        # sessions by key; its counts in the same snapshot
        older, cursor = ("AND (uploaded_at, digest) < (%s, %s) ", before) if before else ("", ())
        with self._connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            rows = conn.execute(
                f"WITH page AS (SELECT * FROM uploads WHERE NOT hidden {older}"
                "ORDER BY uploaded_at DESC, digest DESC LIMIT %s) "
                + SELECT_UPLOADS
                + "FROM page u LEFT JOIN upload_sessions s ON s.digest = u.digest "
                "ORDER BY u.uploaded_at DESC, u.digest DESC, s.ordinal",
                (*cursor, limit + 1),
            ).fetchall()
            shown = "SELECT count(*) FROM uploads WHERE NOT hidden"
            total = _count(conn, shown, ())
            newer = _count(conn, shown + " AND (uploaded_at, digest) >= (%s, %s)", before) if before else 0
        uploads = uploads_of(rows)
        return UploadPage(tuple(uploads[:limit]), total, newer, len(uploads) > limit)

    def publish(self, upload: Upload, store_blob: Callable[[], None], drop_blob: Callable[[], None]) -> Upload | None:
        """`Catalog.publish`; the same bytes again add their `labels` to the upload catalogued (which is
        answered with them), and a hidden upload shown again keeps its labels and gains theirs."""
        # an extension's tail is locked too: the sweep takes a blob's lock before it drops an unneeded one
        with self._connection() as conn, self._locked(conn, upload.digest), self._locked(conn, upload.tail):
            current = _get(conn, upload.digest)
            if current is not None and current.hidden:  # the same bytes again, after a user deleted them
                with conn.transaction():
                    conn.execute(
                        "UPDATE uploads SET hidden = false, uploaded_at = %s, labels = %s WHERE digest = %s",
                        (upload.uploaded_at, labels_text(with_labels(current.labels, upload.labels)), upload.digest),
                    )
                    _bump(conn)
                return None
            if current is not None:  # the same bytes again: labelled with theirs too (the digest's lock is held)
                labels = with_labels(current.labels, upload.labels)
                if labels != current.labels:
                    with conn.transaction():
                        conn.execute(
                            "UPDATE uploads SET labels = %s WHERE digest = %s", (labels_text(labels), upload.digest)
                        )
                        _bump(conn)
                return replace(current, labels=labels)
            store_blob()
            try:
                with conn.transaction():
                    # the base is locked against a delete until this commits
                    if (
                        upload.base is not None
                        and not conn.execute(
                            "SELECT 1 FROM uploads WHERE digest = %s FOR SHARE", (upload.base,)
                        ).fetchone()
                    ):
                        raise BaseGone(upload.base)
                    insert(conn, upload)
                    _bump(conn)
            except BaseException:
                drop_blob()
                raise
        return None

    def remove(self, digest: str, drop_blob: Callable[[str], None]) -> bool:
        with self._connection() as conn, self._locked(conn, digest):
            with conn.transaction():
                removed = _get(conn, digest, lock=True)
                if removed is None or removed.hidden:
                    return False
                if conn.execute("SELECT 1 FROM uploads WHERE base = %s LIMIT 1", (digest,)).fetchone():
                    conn.execute("UPDATE uploads SET hidden = true WHERE digest = %s", (digest,))
                    _bump(conn)
                    return True
                conn.execute("DELETE FROM uploads WHERE digest = %s", (digest,))
                _bump(conn)
            self._drop_unneeded(conn, removed.blob, drop_blob)
            below = removed.base
            while below is not None:  # each hidden base no upload extends any more goes too
                below = self._remove_hidden(conn, below, drop_blob)
        return True

    def _remove_hidden(
        self, conn: psycopg.Connection[Any], digest: str, drop_blob: Callable[[str], None]
    ) -> str | None:
        """Remove `digest` when it is hidden and no upload extends it (an extension being published holds
        its base FOR SHARE); the base below it to look at next, or None."""
        with self._locked(conn, digest):
            with conn.transaction():
                found = _get(conn, digest, lock=True)
                if found is None or not found.hidden:
                    return None
                if conn.execute("SELECT 1 FROM uploads WHERE base = %s LIMIT 1", (digest,)).fetchone():
                    return None
                conn.execute("DELETE FROM uploads WHERE digest = %s", (digest,))
                _bump(conn)
            self._drop_unneeded(conn, found.blob, drop_blob)
            return found.base

    def _drop_unneeded(self, conn: psycopg.Connection[Any], blob: str, drop_blob: Callable[[str], None]) -> None:
        with self._locked(conn, blob):  # nobody publishes these bytes again meanwhile
            if not conn.execute(NEEDED.format("%(b)s"), {"b": blob}).fetchone():
                drop_blob(blob)

    def sweep(self, blobs: Iterable[str], drop_blob: Callable[[str], None]) -> None:
        with self._connection() as conn:
            known = {d for (d,) in conn.execute("SELECT digest FROM uploads WHERE tail IS NULL")}
            known |= {t for (t,) in conn.execute("SELECT tail FROM uploads WHERE tail IS NOT NULL")}
            for digest in [d for d in blobs if d not in known]:
                self._drop_unneeded(conn, digest, drop_blob)  # it may be an upload being published right now

    def stored_bytes(self) -> int:
        with self._connection() as conn:
            return _count(conn, "SELECT coalesce(sum(size), 0) FROM uploads", ())

    def holding(self, session_id: str) -> list[Upload]:
        with self._connection() as conn:
            rows = conn.execute(
                _COLUMNS + "WHERE u.digest IN (SELECT digest FROM upload_sessions WHERE session_id = %s) "
                "ORDER BY u.uploaded_at, u.digest, s.ordinal",
                (session_id,),
            ).fetchall()
        return uploads_of(rows)


def _get(conn: psycopg.Connection[Any], digest: str, *, lock: bool = False) -> Upload | None:
    if lock:  # the upload's row, against an extension of it being inserted meanwhile
        conn.execute("SELECT 1 FROM uploads WHERE digest = %s FOR UPDATE", (digest,))
    rows = conn.execute(_COLUMNS + "WHERE u.digest = %s ORDER BY s.ordinal", (digest,)).fetchall()
    uploads = uploads_of(rows)
    return uploads[0] if uploads else None


def _count(conn: psycopg.Connection[Any], query: str, args: tuple[Any, ...]) -> int:
    row = conn.execute(query, args).fetchone()
    return int(row[0]) if row else 0


def _bump(conn: psycopg.Connection[Any]) -> None:
    conn.execute("UPDATE catalog_state SET version = version + 1")
    conn.execute(f"NOTIFY {CHANNEL}")  # sent when the transaction commits (pg_notices.py)


def insert(conn: psycopg.Connection[Any], upload: Upload) -> None:
    conn.execute(f"INSERT INTO uploads ({UPLOAD_COLUMNS}) VALUES ({placeholders('%s')})", upload_row(upload))
    with conn.cursor() as cur:
        cur.executemany(
            f"INSERT INTO upload_sessions ({SESSION_COLUMNS}) VALUES ({placeholders('%s', SESSION_COLUMNS)})",
            session_rows(upload),
        )
