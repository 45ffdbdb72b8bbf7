"""Which rows a log's events become (docs/format.md §5.5, docs/ui.md §0, §7 items 33-34)."""

from __future__ import annotations

from pathlib import Path

import orjson
from dsh_inspect.history.transcript import Row, transcript_rows

from tests.support.builders import LogBuilder, header
from tests.support.logs import load_path


def rows_of(tmp_path: Path, builder: LogBuilder) -> list[Row]:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(), *builder.events]))
    log = load_path(path)
    assert log.verdict.accepted, log.verdict
    return transcript_rows(log)[1]


def test_only_append_origin_non_user_messages_are_context_rows(tmp_path: Path) -> None:
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    prompt = b.user("hello")
    ctx = b.user("<system-reminder>x</system-reminder>", {"kind": "plugin", "plugin": "fixture"})
    unnamed = b.user("report", {"kind": "subagent-report", "form": "relay", "senderSessionId": "child"})
    rewrite = b.user("rewritten", {"kind": "plugin", "plugin": "fixture"})
    rewrite["surfaceOp"] = {"op": "replace", "start": ctx["seq"], "end": ctx["seq"]}
    rewrite["data"]["id"] = ctx["data"]["id"]
    checkpoint = b.user(
        "<context_checkpoint>…</context_checkpoint>", {"kind": "plugin", "plugin": "compact", "compactionId": "c1"}
    )
    checkpoint["surfaceOp"] = {"op": "replace", "start": prompt["seq"], "end": unnamed["seq"]}
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    rows = {r.seq: r.kind for r in rows_of(tmp_path, b)}
    assert rows[prompt["seq"]] == "user"
    assert rows[ctx["seq"]] == "context" and rows[unnamed["seq"]] == "context"
    assert rewrite["seq"] not in rows, "a replacement copy is model-only"
    assert rows[checkpoint["seq"]] == "compaction", "the checkpoint is a marker, never context"


def test_a_message_claimed_from_the_next_step_inbox_is_steering(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1, close=False)
    b.add("step/start", {"turn": 1, "step": 3})
    steer = {
        "id": "steer-1",
        "role": "user",
        "content": [{"type": "text", "text": "also b.txt"}],
        "source": {"kind": "user"},
    }
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [steer]})
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "removedCount": 1, "inserted": []})
    b.add("user/message", steer, surfaceOp="append")
    cancelled = {**steer, "id": "steer-2"}
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [cancelled]})
    b.add(
        "agent/inbox/spliced",
        {"target": "next-step", "start": 0, "removedCount": 1, "inserted": [], "outcome": "canceled"},
    )
    b.add("step/end", {"turn": 1, "step": 3})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    kinds = [r.kind for r in rows_of(tmp_path, b) if r.kind in ("user", "steering")]
    assert kinds == ["user", "steering"]


def test_a_prompt_borrows_the_labels_of_a_session_reference_right_after_it(tmp_path: Path) -> None:
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    prompt = b.user("see @Research notes")
    recall = b.user(
        "recalled",
        {
            "kind": "session-reference",
            "form": "recall",
            "version": 1,
            "references": [
                {"label": "Research notes", "retainedMessages": 3, "omittedMessages": 0, "truncated": False}
            ],
        },
    )
    later = b.user("another prompt")
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    rows = {r.seq: r for r in rows_of(tmp_path, b)}
    assert rows[prompt["seq"]].related == (recall["seq"],)
    assert rows[recall["seq"]].kind == "context"
    assert rows[later["seq"]].related == ()
    order = [r.seq for r in rows.values()]
    assert order.index(prompt["seq"]) < order.index(recall["seq"])


def test_tool_results_pair_with_their_calls_and_chunks_make_no_rows(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    rows = rows_of(tmp_path, b)
    tool = [r for r in rows if r.kind == "tool-call"]
    call = next(e for e in b.events if e["type"] == "tool/call")
    result = next(e for e in b.events if e["type"] == "tool/result")
    assert [(r.seq, r.related) for r in tool] == [(call["seq"], (result["seq"],))]
    assert all(r.seq != result["seq"] for r in rows)
    assert [r.seq for r in rows] == sorted(r.seq for r in rows)


def test_records_dsh_would_drop_still_get_rows(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(), *b.events]) + b"{garbage\n")
    rows = transcript_rows(load_path(path))[1]
    assert rows[-1].kind == "diagnostic" and rows[-1].tail is not None
    assert rows[-1].tail.raw == b"{garbage"


def write_lines(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def event_lines(builder: LogBuilder) -> list[bytes]:
    return [orjson.dumps(x) for x in [header(), *builder.events]]


def test_a_warning_is_a_row_right_before_the_row_of_its_line(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    lines = event_lines(b)
    prompt = next(e for e in b.events if e["type"] == "user/message")
    lines[prompt["seq"] + 1] = lines[prompt["seq"] + 1].replace(b"Read a.txt please", b"Read \xff please")
    log = load_path(write_lines(tmp_path, lines))
    assert log.verdict.accepted
    rows = transcript_rows(log)[1]
    findings = [i for i, r in enumerate(rows) if r.kind == "diagnostic"]
    assert [rows[i].diagnostic.code for i in findings] == ["invalid-utf8"]  # type: ignore[union-attr]
    after = rows[findings[0] + 1]
    assert (after.kind, after.seq) == ("user", prompt["seq"])


def garbage_after_first_turn(tmp_path: Path, builder: LogBuilder) -> tuple[Path, int]:
    """`{garbage` on the line after turn 1's end; returns the log and the garbage's line number."""
    lines = event_lines(builder)
    first_end = next(e["seq"] for e in builder.events if e["type"] == "turn/end")
    at = first_end + 2  # lines[0] is the header: the event with seq n is lines[n + 1]
    lines.insert(at, b"{garbage")
    return write_lines(tmp_path, lines), at + 1


def test_after_committed_corruption_the_readable_events_are_rows_outside_dsh_view(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    b.turn(2, "And again")  # its turn/end follows the garbage: dsh refuses the whole log
    path, line = garbage_after_first_turn(tmp_path, b)
    log = load_path(path)
    assert log.verdict.category == "refused"
    readable, rows = transcript_rows(log)
    findings = [r for r in rows if r.kind == "diagnostic"]
    assert [r.diagnostic.code for r in findings] == [d.code for d in log.diagnostics]  # type: ignore[union-attr]
    assert [r.diagnostic.code for r in findings] == ["defect", "committed-corruption"]  # type: ignore[union-attr]
    first_out = rows.index(findings[-1]) + 1
    inside, outside = rows[:first_out], rows[first_out:]
    assert all(r.outside is None for r in inside if r.kind != "diagnostic")
    # turn 2 as it was written: its prompt, its steps, its tool call with the result
    assert {"user", "assistant-step", "tool-call", "step"} <= {r.kind for r in outside}
    assert all(r.outside and f"line {line}" in r.outside and "refuses" in r.outside for r in outside)
    prompt = next(r for r in outside if r.kind == "user")
    assert readable.event(prompt.seq).message.content[0].text == "And again"  # type: ignore[union-attr]
    tool = next(r for r in outside if r.kind == "tool-call")
    assert readable.event(tool.link("result")[0]).type == "tool/result"
    # the last finding heads the rows outside dsh's view with their reason
    assert findings[-1].outside == outside[0].outside


def test_a_dropped_tail_stays_readable_as_rows_outside_dsh_view(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    b.turn(2, "And again", close=False)  # no turn/end after the garbage: dsh drops the tail
    path, line = garbage_after_first_turn(tmp_path, b)
    log = load_path(path)
    assert log.verdict.category == "repaired"
    rows = transcript_rows(log)[1]
    outside = [r for r in rows if r.outside is not None and r.kind != "diagnostic"]
    assert outside and all(f"line {line}" in r.outside and "drops" in r.outside for r in outside)  # type: ignore[operator]
    assert [r.diagnostic.code for r in rows if r.diagnostic] == ["defect"]


def test_a_repeated_message_id_makes_a_numbered_row_and_a_warning_before_it(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    first = next(e for e in b.events if e["type"] == "user/message")
    b.add("turn/start", {"turn": 2})
    b.add("step/start", {"turn": 2, "step": 1})
    again = b.add(
        "user/message", {**first["data"], "content": [{"type": "text", "text": "same id"}]}, surfaceOp="append"
    )
    b.assistant(2, 1, [{"type": "text", "text": "ok"}])
    b.add("step/end", {"turn": 2, "step": 1})
    b.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(event_lines(b)) + b"\n")
    rows = transcript_rows(load_path(path))[1]
    users = [r for r in rows if r.kind == "user"]
    assert [(r.message, r.occurrence) for r in users] == [(first["data"]["id"], 1), (first["data"]["id"], 2)]
    i = rows.index(users[1])
    assert rows[i].seq == again["seq"] and rows[i - 1].kind == "diagnostic"
    assert rows[i - 1].diagnostic.code == "repeated-message-id"  # type: ignore[union-attr]
    assert f"msg-{first['data']['id']}~2" in rows[i - 1].diagnostic.message  # type: ignore[union-attr]
    assert [r.diagnostic.code for r in rows if r.diagnostic] == ["repeated-message-id"]


def test_a_tool_row_stands_for_its_result_message(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    result = next(e for e in b.events if e["type"] == "tool/result")
    (tool,) = [r for r in rows_of(tmp_path, b) if r.kind == "tool-call"]
    assert tool.message == result["data"]["message"]["id"]
