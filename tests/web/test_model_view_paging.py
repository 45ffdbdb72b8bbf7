"""A long session's last step over HTTP: its model view pages its messages as the transcript pages its
rows (the header and the diff at once, a window of messages, loaders both ways), its JSON twin pages with
`from`, and every count on the session header and the model view reads with its thousands grouped."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.builders import LogBuilder
from tests.support.request_logs import write_log
from tests.support.rows import attrs, one, select, text, text_of
from tests.support.server import app_client

TURNS = 12  # each turn leaves four model-visible messages: prompt, tool call, result, answer
WINDOW = 10
USAGE = {"inputTokens": 46_240_000, "outputTokens": 1_234, "cacheReadTokens": 5_000_000}
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


def long_session() -> LogBuilder:
    """`TURNS` read-and-answer turns; the last step's answer logs a large usage."""
    b = LogBuilder()
    for turn in range(1, TURNS + 1):
        b.turn(turn, f"Prompt {turn}")
    b.events[-3]["data"]["usage"] = USAGE  # the last turn's answer (its step/end and turn/end follow)
    return b


def context_first() -> LogBuilder:
    """Many pieces of injected context before the first call: its diff adds them all."""
    b = LogBuilder()
    for n in range(2 * WINDOW):
        b.user(f"Context {n}", {"kind": "plugin", "plugin": "fixture"})
    b.turn(1)
    return b


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("logs")
    write_log(root / "long" / "session.jsonl", long_session().events, "long")
    write_log(root / "context" / "session.jsonl", context_first().events, "context")
    with app_client([str(root)], window_rows=WINDOW) as client:
        yield client


LAST = f"{TURNS}.2"
TOTAL = 4 * TURNS - 1  # the last step's request holds everything but its own answer


def positions(html: str) -> list[str]:
    """The places of the messages shown, in order, as the page prints them."""
    return [text_of(tag) for tag in select(html, ".mv-message .mv-position")]


def test_the_last_steps_first_screen_holds_the_header_the_diff_and_the_newest_window(client: httpx.Client) -> None:
    page = client.get(f"/sessions/long/steps/{LAST}")
    assert page.status_code == 200
    html = page.text
    assert len(page.content) < 300_000
    # the header and the diff against the previous step, at once
    assert text(html, "[data-request-header] [data-model]") == "deepseek-v4-flash"
    assert attrs(html, "[data-request-diff] [data-diff-previous] a", "href") == [f"/sessions/long/steps/{TURNS}.1"]
    assert len(select(html, "[data-request-diff] [data-diff-added] li[data-seq]")) == 2  # the tool call, its result
    # the newest window of messages, the rest a click away
    assert text(html, "[data-messages] > summary") == f"{TOTAL} model-visible messages"
    assert positions(html) == [str(p) for p in range(TOTAL - WINDOW + 1, TOTAL + 1)]
    loader = one(html, "[data-message-list] [data-messages-earlier] button")
    earlier = (
        f"/sessions/long/steps/{LAST}/messages?call=1&from={TOTAL - 2 * WINDOW}&to={TOTAL - WINDOW}&direction=earlier"
    )
    assert loader["hx-get"] == earlier
    assert "more" in text_of(loader) and str(TOTAL - WINDOW) in text_of(loader)
    assert select(html, "[data-messages-next]") == []


def test_the_partial_returns_the_window_before_and_its_own_loader(client: httpx.Client) -> None:
    earlier = client.get(f"/sessions/long/steps/{LAST}/messages", params={"call": 1, "from": 0, "direction": "earlier"})
    assert earlier.status_code == 200
    assert positions(earlier.text) == [str(p) for p in range(1, WINDOW + 1)]
    assert select(earlier.text, "[data-messages-earlier]") == []  # the list starts here
    assert select(earlier.text, "[data-messages-next]") == []  # the page holds what follows already
    middle = client.get(
        f"/sessions/long/steps/{LAST}/messages", params={"call": 1, "from": 15, "direction": "earlier"}
    ).text
    assert positions(middle) == [str(p) for p in range(16, 16 + WINDOW)]
    assert attrs(middle, "[data-messages-earlier]", "data-messages-earlier") == ["5"]
    # the first window of all ends where the one after it begins: no message shows twice
    assert (
        "from=0&to=5&"
        in attrs(
            client.get(f"/sessions/long/steps/{LAST}/messages", params={"from": 5, "direction": "earlier"}).text,
            "[data-messages-earlier] button",
            "hx-get",
        )[0]
    )
    first = client.get(
        f"/sessions/long/steps/{LAST}/messages", params={"from": 0, "to": 5, "direction": "earlier"}
    ).text
    assert positions(first) == ["1", "2", "3", "4", "5"]
    # a page opened `from` a message has loaders both ways; the later one loads as it comes into view
    opened = client.get(f"/sessions/long/steps/{LAST}", params={"from": 15}).text
    assert positions(opened)[0] == "16"
    later = one(opened, "[data-messages-next]")
    assert later["hx-trigger"] == "revealed" and later["data-messages-next"] == "25"
    assert client.get(f"/sessions/long/steps/{LAST}/messages", params={"call": 2}).status_code == 404


def test_the_json_twin_pages_with_from(client: httpx.Client) -> None:
    newest = client.get(f"/api/sessions/long/steps/{LAST}").json()["calls"][0]
    assert newest["messageWindow"] == {
        "from": TOTAL - WINDOW,
        "to": TOTAL,
        "totalMessages": TOTAL,
        "previousFrom": TOTAL - 2 * WINDOW,
        "nextFrom": None,
    }
    assert [m["position"] for m in newest["messages"]] == list(range(TOTAL - WINDOW + 1, TOTAL + 1))
    first = client.get(f"/api/sessions/long/steps/{LAST}", params={"from": 0}).json()["calls"][0]
    assert [m["position"] for m in first["messages"]] == list(range(1, WINDOW + 1))
    assert first["messageWindow"]["nextFrom"] == WINDOW and first["messageWindow"]["previousFrom"] is None
    window = client.get(f"/api/sessions/long/steps/{LAST}/messages", params={"from": 20}).json()
    assert (window["from"], window["to"], window["nextFrom"]) == (20, 30, 30)
    short = client.get(f"/api/sessions/long/steps/{LAST}/messages", params={"from": 0, "to": 7}).json()
    assert [m["position"] for m in short["messages"]] == list(range(1, 8)) and short["nextFrom"] == 7
    assert [m["position"] for m in window["messages"]] == list(range(21, 31))


@pytest.mark.parametrize(("headers", "label"), [({}, "tokens: in 46,240,000"), (ZH, "token：输入 46,240,000")])
def test_counts_are_grouped_in_both_languages(client: httpx.Client, headers: dict[str, str], label: str) -> None:
    facts = client.get("/sessions/long/facts", headers=headers).text
    shown = text(facts, "[data-session-usage]")
    assert shown.startswith(label) and "5,000,000" in shown and "1,234" in shown, shown
    view = client.get(f"/sessions/long/steps/{LAST}", headers=headers).text
    assert text(view, "[data-answered] [data-usage-input]") == "46,240,000"
    assert text(view, "[data-answered] [data-usage-cache-read]") == "5,000,000"
    assert "46240000" not in view and "46240000" not in facts
    # the JSON twin keeps the raw number
    twin = client.get(f"/api/sessions/long/steps/{LAST}").json()
    assert twin["calls"][0]["outcome"]["usage"]["inputTokens"] == 46_240_000


def test_the_budget_charts_tooltips_and_axis_are_grouped(client: httpx.Client) -> None:
    html = client.get("/sessions/long/steps").text
    ticks = [text_of(t) for t in select(html, "[data-budget-axis] text")]
    assert "50,000,000" in ticks or "40,000,000" in ticks, ticks
    title = text(html, f'[data-bar="{LAST}"] > title')
    assert "context 51,240,000" in title and f"{TOTAL} messages" in title, title


def test_a_diff_that_adds_more_than_a_window_lists_the_newest(client: httpx.Client) -> None:
    html = client.get("/sessions/context/steps/1.1").text
    added = 2 * WINDOW + 1  # the contexts and the prompt
    assert text(html, "[data-diff-added] > .tag") == f"Added ({added})"
    assert attrs(html, "[data-diff-added] li[data-seq]", "data-seq")[-1] == attrs(html, ".mv-message", "data-seq")[-1]
    assert len(select(html, "[data-diff-added] li[data-seq]")) == WINDOW
    assert f"{added - WINDOW} earlier" in text(html, "[data-diff-added-more]")
    twin = client.get("/api/sessions/context/steps/1.1").json()
    assert len(twin["calls"][0]["diff"]["added"]) == added  # the JSON twin lists them all
