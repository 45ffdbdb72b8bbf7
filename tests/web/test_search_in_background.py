"""A search never indexes sessions itself (issue 33): a worker does, a pass at a time, and a search waits for
the pass it asked for at most `search_wait_ms`, then answers from what is indexed and says how many sessions
are still pending. Here the wait is 1 ms, so the twelve new sessions are still being indexed when the first
search answers: it says so, and the next searches find them all once the pass is done."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from dsh_inspect.web.routes import search_across
from dsh_inspect.web.routes.search_across import FIND_EVERY

from tests.support.server import app_client
from tests.support.uploads import jsonl_bytes

SESSIONS = 12
WAIT = 60


def test_a_search_answers_at_once_and_names_the_sessions_still_pending(tmp_path: Path) -> None:
    for n in range(SESSIONS):
        (tmp_path / f"s{n:02}.jsonl").write_bytes(jsonl_bytes(f"session-{n:02}", turns=60))
    with app_client([str(tmp_path)], search_wait_ms=1) as client:
        first = client.get("/api/search", params={"q": "Read a.txt"}, timeout=WAIT).json()
        assert first["pending"] > 0 and first["sessions"] < SESSIONS  # answered before the pass was done
        assert settled(client)["sessions"] == SESSIONS  # every session found once indexed
        (tmp_path / "late.jsonl").write_bytes(jsonl_bytes("late-one", turns=60))  # one more, pending in turn
        time.sleep(FIND_EVERY)  # files on disk are found again at most this often
        assert settled(client)["sessions"] == SESSIONS + 1


def settled(client: httpx.Client) -> dict:
    """The search's answer once nothing is pending any more."""
    deadline = time.monotonic() + WAIT
    while (found := client.get("/api/search", params={"q": "Read a.txt"}, timeout=WAIT).json())["pending"]:
        assert time.monotonic() < deadline, "the pass never finished"
        time.sleep(0.2)
    return found


def test_the_search_page_says_how_many_sessions_are_pending(tmp_path: Path) -> None:
    for n in range(SESSIONS):
        (tmp_path / f"s{n:02}.jsonl").write_bytes(jsonl_bytes(f"session-{n:02}", turns=60))
    with app_client([str(tmp_path)], search_wait_ms=1) as client:
        page = client.get("/search", params={"q": "Read a.txt"}, timeout=WAIT).text
        assert "data-finder-pending=" in page and "still being indexed" in page


def test_with_the_default_wait_a_few_new_sessions_are_found_by_the_first_search(tmp_path: Path) -> None:
    for n in range(3):
        (tmp_path / f"s{n}.jsonl").write_bytes(jsonl_bytes(f"few-{n}"))
    with app_client([str(tmp_path)]) as client:
        found = client.get("/api/search", params={"q": "Read a.txt"}, timeout=WAIT).json()
        assert found["pending"] == 0 and found["sessions"] == 3


def test_a_search_does_not_wait_for_more_than_its_wait_could_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log too large to be indexed within the wait (1 MB against 10 s at 64 KiB a second): the search answers
    at once and names it pending, rather than waiting out its bound behind it, as it would behind every one of a
    client's large uploads; a small one beside it is waited for as before."""
    # the rate set low, so that a log of a second's indexing is past the bound (at the real 4 MiB a second it
    # takes a 44 MB log, and tens of seconds of a loaded machine, to be)
    monkeypatch.setattr(search_across, "INDEXED_PER_SECOND", 64 * 1024)
    (tmp_path / "large.jsonl").write_bytes(jsonl_bytes("large-one", turns=500))
    with app_client([str(tmp_path)], search_wait_ms=10_000) as client:
        first = client.get("/api/search", params={"q": "Read a.txt"}, timeout=WAIT).json()
        assert first["pending"] == 1 and first["sessions"] == 0
        assert settled(client)["sessions"] == 1
        (tmp_path / "small.jsonl").write_bytes(jsonl_bytes("small-one"))
        time.sleep(FIND_EVERY)
        found = client.get("/api/search", params={"q": "Read a.txt"}, timeout=WAIT).json()
        assert found["pending"] == 0 and found["sessions"] == 2  # waited for: a few bytes
