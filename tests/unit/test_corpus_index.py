"""The cross-session search index: built per file version, grown incrementally, rewritten afresh, forgotten
with its session, and asked with phrases that never act as FTS5 syntax (real SQLite files)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
from dsh_inspect.history.session import load_session
from dsh_inspect.sessions.registry import Registry
from dsh_inspect.sessions.search_index import (
    CorpusIndex,
    Query,
    bring_up_to_date,
    read_afresh,
    snippet,
)
from dsh_inspect.sessions.transcript import build_transcript

from tests.support.builders import LogBuilder, header
from tests.support.instructions import instructions_log


def write(path: Path, events: list[dict], session_id: str = "session-test") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *events]))
    return path


def append(path: Path, events: list[dict]) -> None:
    with open(path, "ab") as f:
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in events))


def turns(n: int, *, close_last: bool = True) -> LogBuilder:
    b = LogBuilder()
    for turn in range(1, n + 1):
        b.turn(turn, f"prompt number {turn}", close=close_last or turn < n)
    return b


@pytest.fixture
def index(tmp_path: Path) -> CorpusIndex:
    return CorpusIndex(tmp_path / "index" / "search.sqlite3")


def refresh(index: CorpusIndex, registry: Registry) -> None:
    registry.refresh()
    bring_up_to_date(index, registry.entries(), read_afresh)


def ask(index: CorpusIndex, registry: Registry, q: str = "", **facets: str | bool) -> list[tuple[str, str]]:
    """(session id, anchor) of each hit."""
    found = index.query(Query(q, **facets), [e.source for e in registry.entries()])  # type: ignore[arg-type]
    ids = {os.path.abspath(e.source.path): e.session_id or "" for e in registry.entries()}
    return [(ids[h.identity], h.anchor) for h in found.hits]


def test_every_row_is_indexed_with_its_anchor_and_a_hit_carries_the_row(tmp_path: Path, index: CorpusIndex) -> None:
    path = write(tmp_path / "logs/a.jsonl", turns(2).events, "first")
    write(tmp_path / "logs/b.jsonl", turns(1).events, "second")
    registry = Registry([str(tmp_path / "logs")])
    refresh(index, registry)
    expected = build_transcript(load_session(_source(registry, path)))
    assert index.counts(_source(registry, path)) == (len(turns(2).events), len(expected.rows))
    user_rows = [a for r, a in zip(expected.rows, expected.anchors, strict=True) if r.kind == "user"]
    assert ask(index, registry, "prompt number 2") == [("first", user_rows[1])]
    assert {sid for sid, _ in ask(index, registry, "The file says alpha")} == {"first", "second"}


def _source(registry: Registry, path: Path):  # type: ignore[no-untyped-def]
    return next(e.source for e in registry.entries() if e.source.path == str(path))


def test_a_fresh_file_is_not_read_again(tmp_path: Path, index: CorpusIndex) -> None:
    write(tmp_path / "logs/a.jsonl", turns(1).events)
    registry = Registry([str(tmp_path / "logs")])
    assert bring_up_to_date(index, registry.entries(), read_afresh) == 1
    assert bring_up_to_date(index, registry.entries(), read_afresh) == 0


def test_a_grown_log_writes_only_the_rows_of_its_new_events(tmp_path: Path, index: CorpusIndex) -> None:
    full = turns(3)
    cut = next(i for i, e in enumerate(full.events) if e["type"] == "turn/start" and e["data"]["turn"] == 3)
    path = write(tmp_path / "logs/a.jsonl", full.events[:cut])
    registry = Registry([str(tmp_path / "logs")])
    entry = registry.entries()[0]
    first = index.update(entry, *_read(entry))
    assert first.whole and first.kept == 0
    before = index.counts(entry.source)
    append(path, full.events[cut:])
    grown = index.update(entry, *_read(entry))
    new_rows = len(build_transcript(load_session(entry.source)).rows) - first.written
    assert not grown.whole
    assert grown.written == new_rows and grown.kept == first.written and grown.removed == 0
    assert index.counts(entry.source) == (len(full.events), (before or (0, 0))[1] + new_rows)
    assert ask(index, registry, "prompt number 3") != []
    assert _same_as_fresh(index, entry, tmp_path)


def test_a_tool_call_whose_result_arrives_later_is_written_again_with_it(tmp_path: Path, index: CorpusIndex) -> None:
    full = turns(1)
    result = next(i for i, e in enumerate(full.events) if e["type"] == "tool/result")
    path = write(tmp_path / "logs/a.jsonl", full.events[:result])
    registry = Registry([str(tmp_path / "logs")])
    entry = registry.entries()[0]
    index.update(entry, *_read(entry))
    assert ask(index, registry, "alpha", kind="tool-call") == []
    append(path, full.events[result:])
    grown = index.update(entry, *_read(entry))
    assert not grown.whole and grown.removed >= 1  # the open turn's rows that changed, the tool row among them
    (hit,) = ask(index, registry, "alpha", kind="tool-call")
    assert hit[1] in build_transcript(load_session(entry.source)).anchors
    assert _same_as_fresh(index, entry, tmp_path)


def test_a_rewritten_log_is_indexed_afresh(tmp_path: Path, index: CorpusIndex) -> None:
    path = write(tmp_path / "logs/a.jsonl", turns(2).events)
    registry = Registry([str(tmp_path / "logs")])
    refresh(index, registry)
    assert ask(index, registry, "prompt number 2")
    b = LogBuilder()
    b.turn(1, "an entirely other question, asked at more length than before")
    write(path, b.events)
    entry = registry.entries()[0]
    update = index.update(entry, *_read(entry))
    assert update.whole and update.kept == 0
    assert ask(index, registry, "prompt number") == []
    assert ask(index, registry, "entirely other question")


def test_forgetting_a_session_removes_its_rows_and_the_registry_says_when(tmp_path: Path, index: CorpusIndex) -> None:
    gone = write(tmp_path / "logs/gone.jsonl", turns(1).events, "gone")
    write(tmp_path / "logs/kept.jsonl", turns(1).events, "kept")
    registry = Registry([str(tmp_path / "logs")])
    registry.on_forget(index.forget)
    refresh(index, registry)
    source = _source(registry, gone)
    assert index.counts(source) is not None
    gone.unlink()
    registry.refresh()
    assert index.counts(source) is None
    assert [sid for sid, _ in ask(index, registry, "alpha")] == ["kept", "kept"]
    # nothing of the forgotten session is left in the file's tables
    db = index._db  # the test reads the SQLite file's tables as they are
    assert db.execute("SELECT count(*) FROM row_text WHERE text LIKE '%prompt%'").fetchone()[0] == 1


def test_a_chinese_phrase_inside_an_instructions_card_is_found_at_that_row(tmp_path: Path, index: CorpusIndex) -> None:
    path = tmp_path / "logs/shop.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(instructions_log("shop", "价格以人民币计，不含运费。"))
    write(tmp_path / "logs/other.jsonl", turns(1).events, "other")
    registry = Registry([str(tmp_path / "logs")])
    refresh(index, registry)
    t = build_transcript(load_session(_source(registry, path)))
    card = next(a for r, a in zip(t.rows, t.anchors, strict=True) if r.kind == "context")
    assert ask(index, registry, "价格以人民币计") == [("shop", card)]
    assert ask(index, registry, "价格以人民币计", form="instructions") == [("shop", card)]
    assert ask(index, registry, "价格以人民币计", form="catalog") == []
    # one and two characters are below the trigram index: the same table is scanned
    assert ask(index, registry, "价格") == [("shop", card)]
    assert ask(index, registry, "运") == [("shop", card)]
    found = index.query(Query("人民币"), [e.source for e in registry.entries()])
    (hit,) = found.hits
    start, end = hit.snippet.marks[0]
    assert hit.snippet.text[start:end] == "人民币"


def test_facets_filter_like_in_session_search(tmp_path: Path, index: CorpusIndex) -> None:
    b = LogBuilder()
    b.turn(1)
    b.add("turn/start", {"turn": 2})
    b.add("step/start", {"turn": 2, "step": 1})
    b.user("read the missing file")
    b.assistant(2, 1, [{"type": "tool-call", "id": "call_x", "name": "read", "arguments": '{"file_path": "b.txt"}'}])
    b.tool_round(2, 1, "call_x", "ENOENT: no such file b.txt", is_error=True)
    b.add("step/end", {"turn": 2, "step": 1})
    b.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    write(tmp_path / "logs/a.jsonl", b.events, "tools")
    registry = Registry([str(tmp_path / "logs")])
    refresh(index, registry)
    assert len(ask(index, registry, kind="tool-call")) == 2
    assert len(ask(index, registry, kind="tool-call", tool="read")) == 2
    assert ask(index, registry, kind="tool-call", tool="write") == []
    (error,) = ask(index, registry, errors=True)
    assert ask(index, registry, "ENOENT", errors=True) == [error]
    assert ask(index, registry, "ENOENT", kind="user") == []
    assert ask(index, registry) == [], "no text and no facet asks for nothing"


@pytest.mark.parametrize(
    "query",
    ['say "hi" now', "a* AND b", "x OR y", "NEAR(a b)", "text:col", "^start", "50% of_it", "-minus", "(paren"],
)
def test_a_query_is_a_literal_phrase_never_fts_syntax(tmp_path: Path, index: CorpusIndex, query: str) -> None:
    b = LogBuilder()
    b.turn(1, f"before {query} after")
    b.turn(2, "a b x y start minus paren 50 of it hi now col")  # every word, none of the phrases
    write(tmp_path / "logs/a.jsonl", b.events)
    registry = Registry([str(tmp_path / "logs")])
    refresh(index, registry)
    hits = index.query(Query(query), [e.source for e in registry.entries()]).hits
    assert [h.snippet.text for h in hits] == [f"before {query} after"]


def test_like_wildcards_in_a_short_query_are_literal(tmp_path: Path, index: CorpusIndex) -> None:
    b = LogBuilder()
    b.turn(1, "100% sure")
    b.turn(2, "nothing to see")
    write(tmp_path / "logs/a.jsonl", b.events)
    registry = Registry([str(tmp_path / "logs")])
    refresh(index, registry)
    assert [h.snippet.text for h in index.query(Query("%"), [e.source for e in registry.entries()]).hits] == [
        "100% sure"
    ]
    underscores = index.query(Query("_"), [e.source for e in registry.entries()]).hits  # `file_path`, nothing else
    assert underscores and all("_" in h.snippet.text for h in underscores)


def test_only_the_sessions_asked_about_answer(tmp_path: Path, index: CorpusIndex) -> None:
    write(tmp_path / "one/a.jsonl", turns(1).events, "one")
    write(tmp_path / "two/b.jsonl", turns(1).events, "two")
    both = Registry([str(tmp_path / "one"), str(tmp_path / "two")])
    refresh(index, both)
    one = Registry([str(tmp_path / "one")])
    assert {sid for sid, _ in ask(index, one, "alpha")} == {"one"}


def test_an_index_of_another_schema_is_made_anew(tmp_path: Path) -> None:
    path = tmp_path / "search.sqlite3"
    index = CorpusIndex(path)
    index._db.execute("UPDATE meta SET value = 'old' WHERE name = 'schema'")
    index.close()
    assert CorpusIndex(path)._db.execute("SELECT value FROM meta").fetchone()[0] != "old"
    path.write_bytes(b"not a database at all" * 100)
    assert CorpusIndex(path).query(Query("x"), []).hits == []


def test_a_snippet_escapes_the_log_and_marks_only_the_match() -> None:
    s = snippet("run <script>alert(1)</script> then ALPHA and alpha", "alpha")
    assert [s.text[a:b] for a, b in s.marks] == ["ALPHA", "alpha"]
    html = str(s.html())
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert html.count("<mark>") == 2 and "<mark>ALPHA</mark>" in html
    assert snippet("a\x1b[31mred\nline", "red").bracketed("[[", "]]") == "a\\x1b[31m[[red]] line"
    # a log's text spelled exactly as the terminal's own marks is still shown, never obeyed
    assert snippet("red\x1b[7m", "red").bracketed("\x1b[7m", "\x1b[0m") == "\x1b[7mred\x1b[0m\\x1b[7m"


def test_a_long_text_is_cut_around_its_first_match() -> None:
    text = "word " * 200 + "needle" + " tail" * 200
    s = snippet(text, "needle")
    assert s.text.startswith("…") and s.text.endswith("…") and len(s.text) < 200
    start, end = s.marks[0]
    assert s.text[start:end] == "needle"


def _read(entry):  # type: ignore[no-untyped-def]
    found = read_afresh(entry)
    assert found is not None
    return found


def _same_as_fresh(index: CorpusIndex, entry, tmp_path: Path) -> bool:  # type: ignore[no-untyped-def]
    """Whether the incrementally kept rows are the rows a fresh index of the same file holds."""
    fresh = CorpusIndex(tmp_path / "fresh.sqlite3")
    fresh.update(entry, *_read(entry))

    def rows(i: CorpusIndex) -> list[tuple[object, ...]]:
        return i._db.execute(
            "SELECT r.key, r.anchor, r.kind, r.form, r.tool, r.error, r.seq, t.text "
            "FROM rows r JOIN row_text t ON t.rowid = r.id ORDER BY r.seq, r.key"
        ).fetchall()

    return rows(index) == rows(fresh)


def test_two_searches_indexing_at_once_index_each_session_once(tmp_path: Path, index: CorpusIndex) -> None:
    for n in range(6):
        write(tmp_path / f"logs/s{n}.jsonl", turns(2).events, f"s{n}")
    registry = Registry([str(tmp_path / "logs")])
    reads: list[str] = []

    def read(entry):  # type: ignore[no-untyped-def]
        reads.append(entry.key)
        return read_afresh(entry)

    with ThreadPoolExecutor(2) as pool:
        done = [pool.submit(bring_up_to_date, index, registry.entries(), read) for _ in range(2)]
        for future in done:
            future.result()
    assert sorted(reads) == sorted(e.key for e in registry.entries())
    assert len(ask(index, registry, "prompt number 2")) == 6


def test_searches_answer_while_a_pass_writes(index: CorpusIndex, tmp_path: Path) -> None:
    """Searches read through connections of their own: they answer side by side while a pass holds the
    writer's connection (here held as a pass writing a session holds it), from what the index last committed.
    Before, every search waited for that one connection."""
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "first.jsonl", turns(2).events, "first")
    registry = Registry([str(logs)])
    refresh(index, registry)
    before = ask(index, registry, "a.txt")
    assert {sid for sid, _ in before} == {"first"}
    with index._lock, ThreadPoolExecutor(4) as pool:
        answers = [pool.submit(ask, index, registry, "a.txt") for _ in range(4)]
        assert [a.result(timeout=30) for a in answers] == [before] * 4
    write(logs / "second.jsonl", turns(2).events, "second")
    refresh(index, registry)
    assert {sid for sid, _ in ask(index, registry, "a.txt")} == {"first", "second"}
