"""Real dsh logs (issue 14, search across sessions): the index reads each row as the session page does.

The index asks a row's facts for its words alone (`row_facts(..., words_only=True)`, which skips the stream
timing and the boundary ends no word shows), and a log keeps the events it decoded last; neither may change
what is found: each row's words, form, tool and error mark are the page's, and every event reads the same in
any order, a packed record's events one by one included, as a fresh read gives it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_inspect.history.row_facts import RowFacts, ToolFacts, reports_error, row_facts
from dsh_inspect.history.session import load_session
from dsh_inspect.history.transcript import Row
from dsh_inspect.log.sources import discover
from dsh_inspect.sessions.session_search import shown_text
from dsh_inspect.sessions.transcript import build_transcript

pytestmark = pytest.mark.corpus


def _logs(corpus: Path) -> list[Path]:
    return [*sorted((corpus / "sessions").rglob("*.jsonl")), *sorted((corpus / "dsh-home").rglob("*.zstd"))]


def _found_as(facts: RowFacts, row: Row) -> tuple[object, ...]:
    """What search finds a row by: its words, a context row's form, its tool and its error mark."""
    text, form = shown_text(row, facts)
    tool = (facts.name or None) if isinstance(facts, ToolFacts) else None
    return text, form, tool, reports_error(facts)


def test_every_row_is_indexed_with_the_words_and_marks_its_page_shows(corpus_dir: Path) -> None:
    rows = 0
    for path in _logs(corpus_dir):
        for source in discover([str(path)]).sources:
            t = build_transcript(load_session(source))
            for row in t.rows:
                page = _found_as(row_facts(t.readable, row), row)
                assert _found_as(row_facts(t.readable, row, words_only=True), row) == page, (path, row.key)
                rows += 1
    assert rows > 1000  # the whole corpus was read, not a folder that moved


def test_every_event_reads_the_same_in_any_order_and_again(corpus_dir: Path) -> None:
    for path in _logs(corpus_dir):
        for source in discover([str(path)]).sources:
            in_order = [e.raw for e in load_session(source).events()]
            log = load_session(source)
            backwards = [log.event(seq).raw for seq in reversed(range(log.event_count))]
            assert backwards[::-1] == in_order, path
            assert [e.raw for e in log.events()] == in_order, path
