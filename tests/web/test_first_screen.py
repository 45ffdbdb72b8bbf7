"""A long log's first screen comes from a prefix; its verdict and counts follow from the whole log."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.support.builders import LogBuilder, header
from tests.support.rows import attrs, flow_rows
from tests.support.server import app_client


def rows_of(html: str) -> list[str]:
    return [row.anchor for row in flow_rows(html)]


def facts_loader(html: str) -> list[str]:
    """Where the page fetches its session facts from, once the log has been read whole."""
    return attrs(html, "[data-session-facts][hx-get]", "hx-get")


def test_a_long_log_shows_its_first_rows_before_it_is_read_whole(tmp_path: Path) -> None:
    b = LogBuilder()
    for turn in range(1, 201):  # 2,400 events: past the 2,000-event first-screen prefix
        b.turn(turn, f"prompt {turn}")
    path = tmp_path / "s" / "session.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("long"), *b.events]))
    with app_client([str(tmp_path)], first_screen_events=2000) as client:
        first = client.get("/sessions/long").text
        assert facts_loader(first) == ["/sessions/long/facts"] and "data-verdict" not in first
        facts = client.get("/sessions/long/facts").text
        assert attrs(facts, "[data-verdict]", "data-verdict") == ["accepted"] and "2,400 events" in facts
        whole = client.get("/sessions/long").text  # now read whole: the ordinary page
        assert "/sessions/long/facts" not in attrs(whole, "[hx-get]", "hx-get")
        assert attrs(whole, "[data-session-facts] [data-verdict]", "data-verdict") == ["accepted"]
    assert len(rows_of(first)) == 60 and rows_of(first) == rows_of(whole)


def test_a_short_log_is_read_whole_at_once(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    path = tmp_path / "s" / "session.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("short"), *b.events]))
    with app_client([str(tmp_path)]) as client:
        page = client.get("/sessions/short").text
    assert attrs(page, "[data-session-facts] [data-verdict]", "data-verdict") == ["accepted"]
    assert "/facts" not in page
