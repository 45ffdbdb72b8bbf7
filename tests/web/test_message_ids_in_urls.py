"""Message ids of any length and spelling in links: a long id is named by a short stable handle in every link,
anchor, `?at=`, permalink and JSON twin, and every route resolves it; a short one keeps its verbatim anchor
(docs/product.md Interfaces). No URL the app prints grows with what a log holds (issue 15 item 8)."""

from __future__ import annotations

from collections.abc import Iterator
from html import unescape
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import orjson
import pytest
from dsh_inspect.history.message_handles import LONGEST_ID, message_handle

from tests.support.builders import LogBuilder, header
from tests.support.rows import attrs, flow_rows, one
from tests.support.server import app_client
from tests.support.server import twin_rows as twin_rows_of

LONG = "L" * 100_000
ODD = ["a/b", "c#d", "e?f=g&h", "100%25 %", "with spaces", "中文-ид-🙂", "~0123456789abcdef", LONG, "M" * 129]
SHORTEST_URL = 400  # characters: what a link the app prints stays under, whatever the ids
WINDOW = 8  # rows per window (more than a page opened at a row shows before it): the log spans several, so
# each test reads every window, not the first alone


def odd_log() -> bytes:
    """The odd ids two by two: each turn's prompt carries one, and its answer the next."""
    b = LogBuilder()
    for turn, pair in enumerate(zip(ODD[::2], [*ODD[1::2], None], strict=True), 1):
        b.turn(turn, f"prompt {turn}")
        next(e for e in reversed(b.events) if e["type"] == "user/message")["data"]["id"] = pair[0]
        if pair[1] is not None:
            next(e for e in reversed(b.events) if e["type"] == "assistant/message")["data"]["message"]["id"] = pair[1]
    return b"".join(orjson.dumps(x) + b"\n" for x in [header("odd"), *b.events])


def repeating_log() -> bytes:
    """Two prompts with one long id: the second row's anchor is the handle's `~2`, and a warning says so."""
    b = LogBuilder()
    for turn in (1, 2):
        b.turn(turn, f"prompt {turn}")
        next(e for e in reversed(b.events) if e["type"] == "user/message")["data"]["id"] = LONG
    return b"".join(orjson.dumps(x) + b"\n" for x in [header("repeat"), *b.events])


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("odd-ids")
    (root / "odd.jsonl").write_bytes(odd_log())
    (root / "repeat.jsonl").write_bytes(repeating_log())
    with app_client([str(root)], window_rows=WINDOW) as client:
        yield client


def page(client: httpx.Client, path: str = "/sessions/odd", **params: str) -> str:
    response = client.get(f"{path}", params=params, timeout=60)
    assert response.status_code == 200, (path, response.status_code)
    return response.text


def twin_rows(client: httpx.Client, key: str = "odd") -> list[dict[str, Any]]:
    """Every row of session `key` as the JSON twin pages them, window by window."""
    rows = twin_rows_of(client, key)
    assert len(rows) > 2 * WINDOW  # several windows read, so a row any of them lacks is missed
    return rows


def whole_page(client: httpx.Client, key: str = "odd") -> str:
    """The page of session `key` with every later window of rows, as scrolling down loads them."""
    html = [page(client, f"/sessions/{key}")]
    for start in range(WINDOW, len(twin_rows(client, key)), WINDOW):
        html.append(page(client, f"/sessions/{key}/rows", **{"from": str(start), "direction": "later"}))
    return "".join(html)


def test_a_long_id_anchors_by_its_handle_and_a_short_one_verbatim() -> None:
    assert message_handle("with spaces") == "with spaces" and message_handle("M" * LONGEST_ID) == "M" * LONGEST_ID
    handle = message_handle(LONG)
    assert handle.startswith("~") and len(handle) == 17 and handle == message_handle(LONG)
    assert message_handle("~0123456789abcdef") != "~0123456789abcdef"  # an id spelled like a handle is named by one


def test_the_rows_anchor_every_message_and_no_anchor_is_long(client: httpx.Client) -> None:
    rows = flow_rows(whole_page(client))
    anchors = {r.anchor for r in rows}
    assert anchors >= {f"msg-{message_handle(i)}" for i in ODD}
    assert all(len(r.anchor) < 100 for r in rows)
    assert "msg-with spaces" in anchors and "msg-a/b" in anchors
    twin = twin_rows(client)
    assert [r["anchor"] for r in twin] == [r.anchor for r in rows]  # the page and its twin, row for row
    assert {r["messageId"]: r["anchor"] for r in twin if r.get("messageId") in ODD} == {
        i: f"msg-{message_handle(i)}" for i in ODD
    }  # the id itself is data: the twin keeps it whole, next to the anchor its handle makes


def test_every_link_on_the_page_is_short_and_answers(client: httpx.Client) -> None:
    html = whole_page(client)
    links = {h for h in attrs(html, "a[href]", "href") if h.startswith(("/", "#"))}
    assert any("/messages/" in h for h in links)
    for href in links:
        assert len(href) < SHORTEST_URL, href[:200]
        if href.startswith("#"):
            assert one(html, f'[id="{unquote(href[1:])}"]') is not None
            continue
        response = client.get(f"{href}", timeout=60)
        assert response.status_code < 400, (href, response.status_code)


def test_each_messages_identity_page_and_twin_answer_at_its_link(client: httpx.Client) -> None:
    html = whole_page(client)
    handles = {message_handle(i): i for i in ODD}
    links = {
        handles[name]: h
        for h in attrs(html, "a[data-identity-link]", "href")
        if (name := unquote(urlsplit(h).path.rpartition("/messages/")[2])) in handles
    }
    assert set(links) == set(ODD)
    for message_id, href in links.items():
        shown = page(client, href)
        assert message_id in unescape(shown)  # the page names the message by its whole id
        twin = client.get(f"/api{href}", timeout=60)
        assert twin.status_code == 200 and twin.json()["id"] == message_id
        for carrier_link in attrs(shown, "a[href]", "href"):
            assert len(carrier_link) < SHORTEST_URL


def test_at_and_locate_open_at_a_long_ids_anchor(client: httpx.Client) -> None:
    anchor = f"msg-{message_handle(LONG)}"
    html = page(client, at=anchor)
    assert one(html, "[data-chat-flow]")["data-open-at"] == anchor
    assert anchor in [r.anchor for r in flow_rows(html)]
    located = client.get("/api/sessions/odd/locate", params={"anchor": anchor}).json()
    assert located["anchor"] == anchor
    for message_id in ODD:
        at = f"msg-{message_handle(message_id)}"
        found = client.get("/api/sessions/odd/rows", params={"at": at})
        assert found.status_code == 200 and at in [r["anchor"] for r in found.json()["rows"]], message_id[:20]


def test_the_full_id_still_names_its_identity_page(client: httpx.Client) -> None:
    assert client.get("/api/sessions/odd/messages/with%20spaces").json()["id"] == "with spaces"
    assert client.get(f"/api/sessions/odd/messages/{'M' * 129}").json()["id"] == "M" * 129


def test_a_repeated_long_id_is_warned_of_by_the_anchor_its_row_has(client: httpx.Client) -> None:
    html = whole_page(client, "repeat")
    second = f"msg-{message_handle(LONG)}~2"
    assert second in [r.anchor for r in flow_rows(html)]
    warning = next(r for r in flow_rows(html) if r.kind == "diagnostic").element.get_text(" ")
    assert f"anchors at {second}" in warning
    assert "LLLL" in warning and len(warning) < 1000  # the id quoted, cut short: not its 100,000 characters
