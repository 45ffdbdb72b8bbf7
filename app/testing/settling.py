"""Waiting for a page to stop moving: a read repeated until it gives the same answer twice in a row."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def settled(read: Callable[[], T], *, timeout: float = 10.0, interval: float = 0.05, agreeing: int = 2) -> T:
    """What `read()` gives once `agreeing` consecutive reads, `interval` seconds apart, are equal: a box
    after a layout or a font settled, a list after the last row arrived. AssertionError, with the last
    reads, when it still moves after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    reads = [read()]
    while len(reads) < agreeing or any(r != reads[-1] for r in reads[-agreeing:]):
        if time.monotonic() > deadline:
            raise AssertionError(f"not settled after {timeout:g} s; the last reads: {reads[-agreeing:]!r}")
        time.sleep(interval)
        reads.append(read())
    return reads[-1]
