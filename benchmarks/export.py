"""The one-file export of W1 long (issue 39): written in ≤ 2× the time a server takes to read the session, and
opened light, under the session page's 3,000 nodes at its first paint and at its end.

"Reading it" is what a freshly started server does on a reader's first visit: the session page (its first
screen, from a prefix of the log) and its facts (`/facts`, the log read whole: verdict, counts, timing, cost),
timed over HTTP, a fresh server each sample. The export (`session_export`, as `dsh-inspect render` writes it,
written to a file) is timed in this process over a fresh registry each sample, so nothing is cached but the
compiled templates, as a server holds them too; one export first, untimed, compiles them. The two alternate.
Registered in run.py's GROUPS as `export`.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from dsh_inspect.sessions.registry import Registry
from dsh_inspect.testing.browser import CHROMIUM_ARGS, chromium_path
from dsh_inspect.web.render import session_export

from benchmarks.generate import LONG_ID, Workloads
from benchmarks.run import Budget, Figure, get, ms, serve

NODES = "() => { const w = document.createTreeWalker(document); let n = 0; while (w.nextNode()) n++; return n; }"
DOM_LIMIT = 3000


def write_export(root: Path, out: Path) -> float:
    """Seconds to write W1 long's export to `out` from a registry that has read nothing."""
    start = time.perf_counter()
    with out.open("w", encoding="utf-8") as file:
        file.writelines(session_export(Registry([str(root)]), LONG_ID))
    return time.perf_counter() - start


def server_read(root: Path, scratch: Path) -> float:
    """Seconds a freshly started server takes to answer the session page and its facts."""
    with serve([root], scratch) as server:
        conn = server.connect()
        start = time.perf_counter()
        get(conn, f"/sessions/{LONG_ID}")
        get(conn, f"/sessions/{LONG_ID}/facts")
        took = time.perf_counter() - start
        conn.close()
    return took


def opened(path: Path) -> tuple[int, int, float]:
    """The export in Chromium from file://: its nodes at load, the most while scrolled to its end window by
    window, and the seconds to its `load` event."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        start = time.perf_counter()
        page.goto(path.as_uri(), wait_until="load")
        load = time.perf_counter() - start
        page.locator("[data-export-mounted]").first.wait_for(state="attached")
        first = int(page.evaluate(NODES))
        most = first
        for i in range(1, page.locator("template[data-export-window]").count()):
            page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
            page.locator(f"[data-export-mounted='{i}']").wait_for(state="attached")
            most = max(most, int(page.evaluate(NODES)))
        browser.close()
    return first, most, load


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    html = scratch / "w1-long.html"
    write_export(w.w1_root, html)  # compiles the templates, as a running server has
    writes, reads = [], []
    for _ in range(runs):
        reads.append(server_read(w.w1_root, scratch))
        writes.append(write_export(w.w1_root, html))
    write, read = statistics.median(writes), statistics.median(reads)
    first, most, load = opened(html)
    figures = [
        Figure(
            "export written, W1 long, vs a fresh server's page and facts",
            f"{ms(write)} vs {ms(read)}",
            write / read,
            Budget("<=", 2.0),
        ),
        Figure("export DOM at load, W1 long", f"{first:,} nodes", first, Budget("<", DOM_LIMIT, " nodes"), count=True),
        Figure(
            "export DOM scrolled to its end, W1 long (most)",
            f"{most:,} nodes",
            most,
            Budget("<", DOM_LIMIT, " nodes"),
            count=True,
        ),
    ]
    note = f"export of W1 long: {html.stat().st_size / (1 << 20):.1f} MiB, `load` in Chromium after {ms(load)}"
    return figures, note
