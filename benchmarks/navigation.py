"""Session page navigation (issue 13), in one Chromium over W1's root.

The time to W1 long's last answer opened through `?at=end` and through `?at=msg-<last>`, each from one
page load to the answer in view, against the one-turn session's first screen (a load to its prompt in
view; ≤ 1.5×, warm: a server that has shown each once); and the largest DOM (elements, as
`document.getElementsByTagName('*')` counts them, and every node) at any step of a walk from W1 long's
first window to its last (< 3,000 each), the page dropping far rows as it goes. Registered in run.py's
GROUPS as `navigation`.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import orjson
from dsh_inspect.testing.browser import CHROMIUM_ARGS, chromium_path

from benchmarks.generate import LONG_ID, ONE_TURN_ID, Workloads
from benchmarks.run import Budget, Figure, get, ms, serve

IN_VIEW = """id => {
    const el = document.getElementById(id);
    if (!el) return false;
    const box = el.getBoundingClientRect();
    return box.bottom > 0 && box.top < innerHeight;
}"""
# the page's size two ways: its elements (what `getElementsByTagName('*')` counts), and every node
# (elements, text, comments: what the first-paint DOM budget counts)
SIZES = """() => {
    const walker = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
    let nodes = 1;
    while (walker.nextNode()) nodes++;
    return [document.getElementsByTagName('*').length, nodes];
}"""
LAST_TO = "[...document.querySelectorAll('[data-window]')].pop().dataset.to"


def last_answer(twin: dict[str, Any]) -> str:
    """The anchor of the last assistant message of a window's rows."""
    return str(next(r["anchor"] for r in reversed(twin["rows"]) if r["kind"] == "assistant-step"))


def time_to(page: Any, url: str, anchor: str) -> float:
    """From starting a page load to the row `anchor` in view."""
    start = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")  # deferred scripts (session.js) have run by then
    page.wait_for_function(IN_VIEW, arg=anchor, polling="raf")
    return time.perf_counter() - start


def alternately(
    page: Any, pages: dict[str, tuple[Any, ...]], runs: int, timed: Any
) -> tuple[dict[str, float], dict[str, float]]:
    """Each page's first load on its server (one sample), then the median of `runs` warm loads of each, taken
    in turn so that all see the same machine: `timed(page, *how)` times one load of a page `how` names."""
    cold = {name: timed(page, *how) for name, how in pages.items()}
    times: dict[str, list[float]] = {name: [] for name in pages}
    for _ in range(runs):
        for name, how in pages.items():
            times[name].append(timed(page, *how))
    return cold, {name: statistics.median(ts) for name, ts in times.items()}


def largest_walking_forward(page: Any, url: str) -> tuple[int, int, int]:
    """The most elements and nodes the page holds at any step of a walk from its first window to its last,
    and the windows it loaded on the way."""
    page.goto(url)
    elements, nodes = page.evaluate(SIZES)
    steps = 0
    while page.locator("[data-window-next]").count():
        end = page.evaluate(LAST_TO)
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_function(f"end => {LAST_TO} !== end", arg=end)
        now = page.evaluate(SIZES)
        elements, nodes, steps = max(elements, now[0]), max(nodes, now[1]), steps + 1
    return int(elements), int(nodes), steps


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    from playwright.sync_api import sync_playwright

    with serve([w.w1_root], scratch) as server, sync_playwright() as p:
        conn = server.connect()
        long_end = orjson.loads(get(conn, f"/api/sessions/{LONG_ID}?at=end"))
        one = orjson.loads(get(conn, f"/api/sessions/{ONE_TURN_ID}"))
        conn.close()
        base = f"http://127.0.0.1:{server.port}/sessions"
        last, prompt = last_answer(long_end), next(r["anchor"] for r in one["rows"] if r["kind"] == "user")
        pages = {
            "end": (f"{base}/{LONG_ID}?at=end", last),
            "msg": (f"{base}/{LONG_ID}?at={last}", last),
            "one": (f"{base}/{ONE_TURN_ID}", prompt),  # its first screen: its prompt in view
        }
        browser = p.chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            # warm: the server has read and shown each once (the long log read whole, its last windows rendered)
            cold, median = alternately(page, pages, runs, time_to)
            elements, nodes, steps = largest_walking_forward(page, f"{base}/{LONG_ID}")
        finally:
            browser.close()
    figures = [
        Figure(
            f"last answer through ?at={how}, W1 long vs one-turn first screen (warm, Chromium)",
            f"{ms(median[name])} vs {ms(median['one'])}",
            median[name] / median["one"],
            Budget("<=", 1.5),
        )
        for how, name in (("end", "end"), ("msg-<last>", "msg"))
    ]
    walk = f"W1 long forward ({long_end['totalRows']:,} rows, {steps} windows loaded)"
    figures += [
        Figure(f"largest DOM walking {walk}", f"{count:,} {what}", float(count), Budget("<", 3000, ""), count=True)
        for what, count in (("elements", elements), ("nodes", nodes))
    ]
    note = (
        f"first visit to each page on that server (one sample, no budget): ?at=end {ms(cold['end'])} "
        f"(reads W1 long whole), ?at=msg-<last> {ms(cold['msg'])}, one-turn {ms(cold['one'])}"
    )
    return figures, note
