"""What a session cost, where it is read: the session header, the session twin and `check --json` (issue 40)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from dsh_inspect.cli import main, run_check
from dsh_inspect.web.present.spend.cost import amount

from tests.support.prices import COMPACTED, HOME, corpus_compaction
from tests.support.rows import parse, select, text_of
from tests.support.server import app_client
from tests.support.timed_logs import one_call, timed_log, unmeasured_call

ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with app_client([str(HOME)]) as client:
        yield client


def test_the_twin_gives_the_cost_check_json_gives_with_each_step_and_turn(client: httpx.Client) -> None:
    cost = client.get(f"/api/sessions/{COMPACTED}").json()["cost"]
    out = io.StringIO()
    run_check([str(next(HOME.glob(f"*/{COMPACTED}")))], as_json=True, out=out, err=io.StringIO())
    (report,) = orjson.loads(out.getvalue())["sessions"]
    assert {k: cost[k] for k in ("total", "currency", "source", "unknownCalls")} == report["cost"]
    assert cost["currency"] == "USD" and cost["unknownCalls"] == 0 and cost["total"] > 0
    assert [s["key"] for s in cost["steps"]] == ["1.1", "1.2", "2.1", "3.1", "3.2"]
    assert [t["turn"] for t in cost["turns"]] == [1, 2, 3]
    # its compaction between turns 2 and 3 is a model call of its own: no step's, no turn's
    seq, compaction = corpus_compaction()
    assert cost["compactions"] == [{"seq": seq, "total": float(compaction), "unknownCalls": 0}]
    assert sum(t["total"] for t in cost["turns"]) + float(compaction) == pytest.approx(cost["total"])
    assert sum(s["total"] for s in cost["steps"]) + float(compaction) == pytest.approx(cost["total"])
    assert cost["routes"] == [
        {"route": "deepseek-official", "model": "deepseek-v4-flash", "pricedBy": "route", "calls": 6}
    ]


def test_the_header_says_the_cost_and_which_prices_it_used(client: httpx.Client) -> None:
    total = client.get(f"/api/sessions/{COMPACTED}").json()["cost"]["total"]
    shown = select(parse(client.get(f"/sessions/{COMPACTED}/facts").text), "[data-session-cost]")[0]
    assert text_of(shown).startswith(f"cost {amount(total, 'USD')} (genai-prices 0.")
    assert "each call at its own time" in text_of(select(shown, "[data-price-source]")[0])
    zh = select(parse(client.get(f"/sessions/{COMPACTED}/facts", headers=ZH).text), "[data-session-cost]")[0]
    assert text_of(zh).startswith(f"费用 {amount(total, 'USD')}")


def test_another_currency_at_its_stated_rate(client: httpx.Client) -> None:
    usd = client.get(f"/api/sessions/{COMPACTED}").json()["cost"]
    with app_client([str(HOME)], currency="EUR=0.5") as euros:
        eur = euros.get(f"/api/sessions/{COMPACTED}").json()["cost"]
        shown = text_of(select(parse(euros.get(f"/sessions/{COMPACTED}/facts").text), "[data-session-cost]")[0])
    assert eur["currency"] == "EUR" and eur["total"] == pytest.approx(usd["total"] / 2)
    assert f"cost {amount(eur['total'], 'EUR')} (" in shown and "1 USD = 0.5 EUR" in shown


def test_check_prices_with_the_prices_and_currency_a_server_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = tmp_path / "prices.json"
    own.write_bytes(orjson.dumps([{"model": "deepseek-v4-flash", "input": 1, "output": 2}]))
    log = str(next(HOME.glob(f"*/{COMPACTED}")))
    assert main(["check", "--json", "--prices", str(own), "--currency", "EUR=0.5", log]) == 0
    (report,) = orjson.loads(capsys.readouterr().out)["sessions"]
    with app_client([str(HOME)], prices_file=str(own), currency="EUR=0.5") as served:
        cost = served.get(f"/api/sessions/{COMPACTED}").json()["cost"]
    assert report["cost"] == {k: cost[k] for k in ("total", "currency", "source", "unknownCalls")}
    assert report["cost"]["currency"] == "EUR" and "1 own prices" in report["cost"]["source"]
    assert main(["check", "--json", "--currency", "EUR=nothing", log]) == 2
    assert capsys.readouterr().err.startswith("dsh-inspect check: ")


def test_the_header_says_which_rule_priced_each_route(client: httpx.Client, tmp_path: Path) -> None:
    said = select(parse(client.get(f"/sessions/{COMPACTED}/facts").text), "[data-session-cost] [data-priced-by]")
    assert [text_of(s) for s in said] == ["priced by route deepseek-official → deepseek"]
    zh = select(parse(client.get(f"/sessions/{COMPACTED}/facts", headers=ZH).text), "[data-priced-by]")
    assert [text_of(s) for s in zh] == ["按路由 deepseek-official → deepseek 计价"]
    three = [*one_call(provider="my-gateway"), *one_call("our-model", "our-gateway"), *unmeasured_call()]
    timed_log(tmp_path, [(at + 10 * i, e) for i, (at, e) in enumerate(three)])
    with app_client([str(tmp_path)]) as own:
        (row,) = own.get("/api/sessions").json()["sessions"]
        routes = own.get(f"/api/sessions/{row['key']}").json()["cost"]["routes"]
        shown = text_of(select(parse(own.get(f"/sessions/{row['key']}/facts").text), "[data-priced-by]")[0])
        shown_zh = text_of(
            select(parse(own.get(f"/sessions/{row['key']}/facts", headers=ZH).text), "[data-priced-by]")[0]
        )
    assert [(r["route"], r["pricedBy"]) for r in routes] == [
        ("my-gateway", "model"),
        ("our-gateway", "unknown"),
        ("deepseek-official", "no-usage"),
    ]
    assert shown == (
        "route my-gateway priced by model name alone · no price for our-model on route our-gateway"
        " · 1 call on route deepseek-official logged no usage"
    )
    assert shown_zh == (
        "路由 my-gateway 仅按模型名计价 · 路由 our-gateway 上的 our-model 无价格"
        " · 路由 deepseek-official 有 1 次调用未记录用量"
    )
