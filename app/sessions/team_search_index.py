"""Search across the team's uploads: the cross-session index kept in the team catalog's PostgreSQL database.

Every process of a team server searches the same index, so an upload accepted by one is found by all. Rows
are what the SQLite index holds (search_index.py: each transcript row's `shown_text` and its facets), and a
query means the same: one literal phrase, matched as a substring in any case and any script. `ILIKE
'%…%'` does the matching, served by a `pg_trgm` GIN index for phrases of three characters or more (Chinese
included); shorter ones scan, as they do in SQLite.

Uploads are immutable, so an upload is indexed once by whichever process's worker finds it first after it is
catalogued (reading it as a page would, from this machine's read cache), under a transaction-level advisory
lock on its digest, so two processes never write it twice. An upload appending to an indexed one takes over
that one's rows (a session's `chain`) and writes only the rows the append added or changed
(docs/decisions/0024-push.md). Its rows reference its catalog row
(`ON DELETE CASCADE`): the delete that removes an upload removes its hits, for every process at once
(docs/decisions/0009-team-store.md).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from itertools import groupby
from typing import TYPE_CHECKING, Any

from ..store.pg_connections import Connections, Waits
from .registry import Entry
from .search_index import (
    COUNTED,
    HITS,
    QUERY_SECONDS,
    Found,
    Hit,
    Query,
    Reader,
    SearchTooCostly,
    SessionRows,
    counted_found,
    like_pattern,
    session_rows,
    snippet,
)

if TYPE_CHECKING:
    import psycopg


def upload_identity(entry: Entry) -> str:
    """What names an uploaded session in the team's index, the same in every process: its upload and member."""
    return _identity(entry.upload or "", entry.source.member or "")


def _identity(digest: str, member: str) -> str:
    return f"{digest}\0{member}"


def storable(text: str) -> str:
    """`text` as PostgreSQL keeps text: a NUL as U+FFFD, a lone surrogate (JSON may escape one) as `?`."""
    return text.replace("\0", "\ufffd").encode("utf-8", "replace").decode("utf-8")


class PgCorpusIndex:
    """The team's search index of uploaded sessions, in the catalog's database at `url`; thread-safe."""

    def __init__(self, url: str, waits: Waits) -> None:
        import psycopg  # the `team` extra, there when the team catalog is

        self._psycopg = psycopg
        self.url = url  # migrated by the catalog (0002_search_index.sql) before the web layer opens this
        self._connections = Connections(url, "index", waits)
        self._connection = self._connections.connection
        self._lock = threading.Lock()  # one indexer per process: two searches must not read one upload twice
        self._listing = threading.Lock()  # `_unlisted`, which a query reads while a pass indexes
        self._basis: int | None = None  # the catalog version `_indexed` was checked at
        self._indexed: set[str] = set()
        # (digest, member) of each session the index held at `_basis` that this process did not list
        self._unlisted: list[tuple[str, str]] = []

    def close(self) -> None:
        self._connections.close()

    # -- keeping it up to date ------------------------------------------------------------

    def bring_up_to_date(self, entries: Sequence[Entry], read: Reader) -> int:
        """Index each upload of `entries` not indexed yet (by any process); how many this call found unindexed
        and now holds (written here, or by another process while this one read it). Which are indexed is asked
        again only when the catalog's version moved: a warm search asks one number. Then too, the rows of
        uploads that now hold only earlier uploads of the sessions listed go (docs/decisions/0018): nobody
        searches them, and each would have to be left out of every count."""
        wanted = {e.upload for e in entries if e.upload is not None}
        indexed = 0
        with self._lock, self._connection() as conn:
            row = conn.execute("SELECT version FROM catalog_state").fetchone()
            version = int(row[0]) if row else 0
            moved = version != self._basis
            if moved:  # a delete may have taken rows, a re-upload of the same bytes put none back
                self._basis, self._indexed = version, set()
            missing = wanted - self._indexed
            if missing:
                found = conn.execute("SELECT digest FROM search_uploads WHERE digest = ANY(%s)", (list(missing),))
                self._indexed |= {d for (d,) in found}
            unindexed = wanted - self._indexed
            stale = sorted((e for e in entries if e.upload in unindexed), key=_by_upload)
            for digest, sessions in groupby(stale, key=_by_upload):
                if self._index_upload(conn, digest, list(sessions), read):
                    self._indexed.add(digest)
                    indexed += 1
            if moved:
                # after the new uploads, which may take over the rows of an earlier one rather than write them
                self._drop(conn, _earlier(entries) - wanted)
                held = {(d, m) for d, m in conn.execute("SELECT digest, member FROM search_sessions")}
                # what the index holds that this process does not list: few (an upload another process
                # catalogued a moment ago, an earlier upload of a session in a store or ZIP holding current ones)
                unlisted = sorted(held - {(e.upload, e.source.member or "") for e in entries if e.upload})
                with self._listing:
                    self._unlisted = unlisted
        return indexed

    def pending(self, entries: Sequence[Entry]) -> list[Entry]:
        """Those of `entries` whose upload no process has indexed yet, one for each such upload: one query,
        which is also the index's answer to whether it is reachable (raises Unavailable)."""
        wanted = list({e.upload for e in entries if e.upload is not None})
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT w.digest FROM unnest(%s::text[]) AS w(digest) "
                "WHERE NOT EXISTS (SELECT 1 FROM search_uploads u WHERE u.digest = w.digest)",
                (wanted,),
            ).fetchall()
        unindexed = {digest for (digest,) in rows}
        return list({e.upload: e for e in reversed(entries) if e.upload in unindexed}.values())

    def _drop(self, conn: psycopg.Connection[Any], digests: set[str]) -> None:
        """Remove the index rows of these uploads, each under the lock its indexing takes."""
        for digest in sorted(digests):
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (digest,))
                conn.execute("DELETE FROM search_uploads WHERE digest = %s", (digest,))

    def _index_upload(self, conn: psycopg.Connection[Any], digest: str, entries: list[Entry], read: Reader) -> bool:
        """Index one upload's sessions in one transaction; False when it cannot be now (a session unreadable,
        or the upload deleted meanwhile). Read before the lock is taken: a read may stream the blob first. An
        upload appending to an indexed one takes over its rows and writes only those it adds or changes."""
        sessions: list[tuple[str, SessionRows]] = []
        for entry in entries:
            read_now = read(entry)
            if read_now is None:
                return False
            sessions.append((entry.source.member or "", session_rows(read_now[0])))
        row = conn.execute("SELECT base FROM uploads WHERE digest = %s", (digest,)).fetchone()
        base = row[0] if row and len(sessions) == 1 and sessions[0][0] == "" else None
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (digest,))
                if conn.execute("SELECT 1 FROM search_uploads WHERE digest = %s", (digest,)).fetchone():
                    return True  # another process indexed it while this one read it
                conn.execute("INSERT INTO search_uploads VALUES (%s)", (digest,))
                taken = self._take_over(conn, digest, base, sessions[0][1]) if base is not None else False
                if not taken:
                    for member, rows in sessions:
                        found = conn.execute(
                            "INSERT INTO search_sessions (digest, member, title, first_prompt) VALUES (%s, %s, %s, %s) "
                            "RETURNING chain",
                            (digest, member, _stored(rows.title), _stored(rows.first_prompt)),
                        ).fetchone()
                        assert found is not None
                        _write_rows(conn, found[0], rows, range(len(rows.keys)))
        except self._psycopg.errors.ForeignKeyViolation:
            return False  # deleted from the catalog since the list was read: nothing to index
        return True

    @staticmethod
    def _take_over(conn: psycopg.Connection[Any], digest: str, base: str, rows: SessionRows) -> bool:
        """Move the rows of `base`'s session to `digest`, which appends to it: its settled rows whose signature is
        the same stay as they are, the others go, and the rows they became or the append added are written.
        False when `base` holds no indexed session (never indexed, or another append took its rows)."""
        found = conn.execute(
            "SELECT chain FROM search_sessions WHERE digest = %s AND member = '' FOR UPDATE", (base,)
        ).fetchone()
        if found is None:
            return False
        chain = found[0]
        before = {
            key: (n, bytes(signature), settled)
            for key, n, signature, settled in conn.execute(
                "SELECT key, n, signature, settled FROM search_rows WHERE chain = %s", (chain,)
            )
        }
        now = {key: i for i, key in enumerate(rows.keys)}
        kept = {
            key for key, i in now.items() if key in before and before[key][2] and before[key][1] == rows.signatures[i]
        }
        with conn.cursor() as cur:
            cur.executemany(
                "DELETE FROM search_rows WHERE chain = %s AND key = %s", [(chain, k) for k in before if k not in kept]
            )
            cur.executemany(
                "UPDATE search_rows SET n = %s WHERE chain = %s AND key = %s",
                [(now[k], chain, k) for k in kept if before[k][0] != now[k]],
            )
        _write_rows(conn, chain, rows, [i for key, i in now.items() if key not in kept])
        conn.execute(
            "UPDATE search_sessions SET digest = %s, title = %s, first_prompt = %s WHERE chain = %s",
            (digest, _stored(rows.title), _stored(rows.first_prompt), chain),
        )
        conn.execute("DELETE FROM search_uploads WHERE digest = %s", (base,))  # an earlier state: searched no more
        return True

    # -- asking it --------------------------------------------------------------------------

    def query(self, query: Query, limit: int = HITS, only: Collection[Entry] | None = None) -> Found:
        """The rows matching `query`, counted up to `COUNTED`, the first `limit` of those in session then row order,
        of the sessions this process listed when it last brought the index up to date alone: the index may also
        hold a few it does not list, which no count may include. With `only`, of those uploaded sessions alone
        (what a reader may see)."""
        if query.empty:
            return Found([], 0, 0)
        with self._listing:
            unlisted = self._unlisted
        where: list[str] = ["TRUE"]
        args: list[object] = []
        if only is not None:
            where.append("(s.digest, s.member) IN (SELECT * FROM unnest(%s::text[], %s::text[]))")
            args += [[e.upload or "" for e in only], [e.source.member or "" for e in only]]
        if unlisted:
            where.append("(s.digest, s.member) NOT IN (SELECT * FROM unnest(%s::text[], %s::text[]))")
            args += [[d for d, _ in unlisted], [m for _, m in unlisted]]
        needle = query.needle
        if needle:
            where.append("r.text ILIKE %s ESCAPE '\\'")
            args.append(like_pattern(needle))
        facets, facet_args = query.facet_clauses("%s")
        where += facets
        args += facet_args
        joined = "FROM search_rows r JOIN search_sessions s ON s.chain = r.chain WHERE " + " AND ".join(where)
        with self._connection() as conn, conn.transaction(), stopped_at_deadline():
            # one snapshot for both queries: a pass rewrites a grown session's rows under the same keys meanwhile
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            # a search stopped at QUERY_SECONDS, for this transaction only
            conn.execute(f"SET LOCAL statement_timeout = {int(QUERY_SECONDS * 1000)}")
            # the first COUNTED + 1 matches as the plan finds them (no sort of every match: see search_index.query)
            counted = conn.execute(
                f"SELECT r.chain, r.key, s.digest, s.member, r.seq, r.n {joined} LIMIT %s", [*args, COUNTED + 1]
            ).fetchall()
            first = sorted(counted[:COUNTED], key=lambda c: (c[2], c[3], c[4], c[5]))[:limit]
            found = conn.execute(
                "SELECT r.chain, r.key, s.digest, s.member, s.title, s.first_prompt, r.anchor, r.kind, r.seq, r.step, "
                "r.at, r.form, r.tool, r.error, r.text FROM search_rows r JOIN search_sessions s ON s.chain = r.chain "
                "WHERE (r.chain, r.key) IN (SELECT * FROM unnest(%s::bigint[], %s::text[]))",
                [[c[0] for c in first], [c[1] for c in first]],
            ).fetchall()
        place = {(c[0], c[1]): n for n, c in enumerate(first)}
        hits = [
            Hit(
                _identity(digest, member),
                title,
                prompt,
                anchor,
                kind,
                seq,
                step,
                at,
                form,
                tool,
                error,
                snippet(text, needle),
            )
            for _, _, digest, member, title, prompt, anchor, kind, seq, step, at, form, tool, error, text in sorted(
                found, key=lambda f: place[(f[0], f[1])]
            )
        ]
        return counted_found(hits, [c[0] for c in counted])


@contextmanager
def stopped_at_deadline() -> Iterator[None]:
    """PostgreSQL's `statement_timeout` cancelling a search, said as SearchTooCostly."""
    import psycopg

    try:
        yield
    except psycopg.errors.QueryCanceled:
        raise SearchTooCostly() from None


def _write_rows(conn: psycopg.Connection[Any], chain: int, rows: SessionRows, which: Sequence[int]) -> None:
    """Rows `which` of a session's read, as `search_rows` holds them, their words worked out as written."""
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY search_rows (chain, key, n, signature, settled, anchor, kind, form, tool, error, seq, step, at, "
            "text) FROM STDIN"
        ) as copy,
    ):
        for i in which:
            form, tool, error, at, text = rows.words[i]
            copy.write_row(
                (
                    chain,
                    rows.keys[i],
                    i,
                    rows.signatures[i],
                    rows.settled[i],
                    rows.anchors[i],
                    rows.kinds[i],
                    form,
                    tool,
                    error,
                    rows.seqs[i],
                    _stored(rows.steps[i]),
                    at,
                    storable(text),
                )
            )


def _stored(text: str | None) -> str | None:
    """A text as PostgreSQL can hold it (`storable`), or None for none."""
    return storable(text) if text else None


def _earlier(entries: Sequence[Entry]) -> set[str]:
    """The uploads of the sessions `entries` list that hold them as they stood before their newest upload."""
    return {u.digest for e in entries if e.versions is not None for v in e.versions.versions for u in v} - {
        e.versions.current for e in entries if e.versions is not None
    }


def _by_upload(entry: Entry) -> str:
    return entry.upload or ""
