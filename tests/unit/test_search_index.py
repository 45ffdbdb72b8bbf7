"""In-session search over the packed index: the same rows a row-by-row scan finds."""

from __future__ import annotations

from dsh_inspect.sessions.session_search import Searchable, search, search_index


def row(text: str, raw: str = "", *, kind: str = "user", tool: str | None = None, error: bool = False) -> Searchable:
    return Searchable(text.lower(), raw.lower(), kind, None, tool, error)  # type: ignore[arg-type]


ROWS = [
    row("Hello wor"),
    row("ld again, hello"),
    row(""),
    row("搜索 中文 ☃ snowman", kind="assistant-step"),
    row("read file", '{"type":"x","secret":"needle"}', kind="tool-call", tool="read", error=True),
    row("\ud800 lone surrogate"),
    row("hellohello"),
]


def scanned(q: str, *, raw: bool = False) -> list[int]:
    needle = q.strip().lower()
    return [i for i, r in enumerate(ROWS) if needle in r.text or (raw and needle in r.raw)]


def test_words_are_found_in_each_row_and_never_across_two() -> None:
    index = search_index(ROWS)
    for q in ["hello", "world", "wor", "ld", "HELLO", "中文", "☃", "\ud800", "lone", "e", "needle", "hellohello", "o"]:
        assert search(index, q=q) == scanned(q), q
        assert search(index, q=q, raw=True) == scanned(q, raw=True), q
    assert search(index, q="world") == []  # "wor" ends one row and "ld" starts the next


def test_facets_narrow_what_the_words_found() -> None:
    index = search_index(ROWS)
    assert search(index) == list(range(len(ROWS)))
    assert search(index, tool="read") == [4]
    assert search(index, errors=True) == [4]
    assert search(index, q="e", kind="tool-call") == [4]
    assert search(index, q="needle", raw=True, errors=True) == [4]
    assert search(index, q="hello", tool="read") == []
