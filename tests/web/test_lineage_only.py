"""Lineage only from lineage (issue 41, item 5): "Child sessions" lists the sessions whose header names this one
as their parent, or that this one's workflow started; a relay naming the session that sent it is a mention, and
its card says so, in both languages."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.builders import LogBuilder, header
from tests.support.rows import attrs, texts
from tests.support.server import app_client
from tests.web.test_session_list_columns import write

RELAY = {"kind": "subagent-report", "form": "relay"}
RELAY_SEQ = 2  # the relay's event, whose card `/contexts/2` opens


def mentioning(sender: str) -> LogBuilder:
    """A session whose one turn's context is a relay from session `sender`, then a workflow that starts `member`."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.user("Summarise what the other session found.")
    relay = b.user("The other session found alpha.", source={**RELAY, "senderSessionId": sender})
    assert relay["seq"] == RELAY_SEQ
    b.add("tool-workflow/agent-start", {"runId": "run-1", "seq": 1, "label": "member", "childId": "member"})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return b


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("lineage")
    write(root / "main" / "session.jsonl", header("main"), mentioning("bystander").events)
    write(root / "bystander" / "session.jsonl", header("bystander"), [])
    write(root / "child" / "session.jsonl", header("child", parentSession="main"), [])
    write(root / "member" / "session.jsonl", header("member"), [])
    with app_client([str(root)]) as client:
        yield client


def test_child_sessions_are_those_a_header_or_a_workflow_names_not_a_relay_sender(client: httpx.Client) -> None:
    related = client.get("/api/sessions/main").json()["related"]
    assert {(r["key"], r["how"]) for r in related["children"]} == {("child", "child"), ("member", "workflow")}
    html = client.get("/sessions/main", params={"at": "end"}).text
    assert sorted(texts(html, "[data-child-link]")) == ["child", "member"]
    assert "bystander" not in texts(html, "[data-child-link]")


def test_the_compare_chooser_suggests_kin_only(client: httpx.Client) -> None:
    suggested = client.get("/api/compare", params={"a": "main"}).json()["suggested"]
    assert sorted(s["key"] for s in suggested) == ["child", "member"]


@pytest.mark.parametrize(
    ("lang", "mention"),
    [
        ("en", "Mentioned only: a session is listed as parent or child only when a log's header or events say so."),
        ("zh-CN", "仅为提及：只有日志的头部或事件写明时，会话才会列为父会话或子会话。"),
    ],
)
def test_the_relay_card_shows_its_sender_as_a_mention(client: httpx.Client, lang: str, mention: str) -> None:
    html = client.get(f"/sessions/main/contexts/{RELAY_SEQ}", headers={"Accept-Language": lang}).text
    assert texts(html, "[data-relay-mention]") == [mention]
    assert attrs(html, "[data-relay-mention]", "data-relay-mention") == ["bystander"]
