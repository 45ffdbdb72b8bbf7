"""The upload store at archive size (issue 16): 10,000 sessions in the catalog against 1,000.

The catalogs are filled in bulk (their rows written directly, each session's small blob beside it for the
embedded store), not uploaded one by one. Measured side by side in one run, each within 2×:

- the catalog's first page (the 50 newest uploads, read through its index): SQLite, and PostgreSQL when a
  private server starts here (tests/team/servers.py; skipped with a note otherwise);
- a search of the team's index (`PgCorpusIndex.query`: a Chinese phrase said in one session, served by its
  `pg_trgm` index), its rows written directly, ten a session, when PostgreSQL starts here;
- a server's list, first page (`/api/sessions?page=1`), on an embedded store of each size: the catalog is read
  again only when its version moves, so a warm list costs no catalog read at all.

Registered in run.py's GROUPS as `team`.
"""

from __future__ import annotations

import hashlib
import http.client
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
from dsh_inspect.sessions.search_index import Query
from dsh_inspect.store.blobs import fanned
from dsh_inspect.store.catalog import (
    SESSION_COLUMNS,
    UPLOAD_COLUMNS,
    SqliteCatalog,
    StoredSession,
    Upload,
    placeholders,
    session_rows,
    upload_row,
)

from benchmarks.generate import Workloads
from benchmarks.run import Budget, Figure, get, ms, side_by_side
from tests.support.builders import T0, header
from tests.support.process import serve_process
from tests.team.servers import ServerMissing, postgres

SIZES = (1_000, 10_000)
PAGE = 50
ROWS = 10  # index rows a session (a short session's turns, tool calls and results)
PHRASE = "价格以人民币计"  # said in one session of the archive, whatever its size


def archive(n: int) -> list[tuple[Upload, bytes]]:
    """`n` one-session uploads, a minute apart, each with the bytes of a log holding just its header."""
    out = []
    for i in range(n):
        head = header(f"bench-{i:05d}", createdAt=T0 + i * 60_000)
        data = orjson.dumps(head) + b"\n"
        digest = hashlib.sha256(data).hexdigest()
        session = StoredSession(digest, 0, "jsonl", None, head["id"], orjson.dumps(head).decode(), "accepted")
        out.append((Upload(digest, f"{head['id']}.jsonl", len(data), "jsonl", 0, T0 + i * 60_000, (session,)), data))
    return out


def fill_sqlite(data_dir: Path, uploads: list[tuple[Upload, bytes]]) -> SqliteCatalog:
    """An embedded store of these uploads: blob files and catalog rows, written in one transaction."""
    catalog = SqliteCatalog(data_dir / "catalog.sqlite3")
    for upload, data in uploads:
        blob = data_dir / "blobs" / fanned(upload.digest)
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
    with catalog.connection() as conn, catalog.writing(conn):
        conn.executemany(
            f"INSERT INTO uploads ({UPLOAD_COLUMNS}) VALUES ({placeholders('?')})",
            [upload_row(u) for u, _ in uploads],
        )
        conn.executemany(
            f"INSERT INTO upload_sessions ({SESSION_COLUMNS}) VALUES ({placeholders('?', SESSION_COLUMNS)})",
            [row for u, _ in uploads for row in session_rows(u)],
        )
        conn.execute("UPDATE catalog_state SET version = version + 1")
    return catalog


def fill_postgres(url: str, uploads: list[tuple[Upload, bytes]]) -> Any:
    from dsh_inspect.store.pg_catalog import PostgresCatalog

    catalog = PostgresCatalog(url)
    import psycopg

    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.executemany(
            f"INSERT INTO uploads ({UPLOAD_COLUMNS}) VALUES ({placeholders('%s')})",
            [upload_row(u) for u, _ in uploads],
        )
        cur.executemany(
            f"INSERT INTO upload_sessions ({SESSION_COLUMNS}) VALUES ({placeholders('%s', SESSION_COLUMNS)})",
            [row for u, _ in uploads for row in session_rows(u)],
        )
        cur.execute("UPDATE catalog_state SET version = version + 1")
        cur.execute("ANALYZE")
    return catalog


def fill_search(url: str, uploads: list[tuple[Upload, bytes]]) -> Any:
    """The team's search index of these uploads, its rows written directly (as indexing them would)."""
    import psycopg
    from dsh_inspect.sessions.team_search_index import PgCorpusIndex
    from dsh_inspect.store.pg_connections import DEFAULT_WAITS

    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.executemany("INSERT INTO search_uploads VALUES (%s)", [(u.digest,) for u, _ in uploads])
        cur.executemany(
            "INSERT INTO search_sessions (digest, member, title) VALUES (%s, '', %s)",
            [(u.digest, u.name) for u, _ in uploads],
        )
        chains = dict(cur.execute("SELECT digest, chain FROM search_sessions").fetchall())
        with cur.copy(
            "COPY search_rows (chain, key, n, signature, settled, anchor, kind, error, seq, text) FROM STDIN"
        ) as copy:
            for i, (u, _) in enumerate(uploads):
                for n in range(ROWS):
                    said = f"{PHRASE}，不含运费。" if i == 7 and n == 3 else f"ran pytest -q tests/test_{i % 97}.py"
                    text = f"step {n} of session {i}: read src/module_{(i * 7 + n) % 997}.py; {said}"
                    copy.write_row((chains[u.digest], f"r{n}", n, b"", True, f"r{n}", "assistant", False, n, text))
        cur.execute("ANALYZE")
    return PgCorpusIndex(url, DEFAULT_WAITS)


def _pair(name: str, small: Callable[[], object], large: Callable[[], object], runs: int) -> Figure:
    for fn in (small, large):
        fn()  # warm: the first read of each pays for opening and caching, not for the archive's size
    t_small, t_large = side_by_side(small, large, runs)
    return Figure(
        f"{name}: {SIZES[1]:,} sessions vs {SIZES[0]:,}",
        f"{ms(t_large)} vs {ms(t_small)}",
        t_large / t_small,
        Budget("<=", 2.0),
    )


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    del w, out  # the catalogs are made here, not from the shared workloads
    uploads = {n: archive(n) for n in SIZES}
    figures: list[Figure] = []
    notes: list[str] = []
    with ExitStack() as stack:
        dirs = {n: Path(tempfile.mkdtemp(prefix=f"team-{n}-", dir=scratch)) for n in SIZES}
        started = time.perf_counter()
        sqlite = {n: fill_sqlite(dirs[n], uploads[n]) for n in SIZES}
        notes.append(f"filled both embedded stores in {ms(time.perf_counter() - started)}")
        figures.append(
            _pair(
                "catalog first page (SQLite, 50 newest uploads)",
                lambda: sqlite[SIZES[0]].newest(PAGE),
                lambda: sqlite[SIZES[1]].newest(PAGE),
                9 * runs,
            )
        )
        try:
            pg_folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dsh-inspect-pg-")))
            pg = stack.enter_context(postgres(pg_folder))
        except ServerMissing as exc:
            notes.append(f"PostgreSQL figure skipped: {exc}")
        else:
            urls = {n: pg.new_database() for n in SIZES}
            team = {n: fill_postgres(urls[n], uploads[n]) for n in SIZES}
            figures.append(
                _pair(
                    "catalog first page (PostgreSQL, 50 newest uploads)",
                    lambda: team[SIZES[0]].newest(PAGE),
                    lambda: team[SIZES[1]].newest(PAGE),
                    9 * runs,
                )
            )
            started = time.perf_counter()
            index = {n: fill_search(urls[n], uploads[n]) for n in SIZES}
            notes.append(f"filled both search indexes ({ROWS} rows a session) in {ms(time.perf_counter() - started)}")
            asked = Query(q=PHRASE)
            hits = {n: index[n].query(asked).sessions for n in SIZES}
            notes.append(f"the phrase is found in {hits[SIZES[0]]} and {hits[SIZES[1]]} sessions")
            figures.append(
                _pair(
                    "search (PostgreSQL pg_trgm index, a phrase said in one session)",
                    lambda: index[SIZES[0]].query(asked),
                    lambda: index[SIZES[1]].query(asked),
                    9 * runs,
                )
            )
        servers = {n: stack.enter_context(serve_process([], dirs[n])) for n in SIZES}
        conns = {}
        for n, server in servers.items():
            parts = urlsplit(server.url)
            conns[n] = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=300)
            listed = orjson.loads(get(conns[n], "/api/sessions"))
            notes.append(f"{n:,}-session server lists {listed.get('total', len(listed['sessions'])):,} sessions")
        figures.append(
            _pair(
                "server list, first page (/api/sessions?page=1, embedded store, warm)",
                lambda: get(conns[SIZES[0]], "/api/sessions?page=1"),
                lambda: get(conns[SIZES[1]], "/api/sessions?page=1"),
                3 * runs,
            )
        )
        for conn in conns.values():
            conn.close()
    return figures, "; ".join(notes)
