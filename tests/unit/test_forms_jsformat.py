"""JS-compatible formatting (docs/ui.md §1.6) and the no-crash contract of the readers."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from dsh_inspect.forms import (
    cap_utf16,
    compact_json,
    field_text,
    interpolate,
    js_entries,
    pretty_json,
    project_context,
    utf16_len,
)
from dsh_inspect.log.jsonvalues import js_string
from dsh_inspect.model.frozen import freeze
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (18.0, "18"),
        (18, "18"),
        (-0.0, "0"),
        (2.5, "2.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (1.5e-7, "1.5e-7"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (1.2345e-6, "0.0000012345"),
        (-1.5e300, "-1.5e+300"),
        (2**53, "9007199254740992"),
        (2**60, "1152921504606847000"),
        (10**400, "Infinity"),
        (-(10**400), "-Infinity"),
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        ("18.0", "18.0"),
        ([1, None, [2.0, True]], "1,,2,true"),
        ({"a": 1}, "[object Object]"),
    ],
)
def test_js_string_prints_like_javascript(value: Any, expected: str) -> None:
    assert js_string(value) == expected


def test_field_text_uses_string_for_scalars_and_json_for_the_rest() -> None:
    assert [field_text(v) for v in ("a b", 18.0, True, None, {}, [], {"a": 1}, ["é"])] == [
        "a b",
        "18",
        "true",
        "null",
        "{}",
        "[]",
        '{"a":1}',
        '["é"]',
    ]


def test_compact_json_is_json_stringify() -> None:
    value = {"b": 1.0, "a": [True, None, 'é\n"\\\x01'], "2": {}, "1": [], "x": 1e21}
    assert compact_json(value) == '{"1":[],"2":{},"b":1,"a":[true,null,"é\\n\\"\\\\\\u0001"],"x":1e+21}'
    assert compact_json(freeze(value)) == compact_json(value)
    assert compact_json(math.nan) == "null"
    assert compact_json("\ud800x\U0001f600") == '"\\ud800x\U0001f600"'


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        # what orjson prints as JS does (the quick way), beside what it would print otherwise (the long way)
        ({"seq": 7, "time": 0, "type": "x/y"}, '{"seq":7,"time":0,"type":"x/y"}'),
        ({"a": "\x1f\x7f\u2028/é\U0001f600"}, '{"a":"\\u001f\x7f\u2028/é\U0001f600"}'),
        ({"a": [{"b": [None, False, -(2**53)]}]}, '{"a":[{"b":[null,false,-9007199254740992]}]}'),
        ({"a": {"b": 2.0}}, '{"a":{"b":2}}'),
        ({"n": 2**53 + 1}, '{"n":9007199254740992}'),
        ({"n": 2**64}, '{"n":18446744073709552000}'),
        ({"a": {"z": 1, "10": 2, "9": 3}}, '{"a":{"9":3,"10":2,"z":1}}'),
        ({"01": 1, "z": 2}, '{"01":1,"z":2}'),
        ({"01": 1, "1": 2}, '{"1":2,"01":1}'),
        ({"a": ["x\udc00"]}, '{"a":["x\\udc00"]}'),
        ({"a": ("t", 1)}, '{"a":["t",1]}'),
        ({1: "int key"}, '{"1":"int key"}'),
    ],
)
def test_compact_json_prints_as_js_whichever_way_it_takes(value: Any, printed: str) -> None:
    assert compact_json(value) == printed


def test_compact_json_prints_deep_values_whole() -> None:
    value: Any = 1
    for _ in range(200):
        value = {"a": [value]}
    assert compact_json(value) == '{"a":[' * 200 + "1" + "]}" * 200


def test_pretty_json_is_two_space_stringify() -> None:
    assert pretty_json({"type": "image", "a": [1, {}], "e": []}) == (
        '{\n  "type": "image",\n  "a": [\n    1,\n    {}\n  ],\n  "e": []\n}'
    )


def test_js_entries_puts_array_indexes_first() -> None:
    record = {"b": 0, "10": 0, "a": 0, "1": 0, "01": 0, "-1": 0, "4294967294": 0, "4294967295": 0, "١": 0}
    assert [k for k, _ in js_entries(record)] == ["1", "10", "4294967294", "b", "a", "01", "-1", "4294967295", "١"]


def test_utf16_length_and_cap() -> None:
    assert utf16_len("a😀") == 3
    assert utf16_len("\ud800") == 1
    assert cap_utf16("abc", 3) == ("abc", False)
    assert cap_utf16("abcd", 3) == ("abc", True)
    assert cap_utf16("ab😀", 3) == ("ab", True)  # never half a surrogate pair
    assert cap_utf16("a😀b", 3) == ("a😀", True)
    assert cap_utf16("x" * 20_001) == ("x" * 20_000, True)


def test_interpolate_is_js_style() -> None:
    assert interpolate("{retained} kept · {omitted} omitted", {"retained": 18.0, "omitted": 0}) == "18 kept · 0 omitted"
    assert interpolate("{missing} stays", {}) == "{missing} stays"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


def as_doubles(value: Any) -> Any:
    """The value as JS holds it: every number a double."""
    if isinstance(value, dict):
        return {k: as_doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_doubles(v) for v in value]
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


@given(json_values)
def test_compact_and_pretty_json_round_trip(value: Any) -> None:
    expected = as_doubles(value)
    assert as_doubles(json.loads(compact_json(value))) == expected
    assert as_doubles(json.loads(pretty_json(value))) == expected


@given(st.text())
def test_utf16_len_matches_an_encoder(text: str) -> None:
    assert utf16_len(text) == len(text.encode("utf-16-le", "surrogatepass")) // 2


def _with_kind_and_form(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.sampled_from(
        [
            "kind",
            "form",
            "plugin",
            "name",
            "changes",
            "entries",
            "sections",
            "summary",
            "senderSessionId",
            "references",
            "path",
            "action",
            "label",
            "description",
            "text",
            "retainedMessages",
            "omittedMessages",
            "truncated",
            "baseline",
            "update",
            "digest",
        ]
    )
    values = st.sampled_from(
        [
            "instructions",
            "catalog",
            "snapshot",
            "notice",
            "relay",
            "recall",
            "plugin",
            "session-reference",
            "agent-instructions",
            "skill-invocation",
            "set",
            "remove",
            "",
        ]
    )
    return st.lists(children, max_size=3) | st.dictionaries(keys, values | children, max_size=6)


sources = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5), _with_kind_and_form, max_leaves=25
)


@given(
    st.one_of(sources, st.lists(sources | st.fixed_dictionaries({"type": st.just("text"), "text": st.text()}))), sources
)
def test_projection_never_crashes_on_any_json(content: Any, source: Any) -> None:
    view = project_context(content, source)
    assert view.body.kind in ("opaque", "instructions", "catalog", "snapshot", "notice", "relay", "recall")
    assert (view.rendered_form is None) == (view.body.kind == "opaque")
    assert project_context(freeze(content), freeze(source)) == view
