"""What a session cost, worded for the header, the list and the model-calls table (history/spend/cost.py prices
the calls; present/spend/timeline.py `cost_of` keeps them priced per file version). The state names two of these for
its templates, so this module imports no state."""

from __future__ import annotations

import math
from decimal import Decimal

from ....history.spend.cost import ROUTES, Cost, PricedBy, Prices, price_data
from ..strings import Phrase, phrase

SIGNIFICANT = 3  # digits an amount keeps below a cent: a session of a few calls costs fractions of one
CENT = Decimal("0.01")
# the rules the header names at most: a log may name any number of routes and models, the header stays a line
RULES_SAID = 5
# a rule that names its route alone, by how it priced (`route`, `unknown` and `no-usage` say more)
_RULES = {"url": "cost.byUrl", "model": "cost.byModel", "override": "cost.byOverride"}


def amount(total: Decimal | float, currency: str | None = None) -> str:
    """An amount as the pages write it, with its currency when given: two decimals from a cent up, else as
    many as three significant digits take (0.000224), never an exponent."""
    value = Decimal(str(total))
    places = 2 if value == 0 or abs(value) >= CENT else SIGNIFICANT - 1 - math.floor(math.log10(abs(value)))
    shown = f"{value:,.{places}f}"
    return f"{shown} {currency}" if currency else shown


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


def cost_cell(found: dict[str, object]) -> Phrase | None:
    """A `cost` JSON as the list's cost column words it: the amount alone, or "price unknown"."""
    total, unknown = found.get("total"), found.get("unknownCalls")
    if total is None:
        return phrase("cost.unknownShort") if unknown else None
    shown = amount(total if isinstance(total, Decimal | float | int) else 0)  # its currency heads the column
    return phrase("cost.amountPartly", amount=shown, count=unknown) if unknown else phrase("cost.amount", amount=shown)


def priced_by(cost: Cost) -> tuple[Phrase, ...]:
    """Which rule priced each route (`Cost.routes`, the twin's `cost.routes[].pricedBy`), worded once per route
    and rule, a model no price covers named: the first `RULES_SAID`, then how many more."""
    calls: dict[tuple[PricedBy, str, str], int] = {}
    for (route, model, by), count in cost.routes().items():
        said = (by, route, model if by == "unknown" else "")
        calls[said] = calls.get(said, 0) + count
    rules = [_rule(by, route, model, count) for (by, route, model), count in calls.items()]
    if len(rules) <= RULES_SAID:
        return tuple(rules)
    return (*rules[:RULES_SAID], phrase("cost.byMore", count=len(rules) - RULES_SAID))


def _rule(by: PricedBy, route: str, model: str, calls: int) -> Phrase:
    if by == "route":
        return phrase("cost.byRoute", route=route, provider=ROUTES[route])
    if by == "unknown":
        return phrase("cost.byNothing", route=route, model=model)
    if by == "no-usage":
        return phrase("cost.byNoUsage", route=route, count=calls)
    return phrase(_RULES[by], route=route)
