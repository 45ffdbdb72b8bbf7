"""Search across sessions (issue 14): indexing W1's root against the validating read of the same files, and
a query on it through a real server.

Indexing reads each of W1's sessions, builds its rows and writes the words each shows into a fresh SQLite FTS5
index (app/sessions/search_index.py); with `index_workers=1` (every session read in this one process, as the
validating read it is measured against) it should cost at most three times what reading and validating those
files alone does. With the default `index_workers=2` (`FanOut`: reading processes beside this one, which writes
the index) it should take less wall-clock time than with one, on a machine with two cores; a one-core machine
takes the serial path both times (docs/decisions/0008-cross-session-search.md). Each such run starts its pool; the
first run of a process also starts the fork server the pools fork from (about half a second), which the median of
the runs leaves out. The three are run in turn, so they see the same machine. A query (`/api/search`, the
server's index up to date) should be answered in under 50 ms, median. Registered in run.py's GROUPS as `search`.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from urllib.parse import quote

import orjson
from dsh_inspect.history.session import load_session
from dsh_inspect.sessions.registry import Registry
from dsh_inspect.sessions.search_index import CorpusIndex, FanOut, bring_up_to_date, read_afresh

from benchmarks.generate import Workloads
from benchmarks.run import Budget, Figure, elapsed, get, ms, serve, timed_get

QUERY = "Patch module"  # in a context row of many sessions: hits to snippet, not a lookup of one row
SHORT = "模块"  # two characters: below the trigram index, answered by a scan of the same table
WORKERS = 2  # `index_workers`' default


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    entries = Registry([str(w.w1_root)]).entries()
    fresh = iter(range(2 * runs))

    def index_all(workers: int) -> None:
        index = CorpusIndex(scratch / f"index-{next(fresh)}.sqlite3")
        bring_up_to_date(index, entries, read_afresh, fan_out=FanOut(workers))
        index.close()

    def read_all() -> None:
        for entry in entries:
            load_session(entry.source)

    serial, reading, fanned = [], [], []
    for _ in range(runs):
        serial.append(elapsed(lambda: index_all(1)))
        reading.append(elapsed(read_all))
        fanned.append(elapsed(lambda: index_all(WORKERS)))
    one, read, two = (statistics.median(t) for t in (serial, reading, fanned))
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
            f"search index of W1's root ({len(entries):,} sessions), index_workers=1, vs validating read of the same "
            "files",
            f"{ms(one)} vs {ms(read)}",
            one / read,
            Budget("<=", 3),
        ),
        Figure(
            f"search index of W1's root, index_workers={WORKERS} vs 1",
            f"{ms(two)} vs {ms(one)}",
            two / one,
            Budget("<", 1),
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
