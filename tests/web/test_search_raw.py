"""In-session search matches what a row shows or opens to show; the raw event JSON behind a compact
event row only when asked (`raw=true`): a word only that JSON holds finds no row otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from dsh_inspect.log.writer import write_artifact

from tests.support.builders import LogBuilder, header
from tests.support.rows import flow_rows, opened, text_of
from tests.support.server import app_client


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("search-raw")
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    # dsh's inbox splice: its payload (a whole message) is JSON behind the row, not what it shows
    b.add("agent/inbox/spliced", {"inbox": "next-step", "messages": [{"text": "zebrafish README"}]})
    b.add("session/title", {"title": "Pelican plan"})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Read a.txt please")
    b.assistant(1, 1, [{"type": "reasoning", "text": "quokka thoughts"}, {"type": "text", "text": "Reading."}])
    b.tool_round(1, 1, "call_1", "walrus inside the file")
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    write_artifact(root, header("raw"), [b.events], "none")
    with app_client([str(root)]) as client:
        yield client


def found(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    reply = client.get("/api/sessions/raw/search", params=params)
    assert reply.status_code == 200, reply.text
    return list(reply.json()["matches"])


def row_text(client: httpx.Client, anchor: str) -> str:
    """What the row shows once every body in it is open."""
    rows = {row.anchor: row for row in flow_rows(opened(client, client.get("/sessions/raw").text, "/sessions/raw"))}
    return text_of(rows[anchor].element)


def test_a_word_only_in_raw_json_is_found_only_with_raw(client: httpx.Client) -> None:
    assert found(client, q="zebrafish") == []
    assert found(client, q="README") == []
    hits = found(client, q="zebrafish", raw="true")
    assert [h["kind"] for h in hits] == ["event"]
    assert "agent/inbox/spliced" in row_text(client, hits[0]["anchor"])
    assert "zebrafish" in row_text(client, hits[0]["anchor"]), "its opened JSON shows the word"
    assert client.get("/api/sessions/raw/search", params={"q": "x", "raw": "true"}).json()["query"]["raw"]


def test_what_a_row_shows_is_found_without_raw(client: httpx.Client) -> None:
    title = found(client, q="pelican")  # a compact event row's header shows its scalar fields
    assert len(title) == 1 and "Pelican plan" in row_text(client, title[0]["anchor"])
    spliced = found(client, q="agent/inbox/spliced")  # and its type
    assert len(spliced) == 1
    assert found(client, q="pelican", raw="true") == title, "raw adds to what rows show, takes nothing away"


def test_what_a_row_opens_to_show_is_found(client: httpx.Client) -> None:
    reasoning = found(client, q="quokka")
    assert [h["kind"] for h in reasoning] == ["assistant-step"]
    result = found(client, q="walrus")
    assert [h["kind"] for h in result] == ["tool-call"]
    for hit in [*reasoning, *result]:
        assert hit["anchor"] and hit["seq"] >= 0
