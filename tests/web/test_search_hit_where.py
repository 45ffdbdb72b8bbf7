"""Each hit of the search across sessions says where it is (issue 41, item 3): its step (`turn.step`), its time
and its row's kind, under its session's title and first prompt, on the page and in its twin alike; and its link
carries the search, so the session page opens what holds the words and marks them."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.builders import LogBuilder, header
from tests.support.rows import attrs, select, text, texts
from tests.support.server import app_client
from tests.web.test_session_list_columns import write

T0 = 1_790_000_000_000  # the builder's first event time


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("where")
    b = LogBuilder()
    for turn in (1, 2, 3):
        b.turn(turn, f"prompt number {turn}")  # each turn reads a.txt: three like hits, told apart by step
    b.add("session/title", {"title": "Reading **a.txt**", "messageSeqs": [2], "source": {"kind": "fallback"}})
    write(root / "reads" / "session.jsonl", header("reads"), b.events)
    with app_client([str(root)]) as client:
        yield client


def test_each_hit_names_its_step_time_and_kind_and_its_session(client: httpx.Client) -> None:
    hits = client.get("/api/search", params={"q": "a.txt", "kind": "tool-call"}).json()["hits"]
    assert [(h["step"], h["kind"], h["tool"]) for h in hits] == [(f"{n}.1", "tool-call", "read") for n in (1, 2, 3)]
    assert all(isinstance(h["time"], int) and h["time"] > T0 for h in hits)
    assert {(h["plainTitle"], h["firstPrompt"]) for h in hits} == {("Reading a.txt", "prompt number 1")}

    html = client.get("/search", params={"q": "a.txt", "kind": "tool-call"}).text
    assert text(html, '[data-finder-session="reads"] .finder-title a') == "Reading a.txt"
    assert text(html, "[data-finder-prompt]") == "prompt number 1"
    assert attrs(html, "[data-finder-step]", "data-finder-step") == ["1.1", "2.1", "3.1"]
    where = texts(html, "[data-finder-where]")
    assert [w.split(" · ")[0] for w in where] == ["Step 1.1", "Step 2.1", "Step 3.1"]
    assert all(w.endswith(" · tool-call · read") and " UTC · " in w for w in where)
    stamps = [t["datetime"] for t in select(html, "[data-finder-where] time[data-local-time]")]
    assert len(stamps) == 3 and all(s.startswith("2026-") for s in stamps)


def test_a_hit_in_chinese_names_its_step_in_chinese(client: httpx.Client) -> None:
    html = client.get("/search", params={"q": "a.txt", "kind": "tool-call"}, headers={"Accept-Language": "zh-CN"}).text
    assert texts(html, "[data-finder-step]") == ["步骤 1.1", "步骤 2.1", "步骤 3.1"]


def test_a_hit_links_to_its_row_with_the_search_that_found_it(client: httpx.Client) -> None:
    [hit, *_] = client.get("/api/search", params={"q": "a.txt", "kind": "tool-call", "errors": "false"}).json()["hits"]
    link = urlsplit(hit["url"])
    assert link.path == "/sessions/reads"
    assert parse_qs(link.query) == {"at": [hit["anchor"]], "q": ["a.txt"], "kind": ["tool-call"]}
