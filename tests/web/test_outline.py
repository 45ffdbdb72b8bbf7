"""The outline's twin (issue 39, item 3): each turn with its first prompt, then the errors, compactions and
subagents a reader looks for, in order, each with the anchor `?at=` opens."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from dsh_inspect.demo.generate import SESSIONS

from tests.support.server import app_client


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with app_client([str(SESSIONS)]) as client:
        yield client


def outline(client: httpx.Client, key: str) -> list[dict[str, Any]]:
    answer = client.get(f"/api/sessions/{key}/outline")
    assert answer.status_code == 200
    return list(answer.json()["entries"])


def test_turns_carry_their_first_prompt_and_a_compaction_lies_between_them(client: httpx.Client) -> None:
    entries = outline(client, "demo-compaction")
    assert [(e["kind"], e["turn"], e["text"]) for e in entries] == [
        ("turn", 1, "Why does test_retry fail?"),
        ("turn", 2, "Suggest a fix."),
        ("compaction", None, "Compacted 6 history items (~412 tokens)."),
        ("turn", 3, "Apply the fix."),
    ]
    assert [e["seq"] for e in entries] == sorted(e["seq"] for e in entries)


def test_errors_and_subagents_are_listed_with_what_their_rows_say(client: httpx.Client) -> None:
    tools = outline(client, "demo-tools")
    assert [(e["kind"], e["text"]) for e in tools if e["kind"] == "error"] == [
        ("error", "Error: old_string not found in README.md"),
        ("error", "Error: the user rejected running this command"),
    ]
    parent = outline(client, "demo-subagent-parent")
    assert [e["kind"] for e in parent] == ["turn", "subagent", "turn"]
    assert "Find the flaky test" in parent[1]["text"]


def test_each_entry_names_the_row_the_page_opens_at(client: httpx.Client) -> None:
    for entry in outline(client, "demo-tools"):
        page = client.get(f"/sessions/demo-tools?at={entry['anchor']}")
        assert page.status_code == 200
        assert f'id="{entry["anchor"]}"' in page.text
    rows = client.get("/api/sessions/demo-tools/rows?from=0").json()["rows"]
    anchors = {e["anchor"]: e["index"] for e in outline(client, "demo-tools")}
    assert all(rows[i]["anchor"] == a for a, i in anchors.items() if i < len(rows))


def test_an_unknown_session_has_no_outline(client: httpx.Client) -> None:
    assert client.get("/api/sessions/no-such-session/outline").status_code == 404
