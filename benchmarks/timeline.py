"""A session's timeline (issue 40), in one Chromium over W1's root.

The time from starting a load of W1 long's timeline to its canvas drawn (`data-timeline-ready`), against the
same session page's first screen (a load to its first prompt in view; ≤ 1.5×, warm: a server that has shown
each once); and the most elements the timeline page holds at any zoom of a walk in by keyboard and out again
(< 3,000). Registered in run.py's GROUPS as `timeline`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
from dsh_inspect.testing.browser import CHROMIUM_ARGS, chromium_path

from benchmarks.generate import LONG_ID, Workloads
from benchmarks.navigation import IN_VIEW, alternately
from benchmarks.run import Budget, Figure, get, ms, serve

DRAWN = "() => document.querySelector('[data-timeline][data-timeline-ready]') !== null"
ELEMENTS = "document.getElementsByTagName('*').length"
ZOOM_WALK = ["+"] * 10 + ["Shift+ArrowRight"] * 10 + ["ArrowRight"] * 30 + ["-"] * 10 + ["0"]


def time_to(page: Any, url: str, ready: str, arg: str | None = None) -> float:
    """From starting a page load to `ready` holding (a function of `arg`)."""
    start = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function(ready, arg=arg, polling="raf")
    return time.perf_counter() - start


def largest_zooming(page: Any, url: str) -> int:
    """The most elements the timeline page holds at any step of a zoom in, a pan and a zoom out by keyboard."""
    page.goto(url)
    page.wait_for_function(DRAWN)
    page.focus("[data-timeline-canvas]")
    largest = int(page.evaluate(ELEMENTS))
    for key in ZOOM_WALK:
        page.keyboard.press(key)
        largest = max(largest, int(page.evaluate(ELEMENTS)))
    return largest


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    from playwright.sync_api import sync_playwright

    with serve([w.w1_root], scratch) as server, sync_playwright() as p:
        conn = server.connect()
        first = orjson.loads(get(conn, f"/api/sessions/{LONG_ID}"))
        spans = len(orjson.loads(get(conn, f"/api/sessions/{LONG_ID}/timeline"))["spans"])
        conn.close()
        prompt = next(r["anchor"] for r in first["rows"] if r["kind"] == "user")
        base = f"http://127.0.0.1:{server.port}/sessions/{LONG_ID}"
        pages = {"timeline": (f"{base}/timeline", DRAWN, None), "session": (base, IN_VIEW, prompt)}
        browser = p.chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            cold, median = alternately(page, pages, runs, time_to)  # warm: each shown once
            elements = largest_zooming(page, f"{base}/timeline")
        finally:
            browser.close()
    figures = [
        Figure(
            f"timeline drawn vs session page first screen, W1 long ({spans:,} spans; warm, Chromium)",
            f"{ms(median['timeline'])} vs {ms(median['session'])}",
            median["timeline"] / median["session"],
            Budget("<=", 1.5),
        ),
        Figure(
            "largest DOM of W1 long's timeline at any zoom (keyboard in, across, out)",
            f"{elements:,} elements",
            float(elements),
            Budget("<", 3000, ""),
            count=True,
        ),
    ]
    note = (
        f"first visit to each on that server (one sample, no budget): timeline {ms(cold['timeline'])}, "
        f"page {ms(cold['session'])}"
    )
    return figures, note
