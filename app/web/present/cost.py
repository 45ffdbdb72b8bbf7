"""What a session cost, as its pages and twins give it: priced once per file version with the server's prices
(`--prices`, `--currency`), worded for the header and the list (history/spend/cost.py prices the calls)."""

from __future__ import annotations

from decimal import Decimal

from ...history.spend.cost import Cost, Prices, price_data, session_cost
from ...sessions.registry import Entry
from ..state import WebState
from .strings import Phrase, phrase

SIGNIFICANT = 3  # digits an amount keeps below one unit: a session of a few calls costs fractions of a cent


def cost_of(state: WebState, entry: Entry) -> Cost:
    """The session's calls priced, once per file version."""
    prices = state.settings.prices()
    return state.registry.derived(entry.key, "cost", lambda log: session_cost(log, prices))


def amount(total: Decimal | float, currency: str) -> str:
    """An amount as the pages write it: two decimals from one unit up, else three significant digits."""
    value = Decimal(str(total))
    if value == 0 or abs(value) >= 1:
        return f"{value:,.2f} {currency}"
    return f"{float(value):.{SIGNIFICANT}g} {currency}"


def cost_phrase(found: dict[str, object]) -> Phrase | None:
    """A `cost` JSON (`Cost.to_json`) worded: the amount, and how many calls no price covers; None for a
    session without a priced or unpriced call."""
    total, unknown, currency = found.get("total"), found.get("unknownCalls"), str(found.get("currency"))
    count = unknown if isinstance(unknown, int) else 0
    if total is None:
        return phrase("cost.unknown", count=count) if count else None
    shown = amount(total if isinstance(total, Decimal | float | int) else 0, currency)
    return phrase("cost.partly", amount=shown, count=count) if count else phrase("cost.total", amount=shown)


def source_phrase(prices: Prices) -> Phrase:
    """Which prices a page used, in the reader's language: the library, its version, how current its data is,
    and a team's own prices and exchange rate when given."""
    library, version, dated = price_data()
    said = phrase("cost.source", library=library, version=version, date=dated)
    if prices.currency != "USD" or prices.overrides:
        return phrase(
            "cost.sourceOwn", source=said, count=len(prices.overrides), rate=f"{prices.rate} {prices.currency}"
        )
    return said
