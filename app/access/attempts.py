"""Failed token attempts, limited per client (docs/decisions/0020-access-control.md): past the limit in a
minute, a client's requests that carry a token are refused (429) before the token is looked at.

Counted in this process (`limits`' moving window in memory): N processes allow N times the limit, which still
leaves a guess of a 256-bit secret hopeless; the limit is there so a flood costs the catalog nothing.
"""

from __future__ import annotations

import time

from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter


class FailedAttempts:
    def __init__(self, per_minute: int) -> None:
        self._item = RateLimitItemPerMinute(per_minute)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    def blocked(self, client: str) -> bool:
        return not self._limiter.test(self._item, "failed", client)

    def failed(self, client: str) -> None:
        self._limiter.hit(self._item, "failed", client)

    def retry_after(self, client: str) -> int:
        """Seconds until this client may try again."""
        reset = self._limiter.get_window_stats(self._item, "failed", client).reset_time
        return max(1, round(reset - time.time()))
