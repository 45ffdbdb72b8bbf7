"""Deep JSON and numbers past Python's limits (issue 15). JSON.parse reads a line nested 100,000 deep and an
integer of 5,000 digits, and so does every reader here, without a traceback: a value is as parsed down to
MAX_DEPTH levels, each part nested deeper is its exact JSON text (a string), and a located warning says so.
A line that is not JSON, at any depth, is a defect located where the standard library's parser says."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from dsh_inspect.cli import run_check
from dsh_inspect.log.dsh_root import encode_segment, project_key
from dsh_inspect.log.jsonl import read_json_line
from dsh_inspect.log.jsonvalues import MAX_DEPTH, parse_json
from dsh_inspect.model.frozen import thaw
from dsh_inspect.web.render import render_path
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.builders import LogBuilder, header, two_turns
from tests.support.deep_logs import WARNING, deep_at, log_lines, nested, with_raw, wrapped, write
from tests.support.logs import load_all, load_path
from tests.support.oracle import Job, install, judge
from tests.support.rows import parse
from tests.support.writers import batches_of, new_store, write_sqlite_session, zstd_frame


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def stdlib(text: str) -> Any:
    """The standard library's reading of a (not too deep) text, refusing NaN and Infinity as JSON.parse does."""
    return json.loads(text, parse_constant=_no_constant)


def capped(value: Any, level: int = 1) -> Any:
    """What a reader keeps of `value`: each array or object MAX_DEPTH + 1 levels deep is its compact text."""
    if isinstance(value, (dict, list)) and level > MAX_DEPTH:
        return compact(value)
    if isinstance(value, dict):
        return {k: capped(v, level + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [capped(v, level + 1) for v in value]
    return value


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


def check_json(path: Path) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    run_check([str(path)], as_json=True, out=out, err=err)
    (session,) = json.loads(out.getvalue())["sessions"]
    return session


def warnings_of(session: dict[str, Any]) -> list[tuple[str, int | None, int | None]]:
    return [(d["message"], d["line"], d["offset"]) for d in session["diagnostics"] if d["code"] == "deep-json"]


def shown_findings(html: str) -> list[tuple[str, str]]:
    """Each finding row a page shows: its code and what it says."""
    rows = parse(html).select(".diagnostic-row")
    return [(str(row["data-diagnostic-code"]), row.select_one(".status-text").get_text(strip=True)) for row in rows]


# -- JSON.parse, whatever the depth -------------------------------------------------------------------


def test_a_value_is_as_parsed_down_to_the_cap_and_its_text_from_there() -> None:
    assert parse_json(nested(MAX_DEPTH)) == (wrapped(MAX_DEPTH, 1), None)
    assert parse_json(nested(MAX_DEPTH + 1)) == (wrapped(MAX_DEPTH, "[1]"), MAX_DEPTH)
    deep = nested(100_000, kind="{")
    assert parse_json(deep) == (wrapped(MAX_DEPTH, nested(100_000 - MAX_DEPTH, kind="{"), "{"), 5 * MAX_DEPTH)


def test_each_deep_part_is_its_exact_text_strings_and_spacing_and_all() -> None:
    inner = '"]\\"[ \\\\", {"b" : "é \\u00e9 \\ud83d\\ude00"}, -0.0e+1'  # brackets in strings, escapes, spacing
    text = '{"a": ' + "[ " * 70 + inner + " ]" * 70 + ', "c": [2, {"d": "[["}]}'
    start = text.index("[") + 2 * (MAX_DEPTH - 1)  # "a" is level 2: its 64th array is level 65
    end = len(text) - len(" ]" * (MAX_DEPTH - 1) + ', "c": [2, {"d": "[["}]}')
    value, deep = parse_json(text)
    assert value == {"a": wrapped(MAX_DEPTH - 1, text[start:end]), "c": [2, {"d": "[["}]}
    assert deep == start and text[start:end].startswith("[ [") and text[start:end].endswith("] ]")


def test_sibling_parts_and_parts_deeper_than_twice_the_cap_keep_their_text() -> None:
    twice = nested(3 * MAX_DEPTH, '"deepest"')
    text = "[" * (MAX_DEPTH - 1) + "[" + twice + "," + nested(1) + "," + twice + "]" + "]" * (MAX_DEPTH - 1)
    assert parse_json(text) == (wrapped(MAX_DEPTH - 1, [twice, "[1]", twice]), MAX_DEPTH)


_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8") | st.sampled_from('[]{}"\\:,'), max_size=6)
)
_levels = st.lists(st.tuples(st.sampled_from("[{"), st.lists(_leaves, max_size=2)), max_size=3 * MAX_DEPTH)


@st.composite
def deep_values(draw: st.DrawFn) -> Any:
    """A JSON value up to three times MAX_DEPTH deep: a chain of arrays and objects, siblings beside each."""
    value = draw(st.recursive(_leaves, lambda inner: st.lists(inner, max_size=3), max_leaves=4))
    for kind, siblings in reversed(draw(_levels)):
        if kind == "[":
            value = [*siblings[:1], value, *siblings[1:]]
        else:
            value = {**{f"s{i}": s for i, s in enumerate(siblings)}, "k": value}
    return value


@settings(max_examples=150, deadline=None)
@given(deep_values())
def test_any_value_reads_as_parsed_down_to_the_cap(value: Any) -> None:
    read, deep = parse_json(compact(value))
    assert read == capped(value)
    assert (deep is None) == (depth_of(value) <= MAX_DEPTH)


@settings(max_examples=150, deadline=None)
@given(deep_values(), st.integers(min_value=0))
def test_a_text_missing_one_character_is_refused_exactly_where_json_is(value: Any, where: int) -> None:
    text = compact(value)
    cut = where % len(text)
    damaged = text[:cut] + text[cut + 1 :]
    try:
        stdlib(damaged)
    except ValueError:
        with pytest.raises(json.JSONDecodeError):
            parse_json(damaged)
    else:
        parse_json(damaged)


@pytest.mark.parametrize(
    ("literal", "read"),
    [
        ("9" * 5000, math.inf),
        ("-" + "9" * 5000, -math.inf),
        ("1e400", math.inf),
        ("-1e400", -math.inf),
        ("1" + "0" * 400 + ".5", math.inf),
        (str(2**64 - 1), 2**64 - 1),
        (str(2**64), float(2**64)),
        (str(-(2**63)), -(2**63)),
        (str(-(2**63) - 1), float(-(2**63) - 1)),
    ],
)
def test_a_number_reads_as_javascript_reads_it_on_either_path(literal: str, read: float) -> None:
    fast = read_json_line(f'{{"n":{literal}}}'.encode()).value["n"]
    slow = read_json_line(f'{{"n":{literal},"s":"\\udc00"}}'.encode()).value["n"]  # the standard library's path
    assert fast == slow == read and type(fast) is type(slow) is type(read)


# -- every reader ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["[", "{"])
# 100,000 levels: seconds of `check` and `render`, the slow lane
@pytest.mark.parametrize("depth", [MAX_DEPTH - 2, MAX_DEPTH - 1, 1030, pytest.param(100_000, marks=pytest.mark.slow)])
def test_check_and_render_read_a_deep_line_and_say_where_it_is_deep(tmp_path: Path, depth: int, kind: str) -> None:
    lines = log_lines(nested(depth, kind=kind))
    path = write(tmp_path / "session.jsonl", lines)
    session = check_json(path)
    assert (session["verdict"]["category"], session["events"]) == ("accepted", len(lines) - 1)
    shallow = depth + 2 <= MAX_DEPTH  # `x` is level 3 of its line
    assert warnings_of(session) == ([] if shallow else [(WARNING, 2, deep_at(lines, 2))])
    x = load_path(path).raw_event(0)["data"]["x"]
    assert x == (
        wrapped(depth, 1, kind) if shallow else wrapped(MAX_DEPTH - 2, nested(depth - MAX_DEPTH + 2, kind=kind), kind)
    )
    shown = [f for f in shown_findings(render_path(str(path))) if f[0] == "deep-json"]
    assert shown == ([] if shallow else [("deep-json", f"{path}, line 2, byte {deep_at(lines, 2)}: {WARNING}")])


def with_context(text: str) -> list[bytes]:
    """two_turns() with a request/context event after its first request/header, `text` as one of its fields."""
    events = two_turns().events
    at = next(i for i, e in enumerate(events) if e["type"] == "request/header") + 1
    context = {"type": "request/context", "data": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}}
    events.insert(at, context)
    for seq, event in enumerate(events):
        event["seq"], event["time"] = seq, 1_790_000_000_000 + seq
    lines = [orjson.dumps(header())] + [orjson.dumps(e) for e in events]
    lines[at + 1] = with_raw(context, ("data", "x"), text)
    return lines


@pytest.mark.parametrize(
    ("lines", "number", "seq", "keys"),
    [
        (log_lines(nested(1030), ("data", "content", 0, "x"), "user/message"), 4, 2, ("data", "content", 0, "x")),
        (
            log_lines(nested(1030), ("data", "message", "content", 0, "x"), "tool/result"),
            8,
            6,
            ("data", "message", "content", 0, "x"),
        ),
        (log_lines(nested(1030), ("data", "header", "x"), "request/header"), 5, 3, ("data", "header", "x")),
        (with_context(nested(1030)), 6, 4, ("data", "x")),
        (log_lines(nested(1030), ("x",), "session"), 1, None, ("x",)),
    ],
    ids=["message content", "tool result", "request header", "request context", "session header"],
)
def test_a_deep_part_anywhere_is_read_and_shown_where_it_lies(
    tmp_path: Path, lines: list[bytes], number: int, seq: int | None, keys: tuple[str | int, ...]
) -> None:
    path = write(tmp_path / "session.jsonl", lines)
    session = check_json(path)
    assert (session["verdict"]["category"], session["events"]) == ("accepted", len(lines) - 1)
    assert warnings_of(session) == [(WARNING, number, deep_at(lines, number))]
    log = load_path(path)
    value: Any = thaw(log.header.raw) if log.header is not None and seq is None else log.raw_event(seq or 0)
    for key in keys:
        value = value[key]
    depth = MAX_DEPTH - len(keys)  # the levels the line keeps around `value`'s own
    assert value == wrapped(depth, nested(1030 - depth))
    assert ("deep-json", f"{path}, line {number}, byte {deep_at(lines, number)}: {WARNING}") in shown_findings(
        render_path(str(path))
    )


@pytest.mark.parametrize(
    "text",
    [
        nested(200, "1,,2"),  # not JSON far below the cap
        "[" * (MAX_DEPTH + 5) + '{"k":1,' + nested(10) + ":1}" + "]" * (MAX_DEPTH + 5),  # an array as a key
        "[" * (MAX_DEPTH - 3) + "{" + nested(1) + ":1}" + "]" * (MAX_DEPTH - 3),  # a deep part as a key
        "[" * 100 + "1" + "]" * 99 + "}",  # the wrong closer
        "-" + nested(100),  # a minus sign before a deep part
        nested(150)[:-40],  # torn inside a deep part, then the line goes on
    ],
    ids=["deep", "key below the cap", "key at the cap", "closer", "minus", "torn"],
)
def test_a_deep_line_that_is_not_json_is_a_defect_located_where_json_fails(tmp_path: Path, text: str) -> None:
    lines = log_lines(text)
    path = write(tmp_path / "session.jsonl", lines)
    with pytest.raises(json.JSONDecodeError) as expected:
        stdlib(lines[1].decode())
    session = check_json(path)
    defect = next(d for d in session["diagnostics"] if d["code"] == "defect")
    assert (defect["message"], defect["line"]) == (f"not valid JSON: {expected.value}", 2)
    assert session["verdict"]["category"] == "refused" and warnings_of(session) == []
    assert "defect" in dict(shown_findings(render_path(str(path))))


@pytest.mark.parametrize(
    ("keys", "literal", "verdict", "reason"),
    [
        (("data", "x"), "9" * 5000, "accepted", "dsh would load this log as it is"),
        (("data", "x"), "-" + "9" * 5000, "accepted", "dsh would load this log as it is"),
        (("data", "x"), "1e400", "accepted", "dsh would load this log as it is"),
        (("time",), "9" * 5000, "refused", "invalid event envelope: time is not a safe integer"),
        (("time",), "1e400", "refused", "invalid event envelope: time is not a safe integer"),
        (("seq",), "9" * 5000, "refused", "seq inf does not continue the log (expected 0)"),
    ],
)
def test_a_number_past_pythons_limits_is_read_and_judged(
    tmp_path: Path, keys: tuple[str, ...], literal: str, verdict: str, reason: str
) -> None:
    path = write(tmp_path / "session.jsonl", log_lines(literal, keys))
    session = check_json(path)
    assert session["verdict"]["category"] == verdict and reason in session["verdict"]["reason"]
    render_path(str(path))
    if verdict == "accepted":
        assert load_path(path).raw_event(0)["data"]["x"] == float(literal)


def test_a_deep_line_in_a_zstd_artifact_is_read_and_located(tmp_path: Path) -> None:
    lines = log_lines(nested(5000))
    path = tmp_path / "session.jsonl.zstd"
    batches = [lines[:1]] + [lines[i : i + 5] for i in range(1, len(lines), 5)]  # the header in its own frame
    path.write_bytes(b"".join(zstd_frame(b"".join(x + b"\n" for x in batch)) for batch in batches))
    session = check_json(path)
    assert (session["verdict"]["category"], session["events"]) == ("accepted", 24)
    assert warnings_of(session) == [(WARNING, 2, deep_at(lines, 2))]


def test_a_sqlite_store_reads_deep_data_and_a_huge_number(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    conn = new_store(path)
    for sid in ("text", "blob", "number", "surface"):
        write_sqlite_session(conn, header(sid), batches_of(two_turns().events, 5))
    data = '{"turn":1,"x":' + nested(1030) + "}"
    update = "UPDATE events SET {} = ? WHERE session_id = ? AND seq = ?"
    conn.execute(update.format("data"), (data, "text", 0))
    conn.execute(update.format("data"), (zstandard.ZstdCompressor().compress(data.encode()), "blob", 0))
    conn.execute(update.format("data"), ('{"turn":1,"x":' + "9" * 5000 + "}", "number", 0))
    conn.execute(update.format("surface_op"), (nested(600, '"append"'), "surface", 2))
    conn.commit()
    conn.close()
    logs = {log.source.member: log for log in load_all(path)}
    for sid in ("text", "blob"):
        assert logs[sid].verdict.category == "accepted"
        # a data column is a JSON text of its own: its levels count from `data`, one above a line's
        assert logs[sid].raw_event(0)["data"]["x"] == wrapped(MAX_DEPTH - 1, nested(1030 - MAX_DEPTH + 1))
    assert logs["number"].raw_event(0)["data"]["x"] == math.inf
    assert logs["surface"].verdict.category == "refused"
    assert logs["surface"].verdict.reason.startswith("surfaceOp [[[")
    for sid in logs:
        assert render_path(str(path), session=sid)


def test_only_the_deep_line_warns_among_many_full_of_brackets(tmp_path: Path) -> None:
    """Prompts full of brackets (in short lines and in lines too long to count), and one long deep line."""
    log = LogBuilder()
    prompts = ["[{" * 100, "x" * 5000 + "[" * 3000, "{}" * 2000]
    for turn in range(1, 26):
        log.turn(turn, prompts[turn % 3])
    lines = [orjson.dumps(header())] + [orjson.dumps(e) for e in log.events]
    deep = next(e for e in log.events if e["type"] == "turn/start" and e["data"]["turn"] == 13)
    deep["data"]["pad"] = "y" * 3000
    lines[deep["seq"] + 1] = with_raw(deep, ("data", "x"), nested(MAX_DEPTH))
    path = write(tmp_path / "session.jsonl", lines)
    session = check_json(path)
    assert (session["verdict"]["category"], session["events"]) == ("accepted", len(log.events))
    assert warnings_of(session) == [(WARNING, deep["seq"] + 2, deep_at(lines, deep["seq"] + 2))]


@pytest.mark.oracle
def test_real_dsh_judges_these_logs_as_check_does(tmp_path: Path) -> None:
    """dsh reads the deep and the huge-numbered logs as check does: the verdict, and how many events it loads."""
    cases = {
        "deep-1030": log_lines(nested(1030)),
        "deep-100k": log_lines(nested(100_000, kind="{")),
        "deep-message": log_lines(nested(1030), ("data", "content", 0, "x"), "user/message"),
        "deep-header": log_lines(nested(1030), ("x",), "session"),
        "deep-not-json": log_lines(nested(200, "1,,2")),
        "huge-data": log_lines("9" * 5000),
        "huge-time": log_lines("9" * 5000, ("time",)),
        "huge-seq": log_lines("9" * 5000, ("seq",)),
    }
    node = install()
    jobs, ours = [], {}
    for name, lines in cases.items():
        root = tmp_path / name
        path = write(root / project_key("/work/project") / encode_segment("session-test") / "session.jsonl", lines)
        (log,) = load_all(root)
        ours[name] = (log.verdict.category, log.event_count + 1 if log.verdict.accepted else None)
        jobs.append(Job(name, root, "session-test", "none", path))
    theirs = {name: (o.outcome, o.loaded) for name, o in judge(node, jobs, tmp_path).items()}
    assert theirs == ours
    assert {name: verdict for name, (verdict, _) in ours.items()} == {
        **dict.fromkeys(["deep-1030", "deep-100k", "deep-message", "deep-header", "huge-data"], "accepted"),
        **dict.fromkeys(["deep-not-json", "huge-time", "huge-seq"], "refused"),
    }
