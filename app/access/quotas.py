"""What a client may upload (issue 33): bytes per client an hour, counted in this process, so one uploader
cannot fill the store or keep every process reading and indexing for everyone. The store's total is the
catalog's to count (`Catalog.stored_bytes`).

A token bucket, not a sliding hour: the hour's bytes come back as the hour goes, and at most one largest upload's
worth is held at once. An hour's window would let a client spend the whole hour in its first minute, and each
uploaded byte costs every process a read (the list's summaries) and one of them its indexing, at once.

Counted here rather than with `limits` (as failed attempts are): its windows count hits, and an upload's cost
is its bytes.
"""

from __future__ import annotations

import math
import threading
import time

HOUR = 3600.0
KEPT_CLIENTS = 10_000  # past this many clients with uploads in the hour, the oldest are forgotten first


class UploadQuota:
    def __init__(self, bytes_per_hour: int, largest_upload: int) -> None:
        self.bytes_per_hour = bytes_per_hour
        self.held_at_most = min(bytes_per_hour, largest_upload)  # what a client unseen for a while may send at once
        self._rate = bytes_per_hour / HOUR  # bytes a second
        self._lock = threading.Lock()
        self._left: dict[str, tuple[float, float]] = {}  # per client, (when, bytes it might send then)

    def take(self, client: str, size: int) -> bool:
        """Count `size` bytes against the client's allowance; False (nothing counted) when they would pass it."""
        now = time.monotonic()
        with self._lock:
            left = self._left_now(client, now)
            if size > left:
                return False
            self._left[client] = (now, left - size)
            return True

    def retry_after(self, client: str, size: int) -> int:
        """Seconds until the client may send `size` bytes (an hour when it never may: more than the hour's)."""
        now = time.monotonic()
        with self._lock:
            short = size - self._left_now(client, now)
        if size > self.held_at_most:
            return round(HOUR)
        return max(1, math.ceil(short / self._rate)) if self._rate > 0 else round(HOUR)

    def _left_now(self, client: str, now: float) -> float:
        when, left = self._left.pop(client, (now, float(self.held_at_most)))
        if len(self._left) >= KEPT_CLIENTS:  # a forgotten client starts full again: only ever in its favour
            del self._left[next(iter(self._left))]
        left = min(float(self.held_at_most), left + (now - when) * self._rate)
        self._left[client] = (now, left)  # last in the dict's order: the most recently seen
        return left
