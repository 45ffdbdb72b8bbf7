"""Every interface string a page can show exists in English and Chinese, and a missing one fails.

Keys are written out where they are used (`t("…")` in a template, `phrase("…")` in Python) or
chosen from a vocabulary through `web.present.wording.WORDS`, the one place a key is built from a value;
each of its maps covers its vocabulary, and each key it holds was checked when it loaded.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

import pytest
from dsh_inspect.history.row_facts import USAGE_NAMES, CommandOutcome, RetryOutcome, ToolOutcome
from dsh_inspect.web.present.strings import EN, ZH, MissingString, Phrase, Strings, phrase
from dsh_inspect.web.present.wording import WORDS

PROJECT = Path(__file__).resolve().parents[2]
TEMPLATES = PROJECT / "templates"
APP = PROJECT / "app"
PREFIXES = {key.split(".", 1)[0] for key in EN}
PLACEHOLDER = re.compile(r"\{(\w+)\}")
FILE_NAME = re.compile(r".*\.(css|js|html|json|jsonl|svg|png|zstd|sqlite3?)")  # `export.css` names a file, not a string


def test_both_languages_have_every_key_with_the_same_placeholders() -> None:
    assert set(EN) == set(ZH)
    for key in EN:
        assert EN[key].strip() and ZH[key].strip(), key
        assert set(PLACEHOLDER.findall(EN[key])) == set(PLACEHOLDER.findall(ZH[key])), key


def test_a_missing_key_fails_instead_of_showing_itself() -> None:
    with pytest.raises(MissingString, match=r"no\.such\.key"):
        Strings("en", EN)("no.such.key")
    with pytest.raises(MissingString, match=r"no\.such\.key"):
        phrase("no.such.key")
    with pytest.raises(MissingString):
        Strings("zh", ZH)(Phrase("row.notThere"))


def _template_calls() -> list[tuple[str, str]]:
    """(template, first argument) of every `t(…)` call in the templates."""
    calls = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        text = path.read_text()
        for found in re.finditer(r"(?<![\w.])t\(\s*([^,)]*)", text):
            calls.append((str(path.relative_to(TEMPLATES)), found.group(1).strip()))
    return calls


def test_templates_name_their_keys_and_never_build_one() -> None:
    calls = _template_calls()
    assert len(calls) > 100
    for where, argument in calls:
        literal = re.fullmatch(r"""["']([^"']+)["']""", argument)
        if literal:
            assert literal.group(1) in EN, f"{where}: no string {literal.group(1)!r}"
        else:  # a phrase a view made, or a key from a vocabulary map: never a key joined from pieces
            assert "~" not in argument and "+" not in argument and not argument.startswith(("'", '"')), (
                f"{where}: t({argument}) builds its key"
            )


def _python_keys() -> list[tuple[str, str]]:
    """(module, key) for each string of the layers that word things (forms, sessions, web) that names an interface
    string (`phrase("x")`, `t("x")`, a constant such as `"message.contextInjection"`), and each f-string
    that builds one."""
    found = []
    for path in sorted([*(APP / "forms").glob("*.py"), *(APP / "web").rglob("*.py"), *(APP / "sessions").glob("*.py")]):
        tree = ast.parse(path.read_text())
        where = str(path.relative_to(APP))
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                head = str(node.values[0].value)
                if "." in head and head.split(".", 1)[0] in PREFIXES and " " not in head:
                    found.append((where, "f:" + head))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                value = node.value
                if (
                    re.fullmatch(r"[a-z]+(\.[A-Za-z]+)+", value)
                    and value.split(".", 1)[0] in PREFIXES
                    and not FILE_NAME.fullmatch(value)
                ):
                    found.append((where, value))
    return found


def test_python_names_existing_keys_and_builds_them_only_in_the_wording_module() -> None:
    keys = _python_keys()
    assert len(keys) > 50
    for where, key in keys:
        if key.startswith("f:"):
            assert where == "web/present/wording.py", (
                f"{where} builds an interface key ({key[2:]}…): use web/present/wording.py"
            )
        elif where not in (
            "web/present/strings.py",
            "web/present/wording.py",
        ):  # the table, and the maps checked as they load
            assert key in EN, f"{where}: no interface string {key!r}"


def test_each_vocabulary_map_covers_its_vocabulary() -> None:
    assert set(WORDS.usage) == set(USAGE_NAMES)
    assert set(WORDS.tool_states) == set(get_args(ToolOutcome)) - {"ok"}
    assert set(WORDS.command_outcomes) == set(get_args(CommandOutcome))
    assert set(WORDS.retry_outcomes) == set(get_args(RetryOutcome))
    # docs/format.md §3.3 `TurnEndReason`: every kind a turn row words (`completed` shows nothing), and `open`
    assert set(WORDS.turn_outcomes) == {"aborted", "blocked", "error", "interrupted", "max-tokens", "open"}
    for table in (EN, ZH):
        assert WORDS.keys() <= set(table)


def test_every_string_is_shown_somewhere() -> None:
    """No string sits unused: each is named by a template or a module, or is a vocabulary map's."""
    named = {key for where, key in _python_keys() if where != "web/present/strings.py" and not key.startswith("f:")}
    named |= {
        m.group(1)
        for path in TEMPLATES.rglob("*.html")
        for m in re.finditer(r"""["']([a-z]+(?:\.[A-Za-z]+)+)["']""", path.read_text())
    }
    named |= WORDS.keys()
    assert sorted(set(EN) - named) == []


def test_a_phrase_inside_a_phrase_is_worded_in_the_same_language() -> None:
    line = phrase("retry.summary", label=phrase("retry.done"), retry="1", maximum="3", seconds="1.5")
    assert Strings("en", EN)(line) == "Retried model request (1/3) · 1.5s" == str(line)
    assert Strings("zh", ZH)(line) == "已重试模型请求（1/3）· 1.5 秒"
