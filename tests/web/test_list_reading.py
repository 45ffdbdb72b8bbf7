"""A list sorted or filtered by a fact of the read never waits for a large log to be read (issue 33,
`list_wait_ms`): it answers with the sessions read, says how many are still being read (`reading`, and a
notice on the page), sorts those last and leaves them out of a filter, and shows them once they are read."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.support.server import app_client
from tests.support.uploads import jsonl_bytes


def sorted_by_turns(client: httpx.Client, **params: str) -> dict:
    answer = client.get("/api/sessions", params={"sort": "turns", "order": "desc", **params}, timeout=60)
    assert answer.status_code == 200
    return answer.json()


def test_a_large_log_is_read_in_the_background_and_listed_once_read(tmp_path: Path) -> None:
    for session_id, turns in (("large", 2_000), ("small", 1)):  # the large one: about 4 MB
        (tmp_path / session_id).mkdir()
        (tmp_path / session_id / "session.jsonl").write_bytes(jsonl_bytes(session_id, turns))
    with app_client([str(tmp_path)], list_wait_ms=1) as client:
        deadline = time.monotonic() + 60
        while (first := sorted_by_turns(client))["reading"] == 2:  # neither read in a millisecond: the small soon
            assert time.monotonic() < deadline, "the small session was never read"
            time.sleep(0.01)
        assert first["reading"] == 1  # 4 MB take a while
        assert [s["id"] for s in first["sessions"]] == ["small", "large"]  # the unread one last, for now
        assert first["sessions"][1]["summary"] is None
        page = client.get("/", params={"sort": "turns", "order": "desc"}, timeout=60).text
        assert 'data-list-reading="1"' in page and "still being read" in page
        # a filter by a fact of the read leaves out what it cannot tell of yet
        assert [s["id"] for s in sorted_by_turns(client, verdict="accepted")["sessions"]] == ["small"]
        deadline = time.monotonic() + 120
        while (answer := sorted_by_turns(client))["reading"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert answer["reading"] == 0
        assert [s["id"] for s in answer["sessions"]] == ["large", "small"]  # the most turns first
        assert answer["sessions"][0]["summary"]["turns"] == 2_000
        assert [s["id"] for s in sorted_by_turns(client, verdict="accepted")["sessions"]] == ["large", "small"]
        assert "data-list-reading" not in client.get("/", params={"sort": "turns"}, timeout=60).text
