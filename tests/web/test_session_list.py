"""The session list: header facts first, summaries from the cache, search, paging; subagent links."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import CORPUS
from tests.support.builders import header, two_turns
from tests.support.rows import asked_keys, attrs, one, text
from tests.support.server import app_client


def write(path: Path, head: dict, events: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [head, *events]))


def titled(title: str) -> list[dict]:
    events = two_turns().events
    events.insert(
        3,
        {
            "type": "session/title",
            "seq": 3,
            "time": 0,
            "data": {"title": title, "messageSeqs": [2], "source": {"kind": "fallback"}},
        },
    )
    for i, e in enumerate(events):
        e["seq"] = i
    for e in events:
        if e.get("sourceEventSeqs"):
            e["sourceEventSeqs"] = [s + 1 if s >= 3 else s for s in e["sourceEventSeqs"]]
    return events


def test_the_list_pages_searches_and_fills_summaries(tmp_path: Path) -> None:
    for i in range(120):
        write(
            tmp_path / f"s{i:03d}" / "session.jsonl",
            {**header(f"session-{i:03d}"), "createdAt": 1_700_000_000_000 + i},
            titled(f"Fix the parser {i}") if i == 7 else two_turns().events,
        )
    with app_client([str(tmp_path)]) as client:
        every = client.get("/api/sessions").json()
        assert every["total"] == 120 and every["pages"] == 1 and len(every["sessions"]) == 120
        first = client.get("/api/sessions", params={"page": 1}).json()
        assert first["total"] == 120 and first["pages"] == 3 and len(first["sessions"]) == 50
        assert first["sessions"][0]["id"] == "session-119", "newest first"
        assert all(s["summary"] is None for s in first["sessions"]), "header facts only until a log is read"
        assert first["sessions"][0]["created"] == "2023-11-14 22:13 UTC"
        html = client.get("/").text
        assert "session-119" in asked_keys(html)
        assert attrs(html, "nav.pager a[rel~=next]", "href") == ["/?page=2"]
        filled = client.get("/api/sessions", params={"summaries": "true"}).json()["sessions"][0]
        assert filled["summary"] == {
            "title": None,
            "plainTitle": None,
            "turns": 2,
            "steps": 4,
            "events": 24,
            "verdict": "accepted",
            "firstPrompt": "Read a.txt please",
            "lastActivityAt": 1_790_000_000_023,
            "lastActivity": "2026-09-21 14:13 UTC",
            "tokens": None,
            "errors": 0,
            "durations": {"wallMs": 23, "clockBackwards": 0},  # 24 events, a millisecond apart
            # four answers that logged no usage: each at an unknown price, never 0
            "cost": {**filled["summary"]["cost"], "total": None, "currency": "USD", "unknownCalls": 4},
            "models": ["deepseek-v4-flash"],
        }
        assert client.get("/api/sessions").json()["sessions"][0]["summary"]["turns"] == 2, "cached"
        third = client.get("/api/sessions", params={"page": 3}).json()
        assert [s["id"] for s in third["sessions"]][-1] == "session-000"
        found = client.get("/api/sessions", params={"q": "fix the PARSER"}).json()
        assert [s["id"] for s in found["sessions"]] == ["session-007"]
        assert client.get("/api/sessions", params={"q": "session-11"}).json()["total"] == 10
        partial = client.post("/sessions-summaries", data={"key": "session-050"}).text
        verdict = one(partial, "span#verdict-session-050")
        assert attrs(verdict, ".verdict", "data-verdict") == ["accepted"]
        assert text(verdict, ".verdict") == "accepted"


@pytest.mark.corpus
def test_subagents_link_to_their_parent_and_back(corpus_dir: Path) -> None:
    folder = CORPUS / "sessions/examples/acp-agent/tests/snapshots/subagent-continuable"
    with app_client([str(folder)]) as client:
        sessions = client.get("/api/sessions").json()["sessions"]
        parent = next(s for s in sessions if s["path"].endswith("/session.jsonl"))
        child = next(s for s in sessions if s["path"].endswith("/session.1.jsonl"))
        parent_page = client.get(f"/api{parent['url']}").json()
        child_page = client.get(f"/api{child['url']}").json()
    assert [c["key"] for c in parent_page["related"]["children"]] == [child["key"]]
    assert [p["key"] for p in child_page["related"]["parents"]] == [parent["key"]]


def test_an_ambiguous_child_id_offers_every_candidate(tmp_path: Path) -> None:
    write(tmp_path / "parent" / "session.jsonl", header("parent"), two_turns().events)
    for name in ("a", "b"):
        write(tmp_path / name / "session.jsonl", header("child", parentSession="parent"), two_turns().events)
    write(tmp_path / "elsewhere" / "x" / "session.jsonl", header("loner"), two_turns().events)
    with app_client([str(tmp_path)]) as client:
        response = client.get("/api/sessions/parent")
        assert response.status_code == 200, response.text
        parent = response.json()
    assert len(parent["related"]["children"]) == 2
    assert {c["id"] for c in parent["related"]["children"]} == {"child"}
