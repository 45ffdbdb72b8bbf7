"""Search across sessions (issue 14): indexing W1's root against the validating read of the same files, and
a query on it through a real server.

Indexing reads each of W1's 1,002 sessions, builds its rows and writes the words each shows into a fresh
SQLite FTS5 index (app/sessions/search_index.py); it should cost at most three times what reading and
validating those files alone does. Indexing reads on every core (`FanOut`: one reading process per core,
this one writing the index), as a first search may; the validating read it is measured against stays in
one process, the baseline, so the ratio compares wall-clock times for the same files (on a one-core
machine, the serial path's; docs/decisions/0008-cross-session-search.md). Each indexing run starts its
pool; the first run of a process also starts the fork server the pools fork from (about half a second),
which the median of the runs leaves out. A query (`/api/search`, the server's index up to date) should be
answered in under 50 ms, median. Registered in run.py's GROUPS as `search`.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from urllib.parse import quote

import orjson
from dsh_inspect.history.session import load_session
from dsh_inspect.sessions.registry import Registry
from dsh_inspect.sessions.search_index import CorpusIndex, FanOut, bring_up_to_date, read_afresh

from benchmarks.generate import Workloads
from benchmarks.run import Budget, Figure, get, ms, serve, side_by_side, timed_get

QUERY = "Patch module"  # in a context row of many sessions: hits to snippet, not a lookup of one row
SHORT = "模块"  # two characters: below the trigram index, answered by a scan of the same table


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    entries = Registry([str(w.w1_root)]).entries()
    fresh = iter(range(runs))

    def index_all() -> None:
        index = CorpusIndex(scratch / f"index-{next(fresh)}.sqlite3")
        bring_up_to_date(index, entries, read_afresh, fan_out=FanOut(os.cpu_count() or 1))
        index.close()

    def read_all() -> None:
        for entry in entries:
            load_session(entry.source)

    indexing, reading = side_by_side(index_all, read_all, runs)
    with serve([w.w1_root], scratch) as server:
        conn = server.connect()
        # the first query asks the server's worker to index every session (once per file version) and waits for
        # it at most `search_wait_ms`; the warm queries are measured once nothing is pending
        cold = timed_get(conn, f"/api/search?q={quote(QUERY)}")
        while (hits := orjson.loads(get(conn, f"/api/search?q={quote(QUERY)}")))["pending"]:
            time.sleep(0.2)
        warm = statistics.median(timed_get(conn, f"/api/search?q={quote(QUERY)}") for _ in range(3 * runs))
        short = statistics.median(timed_get(conn, f"/api/search?q={quote(SHORT)}") for _ in range(runs))
        conn.close()
    figures = [
        Figure(
            f"search index of W1's root ({len(entries):,} sessions) vs validating read of the same files",
            f"{ms(indexing)} vs {ms(reading)}",
            indexing / reading,
            Budget("<=", 3),
        ),
        Figure(
            f"search query on W1's root, /api/search ({hits['total']:,} rows in {hits['sessions']:,} sessions)",
            ms(warm),
            warm * 1000,
            Budget("<", 50, " ms"),
            count=True,
        ),
    ]
    note = (
        f"search, one sample each, no budget: the first query on a fresh server {ms(cold)} (its worker indexes "
        f"every session meanwhile; the query waits for it at most search_wait_ms); a two-character query (a scan, "
        f"below the trigram index) {ms(short)} median"
    )
    return figures, note
