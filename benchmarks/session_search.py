"""In-session search as typed (issue 14): each keystroke, once the page's 200 ms debounce has passed, asks
`/api/sessions/{key}/search`, so on W1's long session a reply must come well inside that pause (< 50 ms,
median over the prefixes of a phrase typed letter by letter); ticking "Raw JSON too" (`raw=true`) also
reads each event row's JSON and should cost at most 1.5 times the plain search of the same words.
Registered in run.py's GROUPS as `session-search`.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from urllib.parse import quote

import orjson

from benchmarks.generate import LONG_ID, Workloads
from benchmarks.run import Budget, Figure, get, ms, serve, side_by_side, timed_get

TYPED = "Patch module"  # typed letter by letter from two letters on, as the search box sends it


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    url = f"/api/sessions/{LONG_ID}/search?q="
    prefixes = [TYPED[:n] for n in range(2, len(TYPED) + 1)]
    with serve([w.w1_root], scratch) as server:
        conn = server.connect()
        cold = timed_get(conn, url + quote(TYPED))  # reads the log and builds every row's text: once per version
        found = len(orjson.loads(get(conn, url + quote(TYPED)))["matches"])
        keystrokes = [timed_get(conn, url + quote(p)) for _ in range(runs) for p in prefixes]
        raw, plain = side_by_side(
            lambda: get(conn, url + quote(TYPED) + "&raw=true"), lambda: get(conn, url + quote(TYPED)), 3 * runs
        )
        conn.close()
    typed = statistics.median(keystrokes)
    figures = [
        Figure(
            f"in-session search per keystroke, W1 long ({len(prefixes)} prefixes of {TYPED!r}, {found:,} matches)",
            ms(typed),
            typed * 1000,
            Budget("<", 50, " ms"),
            count=True,
        ),
        Figure(
            "in-session search, W1 long, raw JSON too vs shown text only",
            f"{ms(raw)} vs {ms(plain)}",
            raw / plain,
            Budget("<=", 1.5),
        ),
    ]
    return figures, f"in-session search, one sample, no budget: the first search of W1 long on its server {ms(cold)}"
