"""What one search may cost (issue 33): a phrase longer than `MAX_QUERY` is refused with a 422 that does not
say it back, a NUL in a phrase is no error, a query past its time limit stops and says how to narrow it, a
phrase matching more than `COUNTED` rows is counted that far and says so, and no refused parameter (a 100 kB
`?at=`) is echoed whole."""

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


def test_a_phrase_matching_more_rows_than_are_counted_says_so_and_shows_the_first_in_session_order(
    tmp_path: Path,
) -> None:
    for n in range(3):  # three sessions of 200 turns: each turn's "Read" call and result are two rows
        (tmp_path / f"long-{n}.jsonl").write_bytes(jsonl_bytes(f"long-{n}", 200))
    with app_client([str(tmp_path)]) as client:
        over = client.get("/api/search", params={"q": "Read"}).json()
        assert over["pending"] == 0
        assert (over["total"], over["countedAll"], over["shown"]) == (search_index.COUNTED, False, search_index.HITS)
        assert over["sessions"] >= 1
        places = [(hit["key"], hit["seq"]) for hit in over["hits"]]
        assert places == sorted(places), "the hits shown are in session then row order"
        page = client.get("/search", params={"q": "Read"}).text
        assert "data-finder-more" in page and "Matching rows: 1,000+" in page
        assert "Counting stops at 1,000 rows" in page
        chinese = client.get("/search", params={"q": "Read"}, headers={"Accept-Language": "zh-CN"}).text
        assert "匹配的行：1,000+" in chinese and "计数到 1,000 行为止" in chinese
        narrowed = client.get("/api/search", params={"q": "Read", "kind": "tool-call"}).json()
        assert (narrowed["total"], narrowed["sessions"], narrowed["countedAll"]) == (600, 3, True)
        assert "data-finder-more" not in client.get("/search", params={"q": "Read", "kind": "tool-call"}).text
