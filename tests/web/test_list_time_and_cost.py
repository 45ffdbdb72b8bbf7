"""The session list by time and money (issue 40): duration and cost columns, sortable; a model filter; the
overview of what the chosen sessions took and cost, with its twin."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
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


def rows(client: httpx.Client, **params: str) -> list[dict]:
    return client.get("/api/sessions", params={"summaries": "true", **params}).json()["sessions"]


def test_each_row_carries_its_cost_and_wall_time_as_the_session_twin_gives_them(client: httpx.Client) -> None:
    for row in rows(client):
        twin = client.get(f"/api/sessions/{row['key']}").json()
        summary = row["summary"]
        assert {k: twin["cost"][k] for k in summary["cost"]} == summary["cost"]
        assert summary["durations"]["wallMs"] == (twin["durations"] or {"wallMs": 0})["wallMs"]
        assert summary["models"] == sorted({r["model"] for r in twin["cost"]["routes"]})


@pytest.mark.parametrize(
    ("column", "value"), [("cost", lambda s: s["cost"]["total"]), ("duration", lambda s: s["durations"]["wallMs"])]
)
def test_the_list_sorts_by_cost_and_by_duration(client: httpx.Client, column: str, value: object) -> None:
    found = [value(r["summary"]) for r in rows(client, sort=column)]  # type: ignore[operator]
    assert found == sorted(found, reverse=True) and len(set(found)) > 2
    ascending = [value(r["summary"]) for r in rows(client, sort=column, order="asc")]  # type: ignore[operator]
    assert ascending == sorted(found)


def test_the_model_filter_keeps_the_sessions_a_model_answered(client: httpx.Client) -> None:
    listing = client.get("/api/sessions", params={"summaries": "true"}).json()
    assert listing["choices"]["models"] == ["deepseek-v4-flash"]
    kept = rows(client, model="deepseek-v4-flash")
    assert len(kept) == 4, "the session of three events made no call"
    assert rows(client, model="deepseek-v4-pro") == []
    page = parse(client.get("/", params={"model": "deepseek-v4-flash"}).text)
    assert [o.get("value") for o in select(page, "[data-filter=model] option[selected]")] == ["deepseek-v4-flash"]


def test_the_overview_sums_what_is_listed(client: httpx.Client) -> None:
    listing = client.get("/api/sessions", params={"summaries": "true"}).json()
    overview, summaries = listing["overview"], [r["summary"] for r in listing["sessions"]]
    assert (overview["sessions"], overview["read"]) == (5, 5)
    assert overview["tokens"] == sum(s["tokens"] or 0 for s in summaries)
    assert overview["cost"]["total"] == pytest.approx(sum(s["cost"]["total"] for s in summaries))
    walls = [s["durations"]["wallMs"] for s in summaries]
    assert overview["medianMs"] == statistics.median(walls) and overview["slowestMs"] == max(walls)
    slowest = next(r for r in listing["sessions"] if r["summary"]["durations"]["wallMs"] == max(walls))
    assert overview["slowest"] == {"key": slowest["key"], "url": slowest["url"]}
    page = parse(client.get("/").text)
    parts = {el.get("data-overview"): text_of(el) for el in select(page, "[data-overview]")}
    assert (
        parts["cost"] == f"cost {amount(overview['cost']['total'], 'USD')}" and parts["slowest"] == "slowest 1 min 1 s"
    )
    assert parts["source"].startswith("genai-prices 0.") and "each call at its own time" in parts["source"]
    assert select(page, "[data-overview=slowest] a")[0].get("href") == overview["slowest"]["url"]
    zh = {
        el.get("data-overview"): text_of(el)
        for el in select(parse(client.get("/", headers=ZH).text), "[data-overview]")
    }
    assert zh["median"] == "中位数 156 毫秒"


def test_the_first_twin_asked_for_summaries_counts_them_in_its_overview_and_models() -> None:
    """A script's first `?summaries=true` gets the overview and the model choices of what that request read."""
    with app_client([str(HOME)]) as fresh:
        listing = fresh.get("/api/sessions", params={"summaries": "true"}).json()
    assert (listing["overview"]["sessions"], listing["overview"]["read"]) == (5, 5)
    assert listing["overview"]["tokens"] == sum(r["summary"]["tokens"] or 0 for r in listing["sessions"]) > 0
    assert listing["choices"]["models"] == ["deepseek-v4-flash"]


def test_a_session_no_price_covers_says_price_unknown_never_zero(tmp_path: Path) -> None:
    timed_log(tmp_path, one_call("our-model", "our-gateway"))  # written to tmp_path/session.jsonl
    with app_client([str(tmp_path)]) as client:
        (row,) = rows(client)
        cell = select(parse(client.get("/").text), "[data-cost]")[0]
        overview = client.get("/api/sessions").json()["overview"]
    assert row["summary"]["cost"]["total"] is None and row["summary"]["cost"]["unknownCalls"] == 1
    assert text_of(cell) == "price unknown" and cell.has_attr("data-price-unknown")
    assert overview["cost"]["total"] is None and overview["cost"]["unknownCalls"] == 1


def test_a_compactions_own_call_counts_in_its_row(client: httpx.Client) -> None:
    (row,) = [r for r in rows(client) if r["key"].endswith(COMPACTED)]
    steps = client.get(f"/api/sessions/{row['key']}").json()["cost"]["steps"]
    _, compaction = corpus_compaction()
    assert row["summary"]["cost"]["total"] == pytest.approx(sum(s["total"] for s in steps) + float(compaction))


def test_a_session_whose_calls_logged_no_usage_says_price_unknown_not_zero(tmp_path: Path) -> None:
    timed_log(tmp_path, unmeasured_call())
    with app_client([str(tmp_path)]) as client:
        (row,) = rows(client)
        cell = select(parse(client.get("/").text), "[data-cost]")[0]
    assert row["summary"]["cost"] | {"source": ""} == {
        "total": None,
        "currency": "USD",
        "source": "",
        "unknownCalls": 1,
    }
    assert text_of(cell) == "price unknown" and cell.has_attr("data-price-unknown")


def test_the_overview_and_models_follow_the_summaries_read_since_they_were_last_shown(tmp_path: Path) -> None:
    """They are kept with the list (a warm list of 10,000 sessions made them on each request), and made again
    once a summary more is read: a list shown before any was read does not stay empty."""
    for folder, model in (("a", "deepseek-v4-flash"), ("b", "deepseek-v4-pro")):
        (tmp_path / folder).mkdir()
        timed_log(tmp_path / folder, one_call(model))
    with app_client([str(tmp_path)]) as client:
        unread = client.get("/api/sessions").json()
        assert (unread["overview"]["read"], unread["overview"]["tokens"], unread["choices"]["models"]) == (0, 0, [])
        read = client.get("/api/sessions", params={"summaries": "true"}).json()
        listing = client.get("/api/sessions").json()
        page = parse(client.get("/").text)
    assert listing["overview"] == read["overview"] and listing["overview"]["read"] == 2
    assert listing["overview"]["tokens"] == sum(r["summary"]["tokens"] for r in read["sessions"]) > 0
    assert listing["choices"]["models"] == ["deepseek-v4-flash", "deepseek-v4-pro"]
    offered = [o.get("value") for o in select(page, "[data-filter=model] option")]
    assert "deepseek-v4-flash" in offered and "deepseek-v4-pro" in offered
