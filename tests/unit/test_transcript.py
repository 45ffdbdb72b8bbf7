"""Which rows a log's events become (FORMAT.md §5.5, UI.md §0, §7 items 33-34)."""

from __future__ import annotations

from pathlib import Path

import orjson

from app.history.transcript import Row, build_rows
from tests.support.builders import LogBuilder, header
from tests.support.logs import load_path


def rows_of(tmp_path: Path, builder: LogBuilder) -> list[Row]:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(), *builder.events]))
    log = load_path(path)
    assert log.verdict.accepted, log.verdict
    return build_rows(log)


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
    checkpoint = b.user("<context_checkpoint>…</context_checkpoint>",
                        {"kind": "plugin", "plugin": "compact", "compactionId": "c1"})
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
    steer = {"id": "steer-1", "role": "user", "content": [{"type": "text", "text": "also b.txt"}],
             "source": {"kind": "user"}}
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [steer]})
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "removedCount": 1, "inserted": []})
    b.add("user/message", steer, surfaceOp="append")
    cancelled = {**steer, "id": "steer-2"}
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [cancelled]})
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "removedCount": 1, "inserted": [],
                                  "outcome": "canceled"})
    b.add("step/end", {"turn": 1, "step": 3})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    kinds = [r.kind for r in rows_of(tmp_path, b) if r.kind in ("user", "steering")]
    assert kinds == ["user", "steering"]


def test_a_prompt_borrows_the_labels_of_a_session_reference_right_after_it(tmp_path: Path) -> None:
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    prompt = b.user("see @Research notes")
    recall = b.user("recalled", {"kind": "session-reference", "form": "recall", "version": 1,
                                 "references": [{"label": "Research notes", "retainedMessages": 3,
                                                 "omittedMessages": 0, "truncated": False}]})
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
    rows = build_rows(load_path(path))
    assert rows[-1].kind == "diagnostic" and rows[-1].tail is not None
    assert rows[-1].tail.raw == b"{garbage"
