"""What each model call cost (history/spend/cost.py): genai-prices' prices at the call's own time, cache reads
priced as cache reads, a team's own prices, another currency, and "price unknown" never 0."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from dsh_inspect.history.spend.cost import PriceOverride, Prices, session_cost
from dsh_inspect.testing import events as ev
from dsh_inspect.web.present.spend.cost import RULES_SAID, priced_by

from tests.support.logs import load_path
from tests.support.prices import COMPACTED, COMPACTION_USAGE, HOME, corpus_compaction, library_price
from tests.support.timed_logs import one_call, timed_log, unmeasured_call

NOON = int(datetime(2026, 12, 1, 12, 0, tzinfo=UTC).timestamp() * 1000)  # DeepSeek's standard hours
PEAK = int(datetime(2026, 12, 1, 2, 0, tzinfo=UTC).timestamp() * 1000)  # 01:00-04:00 UTC: twice the price
BEFORE = int(datetime(2026, 6, 1, 12, 0, tzinfo=UTC).timestamp() * 1000)  # before the 2026-08-17 change


def per_million(input_: str, cache_read: str, output: str) -> Decimal:
    """USD for `USAGE` at these prices per million tokens (input, cache read, output)."""
    tokens = 1000 * Decimal(input_) + 500 * Decimal(cache_read) + 200 * Decimal(output)
    return tokens / 1_000_000


@pytest.mark.parametrize(
    ("model", "at", "expected"),
    [
        ("deepseek-v4-flash", NOON, per_million("0.15", "0.003", "0.6")),
        ("deepseek-v4-flash", PEAK, per_million("0.3", "0.006", "1.2")),
        ("deepseek-v4-flash", BEFORE, per_million("0.14", "0.0028", "0.28")),
        ("deepseek-v4-pro", BEFORE, per_million("0.435", "0.003625", "0.87")),
        ("deepseek-v4-flash-vision-exp", NOON, per_million("0.15", "0.003", "0.6")),
    ],
    ids=["flash", "flash-peak-hours", "flash-before-its-price-change", "pro", "flash-vision"],
)
def test_a_call_is_priced_at_its_own_time_cache_reads_as_cache_reads(
    tmp_path: Path, model: str, at: int, expected: Decimal
) -> None:
    cost = session_cost(timed_log(tmp_path, one_call(model), start=at), Prices())
    (call,) = cost.calls
    assert (call.priced_by, call.total) == ("route", expected)
    assert cost.to_json()["total"] == float(expected) and cost.unknown == 0
    assert cost.to_json()["source"].startswith("genai-prices 0.")


def test_a_model_no_price_covers_is_price_unknown_never_zero(tmp_path: Path) -> None:
    cost = session_cost(timed_log(tmp_path, one_call("title-model", "title-replay"), start=NOON), Prices())
    (call,) = cost.calls
    assert (call.priced_by, call.total) == ("unknown", None)
    assert cost.to_json() | {"source": ""} == {"total": None, "currency": "USD", "source": "", "unknownCalls": 1}


def test_a_route_of_its_own_is_priced_by_the_model_name(tmp_path: Path) -> None:
    cost = session_cost(timed_log(tmp_path, one_call(provider="my-gateway"), start=NOON), Prices())
    assert [(c.priced_by, c.total) for c in cost.calls] == [("model", per_million("0.15", "0.003", "0.6"))]


def test_a_teams_own_price_comes_first_and_another_currency_at_its_stated_rate(tmp_path: Path) -> None:
    own = PriceOverride("title-model", "title-replay", input=Decimal(2), output=Decimal(8), cache_read=Decimal(1))
    prices = Prices((own,), currency="EUR", rate=Decimal("0.5"))
    cost = session_cost(timed_log(tmp_path, one_call("title-model", "title-replay"), start=NOON), prices)
    assert [(c.priced_by, c.total) for c in cost.calls] == [("override", per_million("2", "1", "8"))]
    found = cost.to_json()
    assert found["total"] == float(per_million("2", "1", "8") / 2) and found["currency"] == "EUR"
    assert "1 own prices" in found["source"] and "0.5 EUR per USD" in found["source"]


def test_steps_and_turns_add_up_to_the_session(tmp_path: Path) -> None:
    second = [(at + 10, event) for at, event in one_call("deepseek-v4-pro")]
    cost = session_cost(timed_log(tmp_path, [*one_call(), *second], start=NOON), Prices())
    detail = cost.detail_json()
    assert [s["key"] for s in detail["steps"]] == ["1.1", "2.1"] and [t["turn"] for t in detail["turns"]] == [1, 2]
    assert sum(Decimal(str(s["total"])) for s in detail["steps"]) == Decimal(str(detail["total"]))
    assert {(r["model"], r["pricedBy"]) for r in detail["routes"]} == {
        ("deepseek-v4-flash", "route"),
        ("deepseek-v4-pro", "route"),
    }


def test_every_corpus_call_with_usage_is_priced() -> None:
    for path in HOME.glob("*/*/session.jsonl.zstd"):
        cost = session_cost(load_path(path), Prices())
        assert cost.unknown == 0 and all(c.total is not None and c.total > 0 for c in cost.calls)


def test_a_route_whose_base_url_the_log_names_is_priced_by_that_url(tmp_path: Path) -> None:
    route = {"type": "request/context", "data": {"provider": "my-gateway", "model": "deepseek-v4-flash"}}
    route["data"]["baseUrl"] = "https://api.deepseek.com/v1"
    calls = one_call(provider="my-gateway")
    cost = session_cost(timed_log(tmp_path, [*calls[:3], (1, route), *calls[3:]], start=NOON), Prices())
    assert [(c.priced_by, c.total) for c in cost.calls] == [("url", per_million("0.15", "0.003", "0.6"))]


def summarised(manual: bool) -> list[dict[str, Any]]:
    """A compaction whose summary a model call wrote and logged (`llmStreamCall`, its usage `COMPACTION_USAGE`):
    `manual` the `/compact` command between turns, else an automatic one inside the open turn."""
    return [
        {
            **e,
            "data": {**e["data"], "usage": COMPACTION_USAGE, "llmStreamCall": True, "rawOutput": e["data"]["summary"]},
        }
        if e["type"] == "compaction/summary"
        else e
        for e in ev.compaction("The file says alpha.", manual=manual)
    ]


def test_a_compactions_own_call_is_priced_in_its_turn_or_between_turns(tmp_path: Path) -> None:
    second = one_call()
    timed = [*one_call(), *((5, e) for e in summarised(manual=True))]
    timed += [second[0], second[1], *((6, e) for e in summarised(manual=False)), *second[2:]]
    cost = session_cost(
        timed_log(tmp_path, [(at + 10 * i, e) for i, (at, e) in enumerate(timed)], start=NOON), Prices()
    )
    compactions = [c for c in cost.calls if c.step is None]
    assert [c.turn for c in compactions] == [None, 2]
    expected = library_price(COMPACTION_USAGE, NOON)
    assert [(c.priced_by, c.total) for c in compactions] == [("route", expected)] * 2
    detail = cost.detail_json()
    assert detail["compactions"] == [{"seq": compactions[0].seq, "total": float(expected), "unknownCalls": 0}]
    turns = {t["turn"]: Decimal(str(t["total"])) for t in detail["turns"]}
    steps = {s["key"]: Decimal(str(s["total"])) for s in detail["steps"]}
    assert turns[2] == pytest.approx(steps["2.1"] + expected)
    assert sum(turns.values()) + expected == pytest.approx(Decimal(str(detail["total"])))


def test_the_corpus_compaction_is_priced_from_its_logged_usage() -> None:
    (path,) = HOME.glob(f"*/{COMPACTED}/session.jsonl.zstd")
    cost = session_cost(load_path(path), Prices())
    seq, expected = corpus_compaction()
    assert [(c.seq, c.step, c.turn, c.total) for c in cost.calls if c.step is None] == [(seq, None, None, expected)]
    assert expected > 0


def test_an_answered_call_that_logged_no_usage_is_price_unknown_never_zero(tmp_path: Path) -> None:
    unmeasured = [(at + 10, e) for at, e in unmeasured_call()]
    alone = session_cost(timed_log(tmp_path / "alone", unmeasured, start=NOON), Prices())
    assert [(c.priced_by, c.total) for c in alone.calls] == [("no-usage", None)]
    assert (alone.to_json()["total"], alone.unknown) == (None, 1)
    mixed = session_cost(timed_log(tmp_path / "mixed", [*one_call(), *unmeasured], start=NOON), Prices())
    assert (mixed.to_json()["total"], mixed.unknown) == (float(per_million("0.15", "0.003", "0.6")), 1)


def test_the_header_names_a_few_rules_and_counts_the_rest(tmp_path: Path) -> None:
    routes = [(at + 10 * i, e) for i in range(RULES_SAID + 2) for at, e in one_call(provider=f"gateway-{i}")]
    said = [str(p) for p in priced_by(session_cost(timed_log(tmp_path, routes, start=NOON), Prices()))]
    assert said == [f"route gateway-{i} priced by model name alone" for i in range(RULES_SAID)] + ["and 2 more"]
