"""Where a team's time and money went, above the session list: the chosen sessions counted, their tokens and
cost summed, their median and slowest wall time; and the models that answered them, for the list's filter.
Made from the summaries read so far (the list's cache), so it costs no read of its own."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from ....history.spend.cost import Prices, price_source
from ....sessions.keys import session_url
from ....sessions.registry import Entry
from ...state import WebState
from ..listed import cached_summary
from ..rows import duration
from ..strings import Phrase, count, phrase
from .cost import cost_phrase, source_phrase


def overview(state: WebState, entries: Iterable[Entry]) -> dict[str, Any]:
    """The chosen sessions' totals, from those read (`read` says how many): tokens, cost (a session no price
    covers counts in `unknownCalls`), and the median and slowest wall time with the slowest session's page."""
    chosen = list(entries)
    read = [(e, s) for e in chosen if (s := cached_summary(state, e)) is not None]
    costs = [s["cost"] for _, s in read if s.get("cost")]
    walls = [(s["durations"]["wallMs"], e) for e, s in read if (s.get("durations") or {}).get("wallMs") is not None]
    slowest = max(walls, key=lambda pair: pair[0], default=None)
    prices: Prices = state.settings.prices()
    known = [c["total"] for c in costs if c["total"] is not None]
    return {
        "sessions": len(chosen),
        "read": len(read),
        "tokens": sum(s["tokens"] or 0 for _, s in read),
        "cost": {
            # none read, or none priced while some were not: no amount; read sessions that made no call: 0
            "total": sum(known) if known else None if not costs or any(c["unknownCalls"] for c in costs) else 0,
            "currency": prices.currency,
            "source": price_source(prices),
            "unknownCalls": sum(c["unknownCalls"] for c in costs),
        },
        "medianMs": int(statistics.median(w for w, _ in walls)) if walls else None,
        "slowestMs": slowest[0] if slowest else None,
        "slowest": {"key": slowest[1].key, "url": session_url(slowest[1].key)} if slowest else None,
    }


def models_read(state: WebState, entries: Iterable[Entry]) -> tuple[str, ...]:
    """The models that answered the sessions read so far: what the list's model filter offers."""
    found = (cached_summary(state, e) for e in entries)
    return tuple(sorted({m for s in found if s is not None for m in s.get("models") or ()}))


def overview_phrases(found: dict[str, Any], prices: Prices) -> list[tuple[str, Phrase]]:
    """The overview worded, part by part (each with its name for the page's markup), a cost with the prices it
    used; the count of sessions is the list's own line."""
    parts: list[tuple[str, Phrase]] = []
    if found["read"] < found["sessions"]:
        parts.append(("read", phrase("overview.read", count=count(found["read"]))))
    parts.append(("tokens", phrase("overview.tokens", tokens=count(found["tokens"]))))
    if (cost := cost_phrase(found["cost"])) is not None:
        parts += [("cost", cost), ("source", source_phrase(prices))]
    for name, key, ms in (("median", "overview.median", "medianMs"), ("slowest", "overview.slowest", "slowestMs")):
        if (took := duration(found[ms])) is not None:
            parts.append((name, phrase(key, duration=took)))
    return parts
