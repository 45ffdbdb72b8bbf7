"""Opening a session anywhere in one response: `?at=` a message, a row, or the end (issue 13)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support.builders import LogBuilder, header
from tests.support.rows import flow_rows, one, parse
from tests.support.server import app_client, twin_rows

TURNS = 40
WINDOW = 20  # the `window_rows` setting: small, so that 40 turns make many windows
CONTEXT = 5  # rows shown above the row a page is opened at


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("open-at")
    b = LogBuilder()
    for turn in range(1, TURNS + 1):
        b.turn(turn, f"prompt number {turn}")
    path = root / "long" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("long"), *b.events]))
    return root


@pytest.fixture(scope="module")
def client(root: Path) -> Iterator[httpx.Client]:
    with app_client([str(root)], window_rows=WINDOW) as client:
        yield client


def page(client: httpx.Client, **params: str) -> str:
    response = client.get("/sessions/long", params=params)
    assert response.status_code == 200
    return response.text


def anchors(html: str) -> list[str]:
    return [row.anchor for row in flow_rows(html)]


def test_a_message_anchor_opens_its_window_with_what_led_to_it(client: httpx.Client) -> None:
    rows = twin_rows(client, "long")
    last = max(i for i, r in enumerate(rows) if r["anchor"].startswith("msg-") and r["kind"] == "assistant-step")
    html = page(client, at=rows[last]["anchor"])
    shown = anchors(html)
    assert rows[last]["anchor"] in shown
    assert shown[0] == rows[last - CONTEXT]["anchor"], "a few rows of context above the row"
    assert one(html, "[data-chat-flow]")["data-open-at"] == rows[last]["anchor"], "the page scrolls to it"
    # the loader above asks for exactly the rows before this window, so none shows twice
    earlier = one(html, "[data-window-earlier]")["data-window-href"]
    assert f"to={last - CONTEXT}" in str(earlier)
    before = client.get(f"{earlier}").text
    assert anchors(before) == [r["anchor"] for r in rows[last - CONTEXT - WINDOW : last - CONTEXT]]


def test_a_row_anchor_that_is_no_message_opens_its_window(client: httpx.Client) -> None:
    rows = twin_rows(client, "long")
    index, target = next((i, r) for i, r in enumerate(rows) if i > 100 and not r["anchor"].startswith("msg-"))
    html = page(client, at=target["anchor"])
    assert anchors(html) == [r["anchor"] for r in rows[index - CONTEXT : index - CONTEXT + WINDOW]]


def test_the_end_opens_the_last_window_with_no_loader_after_it(client: httpx.Client) -> None:
    rows = twin_rows(client, "long")
    html = page(client, at="end")
    assert anchors(html) == [r["anchor"] for r in rows[-WINDOW:]]
    assert one(html, "[data-chat-flow]")["data-open-at"] == "end"
    assert not parse(html).select("[data-window-next]"), "the live tail appends to the last window"
    assert parse(html).select("[data-window-earlier]")
    assert "rows=" + str(len(rows)) in str(one(html, "[data-live]")["sse-connect"])


def test_an_unknown_anchor_shows_the_start_and_says_so(client: httpx.Client) -> None:
    rows = twin_rows(client, "long")
    html = page(client, at="msg-gone<b>")
    assert anchors(html) == [r["anchor"] for r in rows[:WINDOW]]
    note = one(html, "[data-at-missing]")
    assert note.get_text() == "No row msg-gone<b> in this session: it is shown from the start."
    assert not parse(html).select("[data-at-missing] b"), "the anchor is text, never markup"
    assert not one(html, "[data-chat-flow]").has_attr("data-open-at")
    zh = client.get("/sessions/long", params={"at": "msg-gone"}, headers={"Accept-Language": "zh-CN"}).text
    assert one(zh, "[data-at-missing]").get_text() == "本会话中没有 msg-gone 这一行：从头显示。"


def test_the_json_twin_opens_at_the_same_window(client: httpx.Client) -> None:
    rows = twin_rows(client, "long")
    target = rows[150]["anchor"]
    twin = client.get("/api/sessions/long", params={"at": target}).json()
    assert (twin["at"], twin["atIndex"], twin["from"]) == (target, 150, 150 - CONTEXT)
    assert [r["anchor"] for r in twin["rows"]] == anchors(page(client, at=target))
    end = client.get("/api/sessions/long", params={"at": "end"}).json()
    assert (end["atIndex"], end["to"], end["nextFrom"]) == (len(rows) - 1, len(rows), None)
    missing = client.get("/api/sessions/long", params={"at": "msg-gone"}).json()
    assert (missing["at"], missing["atIndex"], missing["from"]) == ("msg-gone", None, 0)
    plain = client.get("/api/sessions/long").json()
    assert (plain["at"], plain["atIndex"]) == (None, None)


def test_the_window_partial_opens_at_an_anchor_for_the_page_to_swap_in(client: httpx.Client) -> None:
    rows = twin_rows(client, "long")
    target = rows[200]["anchor"]
    partial = client.get("/sessions/long/rows", params={"at": target})
    assert partial.status_code == 200 and target in anchors(partial.text)
    assert one(partial.text, "[data-window]")["data-from"] == str(200 - CONTEXT)
    api = client.get("/api/sessions/long/rows", params={"at": "end"}).json()
    assert [r["anchor"] for r in api["rows"]] == [r["anchor"] for r in rows[-WINDOW:]]
    assert client.get("/sessions/long/rows", params={"at": "msg-gone"}).status_code == 404
    assert client.get("/api/sessions/long/rows", params={"at": "msg-gone"}).status_code == 404
    located = client.get("/api/sessions/long/locate", params={"anchor": target}).json()
    assert located["index"] == 200, "the JSON locate stays for other clients"


def test_an_earlier_window_ends_where_the_next_begins(client: httpx.Client) -> None:
    rows = twin_rows(client, "long")
    window = client.get("/api/sessions/long/rows", params={"from": 95, "to": 107}).json()
    assert [r["anchor"] for r in window["rows"]] == [r["anchor"] for r in rows[95:107]]
    assert (window["from"], window["to"], window["previousFrom"]) == (95, 107, 95 - WINDOW)
    # `to` alone: the window that ends there (what the page asks for after dropping the rows before it)
    ending = client.get("/sessions/long/rows", params={"to": 107, "direction": "earlier"}).text
    assert anchors(ending) == [r["anchor"] for r in rows[107 - WINDOW : 107]]
    assert not parse(ending).select("[data-window-next]"), "the rows after it are in the page already"


def test_a_window_smaller_than_the_context_still_shows_the_row_opened_at(client: httpx.Client, root: Path) -> None:
    target = twin_rows(client, "long")[101]["anchor"]
    with app_client([str(root)], window_rows=3) as small:
        html = small.get("/sessions/long", params={"at": target}).text
        window = small.get("/api/sessions/long/rows", params={"at": target}).json()
    assert target in anchors(html) and len(anchors(html)) == 3
    assert target in [r["anchor"] for r in window["rows"]]
