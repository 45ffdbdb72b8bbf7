"""What each model call cost: its provider route, model and usage priced by `genai-prices` (Pydantic's maintained
price data, shipped with the package: its network updates are never started), at the price in force when the
call ran, cache reads priced as cache reads (docs/decisions/0030-time-and-prices.md).

dsh names a provider *route*, not a price list's provider: the official DeepSeek route is the library's
`deepseek`; a route whose base URL the log names is found by that URL; any other by the model name alone.
A team's own prices (`Prices.overrides`) come first. A call no price covers, or that logged no usage, is "price
unknown", never 0. A compaction's summary is a model call of its own (`compaction/summary` logs its route, model
and usage) and is priced like the steps' calls.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal

from ...model.payloads import Compaction, RequestContext, payload_as
from ..calls import CallIndex, call_index
from ..row_facts import wall_clock
from ..session import SessionLog
from .tokens import Usage, usage_from

LIBRARY = "genai-prices"
LIBRARY_CURRENCY = "USD"
MILLION = Decimal(1_000_000)
# dsh's routes that are a price list's provider by another name
ROUTES = {"deepseek-official": "deepseek"}

# how a call was priced; `no-usage`: it logged no usage (an interrupted call), so nothing says what it cost
PricedBy = Literal["override", "route", "url", "model", "unknown", "no-usage"]


@dataclass(frozen=True, slots=True)
class PriceOverride:
    """A team's own price for a model (on one route, or any): amounts per million tokens, in the library's
    currency (USD)."""

    model: str
    route: str | None
    input: Decimal
    output: Decimal
    cache_read: Decimal | None = None  # None: as input
    cache_write: Decimal | None = None  # None: as input

    def price(self, usage: Usage) -> Decimal:
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        tokens = (
            usage.input * self.input
            + (usage.cache_read or 0) * read
            + (usage.cache_write or 0) * write
            + usage.output * self.output
        )
        return tokens / MILLION


@dataclass(frozen=True, slots=True)
class Prices:
    """How calls are priced: a team's overrides first, then the library; amounts shown in `currency`, converted
    from USD at `rate` (units of `currency` per USD)."""

    overrides: tuple[PriceOverride, ...] = ()
    currency: str = LIBRARY_CURRENCY
    rate: Decimal = Decimal(1)

    def override(self, route: str, model: str) -> PriceOverride | None:
        return next((o for o in self.overrides if o.model == model and o.route in (None, route)), None)


LIBRARY_PRICES = Prices()  # genai-prices' own, in its currency: what `check` prices at unless told otherwise


@dataclass(frozen=True, slots=True)
class CallCost:
    """One answered model call's price: `total` in the library's currency, None when no price covers it or it
    logged no usage."""

    seq: int  # its assistant/message, or a compaction's compaction/summary
    step: str | None  # None: a compaction's call, which is no step's
    turn: int | None  # None: a compaction between turns (its `compaction/start` names no turn)
    route: str
    model: str
    priced_by: PricedBy
    total: Decimal | None


@dataclass(frozen=True, slots=True)
class Cost:
    """A session's calls priced, and their sums."""

    calls: tuple[CallCost, ...]
    prices: Prices

    @property
    def unknown(self) -> int:
        return sum(1 for c in self.calls if c.total is None)

    def total(self, calls: Iterable[CallCost] | None = None) -> Decimal | None:
        """The priced calls' sum, in the shown currency; None when calls were made and none could be priced."""
        chosen = list(self.calls if calls is None else calls)
        known = [c.total for c in chosen if c.total is not None]
        if chosen and not known:
            return None
        return sum(known, Decimal(0)) * self.prices.rate

    def to_json(self) -> dict[str, Any]:
        """`cost` as the session twin, each list row and `check --json` give it."""
        return {
            "total": _number(self.total()),
            "currency": self.prices.currency,
            "source": price_source(self.prices),
            "unknownCalls": self.unknown,
        }

    def detail_json(self) -> dict[str, Any]:
        """`to_json` with each step's and turn's sums, each compaction's between turns, and how each route and
        model was priced. A turn holds its steps and the compactions made inside it, so the turns and the
        compactions between them add up to the total; the steps add up to it less every compaction."""
        stepped = (c for c in self.calls if c.step is not None)
        in_turns = (c for c in self.calls if c.turn is not None)
        return {
            **self.to_json(),
            "steps": [self._sum_json("key", key, calls) for key, calls in _grouped(stepped, "step").items()],
            "turns": [self._sum_json("turn", turn, calls) for turn, calls in _grouped(in_turns, "turn").items()],
            "compactions": [self._sum_json("seq", c.seq, [c]) for c in self.calls if c.turn is None],
            "routes": [
                {"route": route, "model": model, "pricedBy": by, "calls": count}
                for (route, model, by), count in self.routes().items()
            ],
        }

    def routes(self) -> dict[tuple[str, str, PricedBy], int]:
        """How many calls of each route and model each rule priced, in the order first met."""
        return _counted((c.route, c.model, c.priced_by) for c in self.calls)

    def _sum_json(self, name: str, value: Any, calls: list[CallCost]) -> dict[str, Any]:
        return {name: value, "total": _number(self.total(calls)), "unknownCalls": sum(c.total is None for c in calls)}


def _number(amount: Decimal | None) -> float | None:
    return None if amount is None else float(amount)


def _grouped(calls: Iterable[CallCost], field: str) -> dict[Any, list[CallCost]]:
    out: dict[Any, list[CallCost]] = {}
    for call in calls:
        out.setdefault(getattr(call, field), []).append(call)
    return out


def _counted(keys: Iterator[tuple[str, str, PricedBy]]) -> dict[tuple[str, str, PricedBy], int]:
    out: dict[tuple[str, str, PricedBy], int] = {}
    for key in keys:
        out[key] = out.get(key, 0) + 1
    return out


def price_source(prices: Prices) -> str:
    """Which price data: the library, its version and its newest dated price change; a team's overrides and a
    stated exchange rate when used."""
    library, version, dated = price_data()
    said = f"{library} {version}, its bundled prices (changes dated to {dated}), each call at its own time"
    if prices.overrides:
        said += f", {len(prices.overrides)} own prices"
    if prices.currency != LIBRARY_CURRENCY:
        said += f", at {prices.rate} {prices.currency} per {LIBRARY_CURRENCY}"
    return said


def price_data() -> tuple[str, str, str]:
    """The price library, its version, and the newest dated price change its bundled data holds."""
    return LIBRARY, _library_version(), _newest_price_date()


def session_cost(log: SessionLog, prices: Prices, calls: CallIndex | None = None) -> Cost:
    """Every answered call of `log`, its steps' and its compactions', priced in the order they ran; `calls` its
    model calls when the caller keeps them."""
    url = _base_url(log)
    fallback = log.header.created_at if log.header and log.header.created_at else None

    def priced(
        seq: int, source: Mapping[str, Any], usage: Usage | None, step: str | None, turn: int | None
    ) -> CallCost:
        route, model = str(source.get("provider", "")), str(source.get("model", ""))
        at = wall_clock(log.event(seq).time) or fallback
        by, total = ("no-usage", None) if usage is None else _price(prices, route, model, url, usage, at)
        return CallCost(seq, step, turn, route, model, by, total)

    out = [
        priced(call.message, _message_source(log, call.message), call.usage, step.key, step.turn)
        for step in (calls or call_index(log)).steps
        for call in step.calls
        if call.message is not None
    ]
    out += [
        priced(seq, {"provider": data.provider or "", "model": data.model or ""}, usage_from(data.usage), None, turn)
        for seq, data, turn in _compaction_calls(log)
    ]
    return Cost(tuple(sorted(out, key=lambda c: c.seq)), prices)


def _message_source(log: SessionLog, seq: int) -> Mapping[str, Any]:
    """An `assistant/message`'s source: the route and model that answered."""
    message = log.event(seq).message
    return message.source.raw if message is not None else {}


def _compaction_calls(log: SessionLog) -> Iterator[tuple[int, Compaction, int | None]]:
    """Each `compaction/summary` a model call made (it logs usage, or says `llmStreamCall`): its seq, its data
    (route, model, usage) and the turn its `compaction/start` names (None between turns)."""
    turns: dict[str, int] = {}  # compactionId → the turn it ran in
    for seq, kind in enumerate(log.types):
        if kind not in ("compaction/start", "compaction/summary"):
            continue
        data = log.event(seq).payload
        if not isinstance(data, Compaction):
            continue
        named = data.compaction_id
        if kind == "compaction/start":
            if named is not None and data.turn is not None:
                turns[named] = data.turn
        elif data.usage is not None or data.llm_stream_call is True:
            yield seq, data, turns.get(named) if named is not None else None


def _price(
    prices: Prices, route: str, model: str, url: str | None, usage: Usage, at: int | None
) -> tuple[PricedBy, Decimal | None]:
    own = prices.override(route, model)
    if own is not None:
        return "override", own.price(usage)
    from genai_prices import Usage as Counted
    from genai_prices import calc_price

    counted = Counted(
        # the library counts cache reads and writes inside input; dsh's counts are disjoint (docs/format.md §3.3)
        input_tokens=usage.context,
        cache_read_tokens=usage.cache_read or 0,
        cache_write_tokens=usage.cache_write or 0,
        output_tokens=usage.output,
    )
    when = datetime.fromtimestamp(at / 1000, tz=UTC) if at is not None else None
    by: PricedBy = "route" if route in ROUTES else "url" if url else "model"
    try:
        if by == "route":
            found = calc_price(counted, model, provider_id=ROUTES[route], genai_request_timestamp=when)
        elif url:
            found = calc_price(counted, model, provider_api_url=url, genai_request_timestamp=when)
        else:
            found = calc_price(counted, model, genai_request_timestamp=when)
    except LookupError:
        return "unknown", None
    return by, found.total_price


def _base_url(log: SessionLog) -> str | None:
    """The route's base URL, if the log's latest route notice names one (`request/context`'s `baseUrl`)."""
    for seq in range(log.event_count - 1, -1, -1):
        if log.types[seq] == "request/context":
            url = payload_as(log.event(seq).payload, RequestContext).base_url
            return url if url is not None and url.startswith(("https://", "http://")) else None
    return None


@functools.cache
def _library_version() -> str:
    from genai_prices import __version__

    return __version__


@functools.cache
def _newest_price_date() -> str:
    """The newest dated price change the library's bundled data holds: how current its prices are."""
    from genai_prices import data_snapshot
    from genai_prices.types import StartDateConstraint

    dates = [
        price.constraint.start_date
        for provider in data_snapshot.get_snapshot().providers
        for model in provider.models
        if isinstance(model.prices, list)
        for price in model.prices
        if isinstance(price.constraint, StartDateConstraint)
    ]
    return max(dates).isoformat() if dates else "undated"


def prices_from(own: bytes | None, currency: str | None) -> Prices:
    """The prices a server or `check` was given: `own`, a JSON list of a team's prices per million tokens in USD
    (`[{"model", "route"?, "input", "output", "cacheRead"?, "cacheWrite"?}]`), and `currency` as `CODE=RATE`
    (units of CODE per USD). Raises ValueError naming what is wrong."""
    overrides = tuple(_override(item) for item in _price_list(own)) if own is not None else ()
    if not currency:
        return Prices(overrides)
    code, _, rate = currency.partition("=")
    try:
        amount = Decimal(rate)
    except ArithmeticError:
        amount = Decimal(0)
    if not code.isalpha() or not amount.is_finite() or amount <= 0:
        raise ValueError(f"a currency is CODE=RATE, units of CODE per USD, as EUR=0.92; not {currency!r}")
    return Prices(overrides, code.upper(), amount)


def _price_list(own: bytes) -> list[Any]:
    import orjson

    try:
        found = orjson.loads(own)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"the prices file is not JSON: {exc}") from None
    if not isinstance(found, list):
        raise ValueError('the prices file holds a list: [{"model": …, "input": …, "output": …}]')
    return found


def _override(item: Any) -> PriceOverride:
    if not isinstance(item, dict) or not isinstance(item.get("model"), str):
        raise ValueError(f"each price names its model: {item!r}")

    def amount(name: str, required: bool) -> Decimal | None:
        value = item.get(name)
        if value is None and not required:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"{item['model']}: {name} is a price per million tokens, not {value!r}")
        return Decimal(str(value))

    route = item.get("route")
    return PriceOverride(
        item["model"],
        route if isinstance(route, str) else None,
        amount("input", True) or Decimal(0),
        amount("output", True) or Decimal(0),
        amount("cacheRead", False),
        amount("cacheWrite", False),
    )
