"""The suite serves logs with the same server the pytest plugin gives its users, or answers with the same app in
process (`app_client`), and reads a session's rows as its JSON twin pages them."""

import time
from typing import Any

import httpx
from dsh_inspect.testing.server import app_client, live_server

__all__ = ["app_client", "indexed", "live_server", "twin_rows"]


def twin_rows(site: httpx.Client | str, key: str, timeout: float = 60) -> list[dict[str, Any]]:
    """Every row of session `key`, window by window as `/api/sessions/{key}/rows` pages them: from an
    `app_client`, or a live server at its URL."""
    if isinstance(site, str):
        with httpx.Client(base_url=site) as client:
            return twin_rows(client, key, timeout)
    rows: list[dict[str, Any]] = []
    start: int | None = 0
    while start is not None:
        window = site.get(f"/api/sessions/{key}/rows", params={"from": start}, timeout=timeout).json()
        rows += window["rows"]
        start = window["nextFrom"]
    return rows


def indexed(server: str | httpx.Client, wait: float = 120) -> None:
    """Wait until `server` (a URL, or an in-process client) has indexed every session it serves for search: a
    fresh server indexes in the background and a search meanwhile names what is pending (tests/web/
    test_search_in_background.py proves that), so a test of what a hit shows starts once nothing is pending,
    however busy the machine."""
    get = server.get if isinstance(server, httpx.Client) else lambda path, **kw: httpx.get(f"{server}{path}", **kw)
    deadline = time.monotonic() + wait
    while get("/api/search", params={"q": "index"}, timeout=wait).json()["pending"]:
        assert time.monotonic() < deadline, f"the search index still had sessions pending after {wait:g} s"
        time.sleep(0.1)
