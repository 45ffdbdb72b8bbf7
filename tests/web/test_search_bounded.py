"""What one search may cost (issue 33): a phrase longer than `MAX_QUERY` is refused with a 422 that does not
say it back, a NUL in a phrase is no error, a query past its time limit stops and says how to narrow it, and
no refused parameter (a 100 kB `?at=`) is echoed whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_inspect.sessions import search_index

from tests.support.server import app_client
from tests.support.uploads import jsonl_bytes


@pytest.fixture
def served(tmp_path: Path) -> Path:
    for n in range(30):
        (tmp_path / f"s{n}.jsonl").write_bytes(jsonl_bytes(f"session-{n}", 20))
    return tmp_path


def test_a_long_phrase_is_refused_without_being_said_back(served: Path) -> None:
    phrase = "word " * 2_400  # 12 KB
    with app_client([str(served)]) as client:
        for path in ("/api/search", "/search", "/api/sessions/session-0/search"):
            refused = client.get(f"{path}", params={"q": phrase})
            assert refused.status_code == 422, path
            assert len(refused.content) < 2_000 and phrase[:200] not in refused.text, path
        at = client.get("/sessions/session-0", params={"at": "x" * 60_000})  # as long as httpx sends
        assert at.status_code == 422 and len(at.content) < 2_000


def test_a_nul_in_a_phrase_is_no_error(served: Path) -> None:
    with app_client([str(served)]) as client:
        found = client.get("/api/search", params={"q": "Read\x00 a.txt"})
        assert found.status_code == 200 and found.json()["total"] > 0
        assert client.get("/api/search", params={"q": "\x00"}).status_code == 200


def test_a_search_past_its_time_limit_stops_and_says_so(served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with app_client([str(served)]) as client:
        assert client.get("/api/search", params={"q": "Read"}).status_code == 200  # indexed
        monkeypatch.setattr(search_index, "QUERY_SECONDS", 0.0)  # every query past its limit at once
        stopped = client.get("/api/search", params={"q": "e"})  # one letter: a scan of every row
        assert stopped.status_code == 422 and "took longer than" in stopped.json()["detail"]
        monkeypatch.undo()
        assert client.get("/api/search", params={"q": "e"}).status_code == 200  # the index serves on
