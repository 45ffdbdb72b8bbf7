"""A session title as the list shows it: Markdown taken away, nothing added, one line."""

from __future__ import annotations

import pytest
from dsh_inspect.model.plain_text import LOOKED_AT, plain_text, title_text
from dsh_inspect.model.text import first_line, one_line
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ("Done. The file says **alpha**.", "Done. The file says alpha."),
        ("Fix *the* __parser__ and _lexer_", "Fix the parser and lexer"),
        ("***both*** and **_nested_** and ~~struck~~", "both and nested and struck"),
        ("Read `a*b*c` and ``x `y` z``", "Read a*b*c and x `y` z"),
        ("See [the docs](https://example.com/a_b) and ![a chart](c.png)", "See the docs and a chart"),
        ("Mail <mailto:a@b.c> or <https://x.y/z>", "Mail mailto:a@b.c or https://x.y/z"),
        ("# Heading ##", "Heading"),
        ("> quoted\n> twice", "quoted twice"),
        ("- one\n* two\n1. three", "one two three"),
        ("above\n\n---\n\nbelow", "above below"),
        ("```python\nprint(1)\n```", "print(1)"),
    ],
)
def test_markup_goes_and_the_words_stay(markdown: str, plain: str) -> None:
    assert plain_text(markdown) == plain


@pytest.mark.parametrize(
    "text",
    [
        "snake_case_name stays",
        "2 * 3 * 4 = 24",
        "a ** b",
        "path/to/file.py: line 3",
        "<script>alert(1)</script>",  # not markup to take away: the page escapes it
        "100% done — 完成了",
    ],
)
def test_text_that_only_looks_like_markup_is_kept(text: str) -> None:
    assert plain_text(text) == text


def test_escaped_markers_read_as_themselves() -> None:
    assert plain_text(r"not \*\*bold\*\* and \_not\_ either \# 1") == "not **bold** and _not_ either # 1"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab *_`~[]()!#>-\\\n\t<>:"), max_size=80))
def test_any_text_becomes_one_line_with_no_character_added(text: str) -> None:
    plain = plain_text(text)
    assert "\n" not in plain and "\t" not in plain and plain == plain.strip()
    for ch in set(plain) - {" "}:
        assert plain.count(ch) <= text.count(ch), (text, plain)


def test_a_long_title_is_looked_at_only_so_far() -> None:
    assert len(plain_text("**" * 100_000 + "x" * 100_000)) <= LOOKED_AT


def test_one_line_cuts_with_an_ellipsis() -> None:
    assert one_line("first\n\n  second", 40) == "first second"
    assert one_line("x" * 50, 10) == "x" * 9 + "…"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \n\t\u3000\x1c"), max_size=60), st.integers(1, 30))
def test_a_row_summary_is_the_first_line_of_its_stripped_text_cut_with_an_ellipsis(text: str, limit: int) -> None:
    line = text.strip().split("\n", 1)[0]
    assert first_line(text, limit) == (line if len(line) <= limit else line[: limit - 1] + "…")


def test_a_row_summary_of_a_huge_text_reads_only_its_head() -> None:
    assert first_line("  " + "word " * 10_000_000 + "\nmore", 20) == "word word word word…"


def test_a_title_of_markup_alone_is_no_title_so_the_place_names_the_session_by_its_id() -> None:
    assert title_text("**Fix** the `parser`") == "Fix the parser"
    assert title_text("** **") is None
    assert title_text("") is None
    assert title_text(None) is None
