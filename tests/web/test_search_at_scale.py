"""Searches on an index of 100,000 rows hold no one up (issue 33): twelve one-letter searches from twelve
clients at once (each a scan below the trigram index) all answer, counted to their bound, while a page of a
session and an ordinary search asked meanwhile answer too; a client that gave up on its searches is answered
when it asks again. The bounds asserted are tens of times what these take here: before issue 33,
twelve such searches answered one at a time, the last after 29 s, and abandoned ones held an ordinary
search for 103 s."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from dsh_inspect.sessions.search_index import COUNTED, INDEX_FILE, MAX_QUERY

from tests.support.server import live_server
from tests.support.uploads import jsonl_bytes

pytestmark = pytest.mark.slow  # 100,000 rows indexed first

SESSIONS, TURNS = 40, 320  # eight rows a turn: 102,400 rows
LETTERS = "aeiorstlnd.p"  # twelve one-character phrases, each found in most rows
STALL = 10.0  # seconds past which an answer counts as held up: each takes well under one here


def client(n: int) -> httpx.Client:
    """A client of its own loopback address: one address's requests are worked on a few at a time."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=f"127.0.0.{20 + n}"), timeout=60)


def timed(c: httpx.Client, url: str, **params: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = c.get(url, params=params)
    return response, time.monotonic() - started


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A server of 40 sessions, once its index holds their 102,400 rows; its URL and data folder."""
    root = tmp_path_factory.mktemp("scale")
    for n in range(SESSIONS):
        (root / f"s{n}.jsonl").write_bytes(jsonl_bytes(f"scale-{n}", TURNS))
    data = root / "data"
    with live_server([str(root)], data_dir=str(data)) as url, client(0) as reader:
        deadline = time.monotonic() + 300
        while reader.get(f"{url}/api/search", params={"q": "Read"}).json()["pending"]:
            assert time.monotonic() < deadline, "the index did not catch up"
            time.sleep(0.5)
        yield url, data


def test_twelve_one_letter_searches_at_once_hold_no_one_up(served: tuple[str, Path]) -> None:
    url, data = served
    with sqlite3.connect(data / INDEX_FILE) as db:
        assert db.execute("SELECT count(*) FROM rows").fetchone()[0] >= 100_000
    clients = [client(n) for n in range(1, 15)]
    try:
        with ThreadPoolExecutor(len(clients)) as pool:
            scans = [pool.submit(timed, c, f"{url}/api/search", q=q) for c, q in zip(clients, LETTERS, strict=False)]
            page = pool.submit(timed, clients[12], f"{url}/sessions/scale-7")
            found = pool.submit(timed, clients[13], f"{url}/api/search", q="a.txt please")
            for scan in scans:
                answer, took = scan.result()
                assert answer.status_code == 200 and took < STALL
                assert (answer.json()["total"], answer.json()["countedAll"]) == (COUNTED, False)
            assert page.result()[0].status_code == 200 and page.result()[1] < STALL
            assert found.result()[0].json()["total"] == COUNTED and found.result()[1] < STALL
    finally:
        for c in clients:
            c.close()


def test_clients_that_give_up_are_answered_when_they_ask_again(served: tuple[str, Path]) -> None:
    url, _ = served
    for n in range(1, 13):
        with client(n) as c:
            for _ in range(3):  # more than the requests one address may have worked on at once
                with pytest.raises(httpx.TimeoutException):  # gives up on a scan of every row (no row says "qz")
                    c.get(f"{url}/api/search", params={"q": "qz"}, timeout=0.001)
            # the searches it gave up on end (each a bounded scan) and free its slots: it is answered in its turn
            answer, took = timed(c, f"{url}/api/search", q="a.txt please")
            assert answer.status_code == 200 and answer.json()["total"] == COUNTED and took < STALL
    with client(0) as reader:
        long = "word " * (MAX_QUERY // 5 + 1)
        refused, took = timed(reader, f"{url}/api/search", q=long)
        assert refused.status_code == 422 and took < STALL and long[:200] not in refused.text
