"""Adversarial logs: each gets the verdict docs/format.md gives it, at the exact location."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from dsh_inspect.history.session import SessionLog
from dsh_inspect.log.diagnostics import Location
from dsh_inspect.log.records import NotASessionLog

from tests.support.builders import LogBuilder, header, two_turns
from tests.support.logs import load_path

Event = dict[str, Any]


def lines_of(events: list[Event], head: dict[str, Any] | None = None) -> list[bytes]:
    return [orjson.dumps(head or header())] + [orjson.dumps(e) for e in events]


def write(tmp_path: Path, lines: list[bytes], *, trailing_lf: bool = True) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if trailing_lf else b""))
    return path


def read(tmp_path: Path, lines: list[bytes], **kw: Any) -> SessionLog:
    return load_path(write(tmp_path, lines, **kw))


def offset_of_line(lines: list[bytes], number: int) -> int:
    return sum(len(line) + 1 for line in lines[: number - 1])


def test_a_well_formed_log_is_accepted(tmp_path: Path) -> None:
    log = read(tmp_path, lines_of(two_turns().events))
    assert log.verdict.category == "accepted"
    assert log.verdict.accepted
    assert log.event_count == len(two_turns().events)
    assert log.turns == 2 and log.steps == 4
    assert log.message_count == 8


def test_a_torn_last_line_is_pending_and_the_log_repaired(tmp_path: Path) -> None:
    lines = lines_of(two_turns().events)
    lines.append(b'{"type":"turn/start","seq":99,"ti')
    log = read(tmp_path, lines, trailing_lf=False)
    assert log.verdict.category == "repaired"
    assert "torn final line" in log.verdict.reason
    pending = [d for d in log.diagnostics if d.code == "pending-line"]
    assert len(pending) == 1 and pending[0].severity == "info"
    assert pending[0].location.line == len(lines)
    assert pending[0].location.offset == offset_of_line(lines, len(lines))
    assert log.event_count == len(two_turns().events)
    assert [t.kind for t in log.tail] == ["pending"]


def test_garbage_mid_file_without_a_later_turn_end_drops_the_tail(tmp_path: Path) -> None:
    log_events = two_turns().events
    first_turn_end = next(e["seq"] for e in log_events if e["type"] == "turn/end")
    lines = lines_of(log_events[: first_turn_end + 1])
    garbage_line = len(lines) + 1
    lines.append(b"\x00\x00 not json")
    lines += [orjson.dumps(e) for e in log_events[first_turn_end + 1 : -1]]  # turn 2, without its turn/end
    log = read(tmp_path, lines)
    assert log.verdict.category == "repaired"
    assert f"line {garbage_line}" in log.verdict.reason
    assert log.event_count == first_turn_end + 1
    defect = next(d for d in log.diagnostics if d.code == "defect")
    assert defect.location.line == garbage_line
    assert defect.location.offset == offset_of_line(lines, garbage_line)
    # nothing is lost: the dropped records stay visible
    assert [t.kind for t in log.tail].count("dropped") == len(log_events) - first_turn_end - 2


def test_garbage_mid_file_with_a_later_turn_end_is_refused_at_the_garbage(tmp_path: Path) -> None:
    events = two_turns().events
    lines = lines_of(events)
    lines.insert(5, b"{oops")
    log = read(tmp_path, lines)
    assert log.verdict.category == "refused"
    assert log.verdict.location is not None and log.verdict.location.line == 6
    assert log.verdict.location.offset == offset_of_line(lines, 6)
    assert "turn/end" in log.verdict.reason


def test_a_seq_gap_in_an_artifact_is_refused_where_the_gap_is(tmp_path: Path) -> None:
    events = two_turns().events
    for e in events[10:]:
        e["seq"] += 1
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "refused"
    assert log.verdict.location.line == 12  # header is line 1, seq 10 is line 11, the gap at line 12
    assert "does not continue" in log.verdict.reason


def test_a_turn_end_with_a_seq_gap_is_corrupt_at_once(tmp_path: Path) -> None:
    log_builder = LogBuilder()
    log_builder.turn(1)
    events = log_builder.events
    events[-1]["seq"] += 5
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "refused"
    assert log.verdict.location.line == len(events) + 1
    assert "turn/end" in log.verdict.reason


def test_an_open_final_turn_is_closed_in_memory(tmp_path: Path) -> None:
    builder = LogBuilder()
    builder.turn(1)
    builder.add("turn/start", {"turn": 2})
    builder.add("step/start", {"turn": 2, "step": 1})
    builder.user("Two reads")
    builder.assistant(
        2,
        1,
        [
            {"type": "tool-call", "id": "call_a", "name": "read", "arguments": "{}"},
            {"type": "tool-call", "id": "call_b", "name": "read", "arguments": "{}"},
        ],
    )
    call = builder.add("tool/call", {"turn": 2, "step": 1, "callId": "call_a", "name": "read", "arguments": "{}"})
    path = write(tmp_path, lines_of(builder.events))
    before = path.read_bytes()
    log = load_path(path)
    assert path.read_bytes() == before, "closers live in memory only"
    assert log.verdict.category == "repaired"
    n = len(builder.events)
    closers = [log.event(s) for s in range(n, log.event_count)]
    assert [e.type for e in closers] == ["tool/result", "tool/result", "step/end", "turn/end"]
    assert all(e.synthetic for e in closers)
    unknown, not_started = closers[0], closers[1]
    assert unknown.data["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert unknown.source_event_seqs == (call["seq"],)
    assert unknown.message.id == f"interrupted-tool-result-call_a-{n}"
    assert unknown.message.content[0].content[0].text == (
        "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is "
        "unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or "
        "idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly."
    )
    assert not_started.data["error"] == {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    assert not_started.source_event_seqs is None
    assert not_started.message.content[0].content[0].text == (
        "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
    )
    assert closers[-1].data["reason"] == {"kind": "interrupted"}
    assert all(e.time == builder.events[-1]["time"] for e in closers)
    assert log.history_at()[-1].id == not_started.message.id


def test_an_unknown_event_type_is_unsupported_unless_ignorable(tmp_path: Path) -> None:
    events = two_turns().events
    events.insert(3, {"type": "future/thing", "seq": 3, "time": 1, "data": {}})
    for i, e in enumerate(events):
        e["seq"] = i
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "unsupported"
    assert "future/thing" in log.verdict.reason and log.verdict.location.line == 5
    events[3]["ignorable"] = True
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "accepted"
    assert log.event(3).ignorable and log.event(3).type == "future/thing"


@pytest.mark.parametrize(("version", "word"), [(1, "newer"), (-1, "older")])
def test_a_header_version_other_than_zero_is_unsupported(tmp_path: Path, version: int, word: str) -> None:
    log = read(tmp_path, lines_of(two_turns().events, header(version=version)))
    assert log.verdict.category == "unsupported"
    assert word in log.verdict.reason and str(version) in log.verdict.reason
    assert log.verdict.location.line == 1
    assert log.event_count == len(two_turns().events), "what is readable still reads"


def test_a_replace_over_a_range_not_on_the_surface_is_refused(tmp_path: Path) -> None:
    builder = two_turns()
    first_user = next(e for e in builder.events if e["type"] == "user/message")
    replace = builder.user("summary")
    replace["surfaceOp"] = {"op": "replace", "start": first_user["seq"], "end": 9999}
    log = read(tmp_path, lines_of(builder.events))
    assert log.verdict.category == "refused"
    assert "9999 is not on the surface" in log.verdict.reason
    assert log.verdict.location.line == len(builder.events) + 1


def test_a_tool_result_replace_may_change_only_its_content(tmp_path: Path) -> None:
    builder = two_turns()
    original = next(e for e in builder.events if e["type"] == "tool/result")
    pruned = orjson.loads(orjson.dumps(original))
    pruned.update(
        seq=len(builder.events),
        surfaceOp={"op": "replace", "start": original["seq"], "end": original["seq"]},
        sourceEventSeqs=[original["seq"]],
    )
    pruned["data"]["message"]["content"][0]["content"] = [{"type": "text", "text": "[pruned]"}]
    builder.add(
        "compaction/prune",
        {
            "shadowedRange": {"start": original["seq"], "end": original["seq"]},
            "shadowedSeqs": [original["seq"]],
            "shadowedTokenCount": 3,
        },
    )
    pruned["seq"] = len(builder.events)
    builder.events.append(pruned)
    good = read(tmp_path, lines_of(builder.events))
    assert good.verdict.category == "accepted", good.verdict
    assert good.shadowed_by[pruned["seq"]] == [original["seq"]]
    # a pruned result is the same semantic message: it keeps its id
    mid = original["data"]["message"]["id"]
    assert [c.seq for c in good.carriers_of(mid)] == [original["seq"], pruned["seq"]]
    assert good.event(original["seq"]).message.content[0].content[0].text == "alpha"
    visible = [m for m in good.history_at() if m.id == mid]
    assert len(visible) == 1 and visible[0].content[0].content[0].text == "[pruned]"
    pruned["data"]["message"]["content"][0]["isError"] = True
    bad = read(tmp_path, lines_of(builder.events))
    assert bad.verdict.category == "refused"
    assert "only its result content" in bad.verdict.reason
    assert bad.verdict.location.line == len(builder.events) + 1


def test_non_utf8_bytes_are_replaced_and_warned_about(tmp_path: Path) -> None:
    builder = two_turns()
    lines = lines_of(builder.events)
    user_line = next(i for i, e in enumerate(builder.events) if e["type"] == "user/message") + 1
    lines[user_line] = lines[user_line].replace(b"Read a.txt", b"Read \xff.txt")
    log = read(tmp_path, lines)
    assert log.verdict.category == "accepted"
    (warning,) = [d for d in log.diagnostics if d.code == "invalid-utf8"]
    assert warning.severity == "warning"
    assert warning.location.line == user_line + 1
    assert warning.location.offset == offset_of_line(lines, user_line + 1) + lines[user_line].index(b"\xff")
    assert "Read \ufffd.txt" in log.history_at()[0].text()


def test_range_form_source_event_seqs_are_refused_as_the_pinned_release_refuses_them(tmp_path: Path) -> None:
    builder = two_turns()
    builder.add("turn/start", {"turn": 3})
    builder.add("step/start", {"turn": 3, "step": 1})
    chunks = [
        builder.add("assistant/chunk", {"turn": 3, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": t}})
        for t in ("a", "b", "c", "d")
    ]
    message = builder.assistant(3, 1, [{"type": "text", "text": "abcd"}])
    builder.add("step/end", {"turn": 3, "step": 1})
    builder.add("turn/end", {"turn": 3, "reason": {"kind": "completed"}})
    first, last = chunks[0]["seq"], chunks[-1]["seq"]
    for form in ([[first, last]], [first, [first + 1, last]]):
        message["sourceEventSeqs"] = form
        log = read(tmp_path, lines_of(builder.events))
        assert log.verdict.category == "refused"
        assert log.verdict.reason == (
            'session event "assistant/message" sourceEventSeqs must densely contain non-negative safe integers'
            " (a release after 0.1.1-rc.2 reads this range form and would accept it)"
        )
        assert log.verdict.location.line == message["seq"] + 2
        assert log.event(message["seq"]).source_event_seqs == tuple(range(first, last + 1)), "still read for display"
    for broken in ([[last, first]], [last, [first, first + 1]]):  # not a range any release reads
        message["sourceEventSeqs"] = broken
        log = read(tmp_path, lines_of(builder.events))
        assert log.verdict.category == "refused" and "would accept" not in log.verdict.reason


def _renumbered(events: list[Event]) -> list[Event]:
    for i, e in enumerate(events):
        e["seq"] = i
    return events


@pytest.mark.parametrize(
    ("value", "printed"), [(..., "undefined"), (7, "7"), (None, "null"), (["x"], "x"), ({"a": 1}, "[object Object]")]
)
def test_a_type_missing_or_not_a_string_is_an_unknown_type_as_dsh_says(
    tmp_path: Path, value: Any, printed: str
) -> None:
    events = two_turns().events
    if value is ...:
        del events[4]["type"]
    else:
        events[4]["type"] = value
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "unsupported"
    assert log.verdict.reason == (
        f'session "session-test" contains event type "{printed}" (seq 4) unknown to this harness and not marked '
        "ignorable; refusing to interpret the log — it was likely written by a newer harness"
    )
    assert log.verdict.location.line == 6
    events[4]["ignorable"] = True  # then the envelope rule refuses it
    assert read(tmp_path, lines_of(events)).verdict.reason == "invalid event envelope: type is not a string"


def test_a_version_that_is_a_number_but_not_an_integer_is_unsupported(tmp_path: Path) -> None:
    log = read(tmp_path, lines_of(two_turns().events, header(version=0.5)))
    assert log.verdict.category == "unsupported"
    assert log.verdict.reason == (
        'session "session-test" uses log format v0.5, but this harness reads only v0: the log was written by a '
        "newer harness — upgrade the harness to open it"
    )
    assert read(tmp_path, lines_of(two_turns().events, header(version="0"))).verdict.category == "refused"


def test_a_header_that_does_not_lead_to_its_place_in_a_dsh_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    place = root / "--work-project--" / "session-test" / "session.jsonl"
    place.parent.mkdir(parents=True)
    cases = {
        "id": (header("session-other"), 'requested id "session-test" does not match header id "session-other"'),
        "cwd": (
            header(cwd="/work/elsewhere"),
            f'header id "session-test" and cwd identify "{root}/--work-elsewhere--/session-test/session.jsonl"',
        ),
        "no cwd": (
            {k: v for k, v in header().items() if k != "cwd"},
            f'header id "session-test" and cwd identify "{root}/_no-cwd/session-test/session.jsonl"',
        ),
    }
    for label, (head, words) in cases.items():
        place.write_bytes(b"".join(line + b"\n" for line in lines_of(two_turns().events, head)))
        for given in (root, place):  # handed the root, or the artifact in it
            log = load_path(given)
            assert log.verdict.category == "refused", label
            assert log.verdict.reason == f'corrupt session log "{place}": {words}', label
    place.write_bytes(b"".join(line + b"\n" for line in lines_of(two_turns().events)))
    assert load_path(root).verdict.category == "accepted"
    loose = tmp_path / "copy" / "session.jsonl"  # the same bytes outside any root: no place to check
    loose.parent.mkdir()
    loose.write_bytes(b"".join(line + b"\n" for line in lines_of(two_turns().events, header("session-other"))))
    assert load_path(loose).verdict.category == "accepted"


@pytest.mark.parametrize("where", ["after the last event", "after a defective line"])
def test_a_null_record_in_the_droppable_tail_is_refused_as_dsh_fails_on_it(tmp_path: Path, where: str) -> None:
    lines = lines_of(two_turns().events)
    if where == "after a defective line":
        lines.append(b"not json")
    lines.append(b"null")
    log = read(tmp_path, lines)
    field = "seq" if where == "after the last event" else "type"
    assert log.verdict.category == "refused"
    assert log.verdict.reason.startswith(
        f"dsh's log scanner fails on this null record (TypeError: Cannot read properties of null (reading '{field}'))"
    )
    assert log.verdict.location.line == len(lines)
    assert log.verdict.repairs == (), "a refused log lists no repairs"
    lines[-1] = b"{}"  # any other defective record there is dropped
    assert read(tmp_path, lines).verdict.category == "repaired"


@pytest.mark.parametrize("data", [None, [], [1], 3, "x", True])
def test_a_turn_end_whose_data_is_not_an_object_is_accepted_as_dsh_accepts_it(tmp_path: Path, data: Any) -> None:
    events = two_turns().events
    events[-1]["data"] = data
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "accepted"
    assert not log.closers, "it closes its turn all the same"


@pytest.mark.parametrize(("kind", "field"), [("turn/start", "turn"), ("step/start", "step"), ("tool/call", "callId")])
def test_null_data_that_dshs_repair_pass_reads_is_refused_in_closed_turns_too(
    tmp_path: Path, kind: str, field: str
) -> None:
    events = two_turns().events
    first = next(e for e in events if e["type"] == kind)
    first["data"] = None
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "refused"
    assert log.verdict.reason == (
        'stored session "session-test" failed validation: '
        f"TypeError: Cannot read properties of null (reading '{field}')"
    )
    assert log.verdict.location.line == first["seq"] + 2


def test_events_count_only_what_is_stored_and_a_refused_log_repairs_nothing(tmp_path: Path) -> None:
    builder = two_turns()
    builder.turn(3, close=False)
    log = read(tmp_path, lines_of(builder.events))
    assert log.verdict.category == "repaired"
    assert log.stored_count == len(builder.events) and log.event_count == len(builder.events) + len(log.closers)
    lines = [*lines_of(builder.events), b'{"type":"step/start","seq":999,"time":0,"data":{}}', b"null"]
    refused = read(tmp_path, lines)
    assert refused.verdict.category == "refused" and refused.verdict.repairs == ()


def test_an_empty_session_file_is_refused_as_dsh_refuses_it(tmp_path: Path) -> None:
    (tmp_path / "session.jsonl").write_bytes(b"")
    log = load_path(tmp_path / "session.jsonl")
    assert log.header is None
    assert log.verdict.category == "refused"
    assert log.verdict.reason == "empty or header-less session log"
    assert log.verdict.location == Location(file=str(tmp_path / "session.jsonl"), line=1, offset=0)


def test_an_empty_file_with_another_name_is_not_a_session_log(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_bytes(b"")
    with pytest.raises(NotASessionLog, match="empty or header-less"):
        load_path(tmp_path / "notes.jsonl")


def test_a_header_only_log_is_accepted_with_no_events(tmp_path: Path) -> None:
    log = read(tmp_path, lines_of([]))
    assert log.verdict.category == "accepted"
    assert log.carrier == "fixture", "no event line carries a seq (docs/format.md §8)"
    assert log.event_count == 0 and log.history_at() == []


def test_optional_invariants_are_warnings_never_refusals(tmp_path: Path) -> None:
    builder = two_turns()
    orphan_call = next(e for e in builder.events if e["type"] == "tool/call")
    builder.events.remove(orphan_call)
    for i, e in enumerate(builder.events):
        e["seq"] = i
        e.pop("sourceEventSeqs", None) if e["type"] == "tool/result" else None
    log = read(tmp_path, lines_of(builder.events))
    assert log.verdict.category == "accepted"
    warnings = [d for d in log.diagnostics if d.code == "invariant"]
    assert any("has no tool/call" in w.message for w in warnings)
    assert all(w.severity == "warning" for w in warnings)


def test_the_earliest_dsh_stage_decides_the_reason(tmp_path: Path) -> None:
    """dsh runs each stage over the whole log before the next: an unknown type early
    in the log loses to a legacy event type later in it."""
    events = two_turns().events
    events.insert(2, {"type": "future/thing", "seq": 0, "time": 1, "data": {}})
    events.insert(8, {"type": "mode/set", "seq": 0, "time": 1, "data": {}})
    for i, e in enumerate(events):
        e["seq"] = i
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "refused"
    assert "mode/set" in log.verdict.reason and log.verdict.location.line == 10  # events[8] is line 10


def test_envelope_rules(tmp_path: Path) -> None:
    events = two_turns().events
    events[0]["extra"] = 1
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "refused" and "unexpected key" in log.verdict.reason
    events[0].pop("extra")
    events[0]["surfaceOp"] = "append"
    assert "not a surface event" in read(tmp_path, lines_of(events)).verdict.reason
    events[0].pop("surfaceOp")
    user = next(e for e in events if e["type"] == "user/message")
    user.pop("surfaceOp")
    assert "has no surfaceOp" in read(tmp_path, lines_of(events)).verdict.reason


def test_a_retired_header_field_is_refused(tmp_path: Path) -> None:
    log = read(tmp_path, lines_of(two_turns().events, header(sandboxMode="read-only")))
    assert log.verdict.category == "refused" and "retired" in log.verdict.reason


def test_a_malformed_request_header_is_refused(tmp_path: Path) -> None:
    events = two_turns().events
    rh = next(e for e in events if e["type"] == "request/header")
    rh["data"]["header"]["adapterDefaults"] = {"maxTokens": True}
    log = read(tmp_path, lines_of(events))
    assert log.verdict.category == "refused" and "maxTokens" in log.verdict.reason


def test_one_line_with_a_seq_makes_the_log_an_artifact_and_a_line_without_one_a_defect(tmp_path: Path) -> None:
    events = two_turns().events
    lines = lines_of(events)
    stripped = orjson.loads(lines[1])
    del stripped["seq"], stripped["time"]
    lines[1] = orjson.dumps(stripped)  # event 0 without its seq; event 1 onward still carry theirs
    log = read(tmp_path, lines)
    assert log.carrier == "jsonl"
    assert log.verdict.category == "refused"
    assert log.verdict.location is not None and log.verdict.location.line == 2


def test_a_placeholder_cwd_in_a_recorded_artifact_is_read_with_a_warning(tmp_path: Path) -> None:
    log = read(tmp_path, lines_of(two_turns().events, header(cwd="{{cwd}}")))
    assert log.verdict.category == "accepted"
    assert [d.code for d in log.diagnostics if d.severity == "warning"] == ["placeholder-cwd"]
    relative = read(tmp_path, lines_of(two_turns().events, header(cwd="work/project")))
    assert relative.verdict.category == "refused"
    assert relative.verdict.reason == "header cwd 'work/project' is not an absolute path"


@pytest.mark.parametrize("call_id", [[1], {"id": "call_a"}])
def test_a_call_id_that_is_no_string_gets_a_verdict_not_a_crash(tmp_path: Path, call_id: Any) -> None:
    builder = two_turns()
    builder.add("tool/call", {"turn": 2, "step": 1, "callId": call_id, "name": "read", "arguments": "{}"})
    log = read(tmp_path, lines_of(builder.events))
    assert log.verdict.category in ("accepted", "repaired", "refused")
    assert log.event_count >= len(builder.events)
