"""Real dsh logs (issue 14, deliverable 5): a subagent call names its child, and the row links the child's
page when the child is loaded with it; a fixture written without times shows no clock and no speed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.rows import flow_rows, one, opened, select
from tests.support.server import live_server

pytestmark = pytest.mark.corpus

SCENARIO = "sessions/examples/acp-agent/tests/snapshots/subagent-continuable"
CHILD = "33333333-3333-4333-8333-333333333333"
MISSING = "22222222-2222-4222-8222-222222222222"


@pytest.fixture(scope="module")
def server(corpus_dir: Path) -> Iterator[str]:
    with live_server([str(corpus_dir / SCENARIO)]) as url:
        yield url


def key_with_id(server: str, session_id: str) -> str:
    sessions = httpx.get(f"{server}/api/sessions").json()["sessions"]
    (key,) = [s["key"] for s in sessions if s["id"] == session_id]
    return str(key)


def test_the_subagent_calls_link_the_child_they_name(server: str) -> None:
    parent = key_with_id(server, "11111111-1111-4111-8111-111111111111")
    child_url = f"/sessions/{key_with_id(server, CHILD)}"
    with httpx.Client(base_url=server) as client:  # each tool row opened: the note is in its body
        rows = flow_rows(opened(client, client.get(f"/sessions/{parent}").text, f"/sessions/{parent}"))
    named = []
    for row in (r for r in rows if r.kind == "tool-call"):
        for note in select(row.element, "[data-child-session]"):
            link = note.select_one("a[data-child-session-link]")
            tool = str(one(row.element, "[data-tool]")["data-tool"])
            named.append((tool, str(note["data-child-session"]), str(link["href"]) if link else None))
    # "started subagent <id>"; two messages sent to it by its `subagent_id`; one to a subagent that does not
    # exist (the scenario checks that it fails), named but not linked
    assert named == [
        ("subagent", CHILD, child_url),
        ("send_message", CHILD, child_url),
        ("send_message", CHILD, child_url),
        ("send_message", MISSING, None),
    ]
    twin = httpx.get(f"{server}/api/sessions/{parent}/rows").json()["rows"]
    assert [
        (r["tool"]["name"], r["tool"]["childSession"]) for r in twin if r["tool"] and r["tool"]["childSession"]
    ] == [(tool, child) for tool, child, _ in named]


def test_a_fixture_without_times_shows_no_clock_nor_speed(server: str) -> None:
    parent = key_with_id(server, "11111111-1111-4111-8111-111111111111")
    html = httpx.get(f"{server}/sessions/{parent}").text
    assert not select(one(html, "[data-chat-flow]"), "time") and "TTFT" not in html and "tok/s" not in html
