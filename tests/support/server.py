"""The suite serves logs with the same server the pytest plugin gives its users, and reads a session's rows
as its JSON twin pages them."""

from typing import Any

import httpx
from dsh_inspect.testing.server import live_server

__all__ = ["live_server", "twin_rows"]


def twin_rows(server: str, key: str, timeout: float = 60) -> list[dict[str, Any]]:
    """Every row of session `key`, window by window as `/api/sessions/{key}/rows` pages them."""
    rows: list[dict[str, Any]] = []
    start: int | None = 0
    while start is not None:
        window = httpx.get(f"{server}/api/sessions/{key}/rows", params={"from": start}, timeout=timeout).json()
        rows += window["rows"]
        start = window["nextFrom"]
    return rows
