"""What a tool call asked and what its result shows beyond its text, by tool (docs/ui.md §5.3): derived from
the logged arguments and result alone, and no view at all for a shape the tool does not write."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_inspect.forms.tool_asks import (
    DIFF_LINES,
    FIELD_CHARS,
    QUERIES,
    CodeAsk,
    CommandAsk,
    DiffLine,
    EditAsk,
    ReadAsk,
    SearchAsk,
    WriteAsk,
    line_diff,
)
from dsh_inspect.forms.tool_outcomes import SEARCH_CHARS, SEARCH_ROWS, SEARCH_SHOWN, search_listing, shell_exit
from dsh_inspect.forms.tools import present_tool
from dsh_inspect.model.frozen import freeze
from dsh_inspect.web.present.wording import WORDS


def test_an_edit_is_its_old_string_against_its_new_one_line_by_line() -> None:
    args = {"file_path": "/w/app/cfg.txt", "old_string": "a\nb\nc", "new_string": "a\nB\nc\nd", "replace_all": True}
    ask = present_tool("edit", args, "/w/app").ask
    assert isinstance(ask, EditAsk) and ask.path == "cfg.txt" and ask.replace_all
    assert ask.lines == (
        DiffLine(" ", "a"),
        DiffLine("-", "b"),
        DiffLine("+", "B"),
        DiffLine(" ", "c"),
        DiffLine("+", "d"),
    )
    assert "B\nc\nd" in ask.text


@pytest.mark.parametrize(
    ("old", "new", "lines"),
    [
        ("gone", "", (DiffLine("-", "gone"),)),  # a deletion has no added line, not an empty one
        ("", "new", (DiffLine("+", "new"),)),
        ("same", "same", (DiffLine(" ", "same"),)),
        ("a\n", "a\nb\n", (DiffLine(" ", "a"), DiffLine("+", "b"), DiffLine(" ", ""))),
    ],
)
def test_an_empty_side_has_no_lines(old: str, new: str, lines: tuple[DiffLine, ...]) -> None:
    assert line_diff(old, new) == lines


def test_a_shell_call_is_its_command_line_and_what_it_does() -> None:
    ask = present_tool("pwsh", '{"command": "Get-Date", "description": "Show the date", "workdir": "sub"}').ask
    assert ask == CommandAsk("Get-Date", "Show the date", "sub", background=False)
    background = present_tool("bash", {"command": "sleep 9", "description": "", "run_in_background": True}).ask
    assert background == CommandAsk("sleep 9", None, None, background=True)


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("write", {"file_path": "n.txt", "content": "x\ny"}, WriteAsk("n.txt", "x\ny")),
        ("read", {"file_path": "big.txt", "offset": 5, "limit": 4}, ReadAsk("big.txt", False, 5, 4)),
        ("read", {"file_path": "big.txt"}, ReadAsk("big.txt", False, None, None)),
        ("web_fetch", {"url": "http://h/m"}, ReadAsk("http://h/m", True, None, None)),
        ("grep", {"pattern": "TODO", "path": "src", "include": "*.py"}, SearchAsk(("TODO",), "src", "*.py")),
        ("glob", {"pattern": "*.ts"}, SearchAsk(("*.ts",), None, None)),
        ("web_search", {"queries": ["dsh", "harness"]}, SearchAsk(("dsh", "harness"), None, None)),
        ("run_code", {"code": "return 1", "description": "One"}, CodeAsk("return 1", "One")),
    ],
)
def test_each_tool_shows_what_it_was_asked(name: str, args: dict[str, Any], expected: object) -> None:
    assert present_tool(name, args).ask == expected
    # code-mode sub-calls log their arguments parsed (and a read log's values are frozen)
    assert present_tool(name, freeze(args)).ask == expected


def test_a_read_range_reads_as_its_lines() -> None:
    assert ReadAsk("f", False, 5, 4).last == 8
    assert ReadAsk("f", False, 5, None).last is None


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("edit", {"file_path": "a", "old_string": 5, "new_string": "five"}),
        ("edit", {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"}),
        ("edit", {"file_path": "a", "old_string": "x\n" * DIFF_LINES, "new_string": "y"}),  # too long to diff
        ("write", {"file_path": "a", "content": ["not", "text"]}),
        ("bash", {"command": ""}),
        ("bash", {"command": "ls", "description": 7}),
        ("read", {"file_path": "a", "offset": 0}),
        ("read", {"file_path": "a", "limit": 2.5}),
        ("read", {"offset": 1}),
        ("grep", {"path": "src"}),
        ("glob", {"pattern": "*", "path": ["a", "b"]}),
        ("web_search", {"queries": [1]}),
        ("run_code", {"description": "no code"}),
        ("todo_write", {"todos": []}),
        # a few words are shown whole: a field far longer than words is shown as (capped) JSON
        ("grep", {"pattern": "x" * (FIELD_CHARS + 1)}),
        ("web_fetch", {"url": "http://h/" + "x" * FIELD_CHARS}),
        ("bash", {"command": "ls", "description": "d" * (FIELD_CHARS + 1)}),
        ("web_search", {"queries": ["q"] * (QUERIES + 1)}),
        ("bash", "ls -la"),  # arguments that are not JSON
        ("bash", ["ls"]),
    ],
)
def test_a_shape_the_tool_does_not_write_is_shown_as_json(name: str, args: Any) -> None:
    shown = present_tool(name, args)
    assert shown.ask is None and shown.arguments  # the card shows the arguments' JSON (or their text)


def test_titles_have_their_interface_strings() -> None:
    names = ("bash", "pwsh", "grep", "edit", "todo_write")
    keys = {name: WORDS.tool_titles[present_tool(name, {}).title_name] for name in names}
    assert keys == {
        "bash": "tool.title.bash",
        "pwsh": "tool.title.pwsh",
        "grep": "tool.title.search",
        "edit": "tool.title.edit",
        "todo_write": "tool.title.others",
    }


@pytest.mark.parametrize(
    ("text", "output", "code", "signal", "failed"),
    [
        ("2 failed\n[exit code: 1]", "2 failed", 1, None, True),
        ("ok\n", "ok\n", 0, None, False),
        (
            "(no output)\n[timed out after 5ms]\n[killed by signal: SIGTERM]",
            "(no output)\n[timed out after 5ms]",
            None,
            "SIGTERM",
            True,
        ),
        # a marker that is not the last line, or not on a line of its own, is output
        ("[exit code: 3]\nmore", "[exit code: 3]\nmore", 0, None, False),
        ("said [exit code: 3]", "said [exit code: 3]", 0, None, False),
    ],
)
def test_a_shell_result_splits_into_output_and_exit(
    text: str, output: str, code: int | None, signal: str | None, failed: bool
) -> None:
    exit = shell_exit(text)
    assert (exit.output, exit.code, exit.signal, exit.failed) == (output, code, signal, failed)


def test_a_grep_result_lists_matches_under_their_files() -> None:
    files = [{"path": f"f{n}.py", "matches": [{"lineNumber": i, "line": f"l{i}"} for i in (1, 2)]} for n in range(4)]
    listing = search_listing(freeze({"shape": "matches", "files": files, "truncated": True, "total": 42}))
    assert listing is not None and (listing.shown, listing.total, listing.files, listing.truncated) == (8, 42, 4, True)
    assert [(r.kind, r.text, r.number) for r in listing.rows[:3]] == [
        ("file", "f0.py", 2),
        ("match", "l1", 1),
        ("match", "l2", 2),
    ]
    assert len(listing.head) == SEARCH_SHOWN and len(listing.rest) == 12 - SEARCH_SHOWN


def test_a_glob_result_lists_its_paths() -> None:
    listing = search_listing({"shape": "paths", "paths": ["a", "b"], "truncated": False, "total": 2})
    assert listing is not None and [r.text for r in listing.rows] == ["a", "b"]
    assert (listing.shape, listing.truncated, listing.rest) == ("paths", False, ())


@pytest.mark.parametrize(
    "meta",
    [
        None,
        "matches",
        {"shape": "tree", "paths": []},
        {"shape": "paths", "paths": ["a", 1]},
        {"shape": "paths", "paths": ["a"] * (SEARCH_ROWS + 1)},
        {"shape": "paths", "paths": ["a" * (SEARCH_CHARS // 2 + 1)] * 2},  # more text than a card lists
        {"shape": "matches", "files": [{"path": "a", "matches": [{"lineNumber": 0, "line": "x"}]}]},
        {"shape": "matches", "files": [{"path": "a", "matches": [{"lineNumber": 1}]}]},
        {"shape": "matches", "files": [{"matches": []}]},
        {"shape": "matches", "files": {"a": []}},
    ],
)
def test_a_meta_not_in_a_search_shape_lists_nothing(meta: Any) -> None:
    assert search_listing(meta) is None


def test_a_total_below_what_is_shown_is_not_believed() -> None:
    listing = search_listing({"shape": "paths", "paths": ["a", "b"], "total": 1})
    assert listing is not None and (listing.shown, listing.total, listing.truncated) == (2, 2, False)
