"""When something happened, as a page prints it: UTC in the markup, the reader's time zone once
static/inspect.js has worded each `<time data-local-time>` (rows, turns and steps, the session list)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class WallClock:
    """A moment: a page shows `utc` until its script words `iso` in the reader's time zone."""

    iso: str  # ISO 8601 in UTC, to the millisecond: the `<time datetime>`
    utc: str  # the fallback text, minutes in UTC

    @classmethod
    def of(cls, ms: Any) -> WallClock | None:
        """Epoch milliseconds as a moment; None for no time, one that is not positive, or one past what a
        calendar holds."""
        if not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms <= 0:
            return None
        try:
            at = datetime.fromtimestamp(ms / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            return None
        return cls(at.isoformat(timespec="milliseconds").replace("+00:00", "Z"), at.strftime("%Y-%m-%d %H:%M UTC"))
