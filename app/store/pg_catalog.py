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
from typing import TYPE_CHECKING, Any

from .catalog import Upload, uploads_of
from .pg_connections import Connections
from .schema import pending

if TYPE_CHECKING:
    import psycopg

# the key of the lock a start holds while it migrates (any constant no digest's lock can take: those are
# hashes in the two-key space)
_MIGRATING = 0x647368_2D696E  # "dsh-in"
_COLUMNS = (
    "SELECT u.digest, u.name, u.size, u.carrier, u.media, u.uploaded_at, "
    "s.ordinal, s.kind, s.member, s.session_id, s.header, s.verdict "
    "FROM uploads u LEFT JOIN upload_sessions s ON s.digest = u.digest "
)


class PostgresCatalog:
    def __init__(self, url: str) -> None:
        self.url = url
        self._connections = Connections(url)
        self._connection = self._connections.connection
        with self._connection() as conn:
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
    def _locked(self, conn: psycopg.Connection[Any], digest: str) -> Iterator[None]:
        """The digest's advisory lock, held across transactions; a dead process's goes with its connection."""
        conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (digest,))
        try:
            yield
        finally:
            if not conn.closed:
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (digest,))

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
                "WITH page AS (SELECT * FROM uploads ORDER BY uploaded_at DESC, digest DESC LIMIT %s) "
                "SELECT u.digest, u.name, u.size, u.carrier, u.media, u.uploaded_at, "
                "s.ordinal, s.kind, s.member, s.session_id, s.header, s.verdict "
                "FROM page u LEFT JOIN upload_sessions s ON s.digest = u.digest "
                "ORDER BY u.uploaded_at DESC, u.digest DESC, s.ordinal",
                (limit,),
            ).fetchall()
        return uploads_of(rows)

    def publish(self, upload: Upload, store_blob: Callable[[], None], drop_blob: Callable[[], None]) -> Upload | None:
        with self._connection() as conn, self._locked(conn, upload.digest):
            current = _get(conn, upload.digest)
            if current is not None:
                return current
            store_blob()
            try:
                with conn.transaction():
                    insert(conn, upload)
                    conn.execute("UPDATE catalog_state SET version = version + 1")
            except BaseException:
                drop_blob()
                raise
        return None

    def remove(self, digest: str, drop_blob: Callable[[], None]) -> bool:
        with self._connection() as conn, self._locked(conn, digest):
            with conn.transaction():
                removed = conn.execute("DELETE FROM uploads WHERE digest = %s", (digest,)).rowcount > 0
                if removed:
                    conn.execute("UPDATE catalog_state SET version = version + 1")
            if removed:
                drop_blob()  # under the lock: nobody publishes these bytes again meanwhile
        return removed

    def sweep(self, blobs: Iterable[str], drop_blob: Callable[[str], None]) -> None:
        with self._connection() as conn:
            known = {d for (d,) in conn.execute("SELECT digest FROM uploads")}
            for digest in [d for d in blobs if d not in known]:
                with self._locked(conn, digest):  # it may be an upload being published right now
                    if _get(conn, digest) is None:
                        drop_blob(digest)


def _get(conn: psycopg.Connection[Any], digest: str) -> Upload | None:
    rows = conn.execute(_COLUMNS + "WHERE u.digest = %s ORDER BY s.ordinal", (digest,)).fetchall()
    uploads = uploads_of(rows)
    return uploads[0] if uploads else None


def insert(conn: psycopg.Connection[Any], upload: Upload) -> None:
    conn.execute(
        "INSERT INTO uploads VALUES (%s, %s, %s, %s, %s, %s)",
        (upload.digest, upload.name, upload.size, upload.carrier, upload.media, upload.uploaded_at),
    )
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO upload_sessions VALUES (%s, %s, %s, %s, %s, %s, %s)",
            [(s.digest, s.ordinal, s.kind, s.member, s.session_id, s.header_json, s.verdict) for s in upload.sessions],
        )
