"""What a client may upload (issue 33): bytes per client an hour, counted in this process, so one uploader
cannot fill the store or keep the indexer busy for everyone. The store's total is the catalog's to count
(`Catalog.stored_bytes`).

Counted here rather than with `limits` (as failed attempts are): its windows count hits, and an upload's cost
is its bytes, which it would keep as that many entries.
"""

from __future__ import annotations

import threading
import time
from collections import deque

HOUR = 3600.0
KEPT_CLIENTS = 10_000  # past this many clients with uploads in the hour, the oldest are forgotten first


class UploadQuota:
    def __init__(self, bytes_per_hour: int) -> None:
        self.bytes_per_hour = bytes_per_hour
        self._lock = threading.Lock()
        self._sent: dict[str, deque[tuple[float, int]]] = {}  # per client, (when, bytes) of the hour's uploads

    def take(self, client: str, size: int) -> bool:
        """Count `size` bytes against the client's hour; False (nothing counted) when they would pass it."""
        now = time.monotonic()
        with self._lock:
            sent = self._recent(client, now)
            if sum(b for _, b in sent) + size > self.bytes_per_hour:
                return False
            sent.append((now, size))
            return True

    def retry_after(self, client: str) -> int:
        """Seconds until the client's oldest upload of the hour stops counting."""
        now = time.monotonic()
        with self._lock:
            sent = self._recent(client, now)
            return max(1, round(sent[0][0] + HOUR - now)) if sent else 1

    def _recent(self, client: str, now: float) -> deque[tuple[float, int]]:
        sent = self._sent.pop(client, None) or deque()
        while sent and sent[0][0] <= now - HOUR:
            sent.popleft()
        if len(self._sent) >= KEPT_CLIENTS:
            del self._sent[next(iter(self._sent))]
        self._sent[client] = sent  # last in the dict's order: the most recently seen
        return sent
