"""Model views at any length (issue 13): the first screen of W1 long's last step against its first step's.

The last step's request is the whole 500-turn history (about 2,300 messages); the page shows its header,
state and diff at once and its messages a window at a time, so its first screen should cost what the
first step's does (≤ 1.5×, warm: a server that has shown each once) and weigh under 300 KB of HTML.
Registered in run.py's GROUPS as `model-view`.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from benchmarks.generate import LONG_ID, Workloads
from benchmarks.run import Budget, Figure, get, ms, serve, side_by_side, timed_get

KB = 1024


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    with serve([w.w1_root], scratch) as server:
        conn = server.connect()
        steps = orjson.loads(get(conn, f"/api/sessions/{LONG_ID}/steps"))["steps"]
        first_url, last_url = (f"/sessions/{LONG_ID}/steps/{steps[i]['key']}" for i in (0, -1))
        cold_first = timed_get(conn, first_url)  # builds the transcript's rows, for the links back to it
        cold_last = timed_get(conn, last_url)  # derives the last request: a fold over the whole log
        last, first = side_by_side(lambda: get(conn, last_url), lambda: get(conn, first_url), 3 * runs)
        size = len(get(conn, last_url))
        conn.close()
    figures = [
        Figure(
            f"model view first screen, W1 long's last step ({steps[-1]['messages']:,} messages) vs its first (warm)",
            f"{ms(last)} vs {ms(first)}",
            last / first,
            Budget("<=", 1.5),
        ),
        Figure(
            "model view first screen, W1 long's last step, HTML",
            f"{size:,} bytes",
            size / KB,
            Budget("<", 300, " KB"),
            count=True,
        ),
    ]
    note = (
        f"first visit to each model view on that server (one sample, no budget): "
        f"{steps[0]['key']} {ms(cold_first)} (builds the transcript's rows), {steps[-1]['key']} {ms(cold_last)}"
    )
    return figures, note
