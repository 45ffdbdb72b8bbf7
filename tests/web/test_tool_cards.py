"""Tool cards show what the tool was asked (issue 41, item 1), as the client renders them: a failed edit's
diff under its path, a shell call's command line and exit pill, a read's range, a search's pattern and its
matches per file, a program; the arguments' JSON for anything else or any shape not expected; the titles in
Chinese; the JSON twin keeping the raw arguments; in-session search finding the words the card shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from bs4 import Tag
from dsh_inspect.testing.seeding import seed_events, write_seed

from tests.support.rows import flow_rows, one, opened, select, text_of
from tests.support.server import app_client, twin_rows
from tests.support.tool_logs import CWD, HOSTILE, KEY, session


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root: Path = tmp_path_factory.mktemp("tools")
    write_seed(root, seed_events(session(), session_id=KEY, cwd=CWD), "none")
    with app_client([str(root)]) as client:
        yield client


@pytest.fixture(scope="module")
def rows(client: httpx.Client) -> list[Tag]:
    page = opened(client, client.get(f"/sessions/{KEY}").text, f"/sessions/{KEY}")
    return [r.element for r in flow_rows(page) if r.kind == "tool-call"]


@pytest.fixture(scope="module")
def twin(client: httpx.Client) -> list[dict[str, Any]]:
    return [r["tool"] for r in twin_rows(client, KEY) if r["kind"] == "tool-call"]


def card(rows: list[Tag], name: str, nth: int = 0) -> Tag:
    return [r for r in rows if select(r, f"[data-tool='{name}']")][nth]


def test_a_failed_edit_shows_old_against_new_under_its_path(rows: list[Tag], twin: list[dict[str, Any]]) -> None:
    edit = card(rows, "edit")
    assert one(edit, "[data-tool]")["data-state"] == "error"
    asked = one(edit, "[data-tool-asked]")
    assert asked["data-tool-asked"] == "edit" and text_of(one(asked, "[data-ask-path]")) == "settings.txt"
    assert [text_of(d) for d in select(asked, "del")] == ["color: blue", 'say "hi"']
    assert [text_of(i) for i in select(asked, "ins")] == ["color: green"]
    assert not select(edit, "[data-tool-input]")
    assert "old_string not found" in text_of(one(edit, "[data-tool-output]"))
    # the twin keeps the arguments as JSON, and says how the card showed them
    assert '"old_string": "color: blue\\nsay \\"hi\\""' in twin[0]["arguments"] and twin[0]["ask"] == "edit"


def test_a_shell_card_shows_its_command_and_an_exit_pill(rows: list[Tag], twin: list[dict[str, Any]]) -> None:
    bash = card(rows, "bash")
    assert text_of(one(bash, "[data-ask-description]")) == "Run the tests"
    assert text_of(one(bash, "[data-ask-body]")) == "pytest -q tests"
    assert "{" not in text_of(one(bash, "[data-tool-asked]"))
    pill = one(bash, "[data-exit]")
    assert text_of(pill) == "exit code 1" and pill.has_attr("data-failed")
    assert text_of(one(bash, "[data-tool-output]")) == "2 failed"
    assert twin[1]["exitCode"] == 1 and twin[1]["output"] == "2 failed"
    ok = one(card(rows, "pwsh"), "[data-exit]")
    assert text_of(ok) == "exit code 0" and not ok.has_attr("data-failed")
    # a background job's result is its id: no exit to show
    assert not select(card(rows, "bash", 1), "[data-exit]")


def test_file_and_url_reads_show_what_was_asked(rows: list[Tag]) -> None:
    write = one(card(rows, "write"), "[data-tool-asked='write']")
    assert text_of(one(write, "[data-ask-path]")) == "notes.txt"
    assert text_of(one(write, "[data-ask-body]")) == "line one\nline two"
    read = one(card(rows, "read"), "[data-tool-asked='read']")
    assert text_of(one(read, "[data-ask-path]")) == "big.txt" and text_of(one(read, "[data-ask-range]")) == "lines 5–8"
    fetch = one(card(rows, "web_fetch"), "[data-tool-asked='read']")
    assert text_of(one(fetch, "[data-ask-path]")) == "http://example.test/menu.html"
    assert not select(fetch, "[data-ask-range]")
    code = one(card(rows, "run_code"), "[data-tool-asked='code']")
    assert text_of(one(code, "[data-ask-description]")) == "Count the lines"
    assert text_of(one(code, "[data-ask-body]")) == "return await tools.bash(…)"


def test_a_code_mode_sub_call_shows_what_it_asked(rows: list[Tag], twin: list[dict[str, Any]]) -> None:
    (sub,) = select(card(rows, "run_code"), "[data-subcall]")
    asked = one(sub, "[data-subcall-asked='command']")
    assert text_of(one(asked, "[data-ask-body]")) == "wc -l notes.txt" and "{" not in text_of(asked)
    # the card's own IN copies the program alone, not the sub-call's command too
    (copy,) = select(one(card(rows, "run_code"), "[data-tool-asked]"), "button[data-copy]")
    assert copy["data-copy-from"] == "[data-tool-asked] [data-ask-body]"
    (code,) = [t for t in twin if t["name"] == "run_code"]
    assert (
        code["subcalls"][0]["ask"] == "command" and '"command": "wc -l notes.txt"' in code["subcalls"][0]["arguments"]
    )


def test_a_grep_lists_its_matches_per_file_capped(rows: list[Tag], twin: list[dict[str, Any]]) -> None:
    grep = card(rows, "grep")
    asked = one(grep, "[data-tool-asked='search']")
    assert text_of(one(asked, "[data-ask-pattern]")) == "TODO"
    assert text_of(one(asked, "[data-ask-scope]")) == "in src"
    assert text_of(one(asked, "[data-ask-include]")) == "files *.py"
    listing = one(grep, "[data-tool-listing]")
    assert text_of(one(listing, "[data-search-summary]")) == "9 of 42 matches · 3 files"
    assert [text_of(f) for f in select(listing, "[data-search-file]")] == ["src/a.py4", "src/b.py3", "src/c.py2"]
    more = one(listing, "details[data-search-more]")
    assert text_of(one(more, "summary")) == "… 4 more lines"
    assert "# TODO c6" in text_of(more) and "# TODO c6" not in text_of(select(listing, ".search-rows")[0])
    # the text the model read stays, open since it says where the rest of a capped result is
    assert "Found 9 of 42 matches" in text_of(one(grep, "details[data-tool-text][open] [data-tool-output]"))
    assert not one(card(rows, "glob"), "details[data-tool-text]").has_attr("open")
    assert twin[7]["listing"] == {"shape": "matches", "shown": 9, "total": 42, "files": 3}
    paths = one(card(rows, "glob"), "[data-tool-listing='paths']")
    assert text_of(one(paths, "[data-search-summary]")) == "2 paths" and not select(paths, "[data-search-more]")


def test_anything_else_and_any_unexpected_shape_shows_the_json(rows: list[Tag], twin: list[dict[str, Any]]) -> None:
    for tool in (card(rows, "todo_write"), card(rows, "edit", 1)):
        assert not select(tool, "[data-tool-asked]")
        assert text_of(one(tool, "[data-tool-input]")).startswith("{\n  ")
    assert twin[-1]["ask"] is None and '"old_string": 5' in twin[-1]["arguments"]


def test_what_a_log_says_is_shown_as_text_never_as_markup(rows: list[Tag]) -> None:
    for tool in (card(rows, "grep", 1), card(rows, "bash", 2)):
        assert not select(tool, "img, script")
        assert HOSTILE in text_of(one(tool, "[data-tool-asked]"))
    assert text_of(one(card(rows, "grep", 1), "[data-search-file]")) == f"{HOSTILE}1"


def test_the_titles_are_worded_in_chinese(client: httpx.Client) -> None:
    chinese = {"Accept-Language": "zh-CN"}
    page = opened(client, client.get(f"/sessions/{KEY}", headers=chinese).text, f"/sessions/{KEY}", chinese)
    titles = [text_of(one(r.element, ".title")) for r in flow_rows(page) if r.kind == "tool-call"]
    assert titles[:6] == ["编辑", "Bash 命令", "Pwsh 命令", "Bash 命令", "写入", "读取"]
    assert "工具调用" in titles and "搜索" in titles and "代码" in titles
    bash = [r.element for r in flow_rows(page) if r.kind == "tool-call"][1]
    assert text_of(one(bash, "[data-exit]")) == "退出码 1"


def test_in_session_search_finds_the_words_the_card_shows(client: httpx.Client, rows: list[Tag]) -> None:
    # `say "hi"` is in the log only JSON-escaped: the card shows it as written, and search finds it so
    found = client.get(f"/api/sessions/{KEY}/search", params={"q": 'say "hi"'}).json()["matches"]
    assert [m["anchor"] for m in found] == [card(rows, "edit").get("id")]


def test_in_session_search_finds_a_sub_calls_words(client: httpx.Client, rows: list[Tag]) -> None:
    found = client.get(f"/api/sessions/{KEY}/search", params={"q": "wc -l notes"}).json()["matches"]
    assert [m["anchor"] for m in found] == [card(rows, "run_code").get("id")]


def test_in_session_search_finds_a_listed_match(client: httpx.Client, rows: list[Tag]) -> None:
    # "TODO c6" is only in the grep result's meta, which the card lists
    found = client.get(f"/api/sessions/{KEY}/search", params={"q": "TODO c6"}).json()["matches"]
    assert [m["anchor"] for m in found] == [card(rows, "grep").get("id")]
