"""The suite serves logs with the same server the pytest plugin gives its users, or answers with the same app in
process (`app_client`), and reads a session's rows as its JSON twin pages them."""

from typing import Any

import httpx
from dsh_inspect.testing.server import app_client, live_server

__all__ = ["app_client", "live_server", "twin_rows"]


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
