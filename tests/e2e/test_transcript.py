"""Reading a whole session in Chromium: windows, permalinks, search, markers, big results."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import CORPUS
from tests.support.builders import LogBuilder, header
from tests.support.server import live_server

pytestmark = pytest.mark.browser

TURNS = 300
BIG = 5 * 1024 * 1024


def long_log(path: Path) -> LogBuilder:
    b = LogBuilder()
    for turn in range(1, TURNS + 1):
        b.turn(turn, f"prompt number {turn}" + (" needle-in-a-haystack" if turn == 250 else ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("long"), *b.events]))
    return b


def big_result_log(path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    result = next(e for e in b.events if e["type"] == "tool/result")
    result["data"]["message"]["content"][0]["content"] = [
        {"type": "text", "text": "".join(f"line {i:07d} of a very large tool result\n" for i in range(BIG // 38))}
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("big"), *b.events]))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("transcripts")
    long_log(root / "long" / "session.jsonl")
    big_result_log(root / "big" / "session.jsonl")
    return root


@pytest.fixture(scope="module")
def server(logs: Path) -> Iterator[str]:
    paths = [str(logs)]
    if CORPUS.is_dir():
        paths += [str(CORPUS / "dsh-home"), str(CORPUS / "sessions/apps/web/tests/snapshots/seeded-history/seed.jsonl")]
    with live_server(paths) as url:
        yield url


def dom_nodes(page: Page) -> int:
    return int(page.evaluate("document.getElementsByTagName('*').length"))


def test_a_long_session_keeps_a_small_dom_and_loads_the_rest_in_order(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/long")
    assert dom_nodes(page) < 1500
    first = page.locator(".flow-item").first.get_attribute("data-seq")
    assert first == "0"
    for _ in range(3):  # the page drops the farthest windows as it goes: the last row moves on
        last = page.locator(".flow-item").last.get_attribute("data-seq")
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_function("s => [...document.querySelectorAll('.flow-item')].pop().dataset.seq !== s", arg=last)
    seqs = [int(s) for s in page.locator(".flow-item").evaluate_all("els => els.map(e => e.dataset.seq)")]
    assert len(seqs) > 60 and seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_a_permalink_beyond_the_first_window_scrolls_to_its_row(page: Page, server: str) -> None:
    rows = page.request.get(f"{server}/api/sessions/long/rows", params={"from": 2000}).json()["rows"]
    target = next(r for r in rows if r["kind"] == "user")
    page.goto(f"{server}/sessions/long#{target['anchor']}")
    row = page.locator(f"[id='{target['anchor']}']")
    expect(row).to_be_visible(timeout=10000)
    expect(row).to_be_in_viewport()
    assert "from=" not in page.url, "its window opened in place, with no second page load"
    assert dom_nodes(page) < 1500


def test_search_finds_a_match_in_a_later_window(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/long")
    page.keyboard.press("/")
    expect(page.locator("[data-search-input]")).to_be_focused()
    page.keyboard.type("needle-in-a-haystack")
    page.keyboard.press("Enter")
    match = page.locator(".flow-item[data-current]")
    expect(match).to_contain_text("prompt number 250 needle-in-a-haystack", timeout=10000)
    expect(page.locator("[data-search-count]")).to_have_text("1 of 1")
    page.locator("body").click()
    page.keyboard.press("j")
    expect(page.locator("[data-search-count]")).to_have_text("1 of 1")


def test_search_filters_by_row_kind_and_errors(page: Page, server: str) -> None:
    hits = page.request.get(f"{server}/api/sessions/long/search", params={"kind": "tool-call"}).json()["matches"]
    assert len(hits) == TURNS
    assert page.request.get(f"{server}/api/sessions/long/search", params={"errors": "true"}).json()["matches"] == []
    hits = page.request.get(f"{server}/api/sessions/long/search", params={"tool": "read", "q": "alpha"}).json()
    assert len(hits["matches"]) == TURNS


def test_the_real_compaction_marker_reads_as_dsh_and_opens_its_summary(
    page: Page, server: str, corpus_dir: Path
) -> None:
    page.goto(f"{server}/sessions/session-2d63c78e-16f5-4333-ae51-0ea39805a2a6")
    marker = page.get_by_role("button", name="compact Compacted 7 history items (~364 tokens)", exact=True)
    expect(marker).to_have_attribute("aria-expanded", "false")
    assert page.locator("[data-compaction-summary]").count() == 0
    marker.click()
    expect(marker).to_have_attribute("aria-expanded", "true")
    summary = page.locator("[data-compaction-summary]")
    expect(summary).to_be_visible()
    assert summary.inner_text().strip()
    assert page.get_by_text("Context compacted").count() == 0
    assert "context_checkpoint" not in page.content()


def test_the_seeded_history_read_row_shows_its_path(page: Page, server: str, corpus_dir: Path) -> None:
    key = next(
        s["key"]
        for s in page.request.get(f"{server}/api/sessions").json()["sessions"]
        if s["path"].endswith("seed.jsonl")
    )
    page.goto(f"{server}/sessions/{key}")
    row = page.get_by_role("button", name="Read a.txt", exact=True)
    expect(row).to_be_visible()
    expect(row.get_by_role("button", name="a.txt", exact=True)).to_be_visible()


def test_a_5mb_tool_result_stays_responsive_and_shows_all_on_demand(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/big")
    row = page.locator("[data-tool] [data-disclosure-row]").first
    row.click()
    output = page.locator("[data-tool-output]")
    expect(output).to_be_visible(timeout=20000)
    text = output.inner_text()
    assert "line 0000000 of a very large tool result" in text
    assert len(text) < 25_000, "the body is capped, not the whole 5 MB"
    assert page.evaluate("1 + 1") == 2
    expect(output.locator("[data-truncated]")).to_contain_text("characters total")
    at = page.url
    output.get_by_role("button", name="Show all").click()
    # the whole result replaces the head in place: same page, same open row, no footer left
    expect(output).to_contain_text(f"line {BIG // 38 - 1:07d} of a very large", timeout=60000)
    expect(output.locator("[data-truncated]")).to_have_count(0)
    expect(row).to_have_attribute("aria-expanded", "true")
    assert page.url == at


def test_the_session_list_fills_titles_counts_and_verdicts_in_place(page: Page, server: str) -> None:
    page.goto(f"{server}/")
    expect(page.locator("#verdict-big")).to_have_text("accepted", timeout=15000)
    expect(page.locator("#counts-long")).to_have_text(f"{TURNS} turns · {TURNS * 2} steps", timeout=15000)
    assert page.locator("[data-session-list] tbody tr").count() >= 2
