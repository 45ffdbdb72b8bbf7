"""The validating read decodes most lines straight into views of what its rules read (`model.verdict_views`,
docs/decisions/0040-verdict-views.md); a log read so says what a log read whole says. A reader that keeps the
events it parsed (`keep_bytes`, as the search index reads) parses every line whole: the two reads of each log
below, every line of it in dsh's shape but one changed where a view could go wrong, must agree on the verdict,
every finding and where it lies, and every fact of the index."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from dsh_inspect.history.session import SessionLog, load_session

from tests.support.builders import LogBuilder, header
from tests.support.logs import source_of

Event = dict[str, Any]


def session() -> list[Event]:
    """Two turns as dsh writes them, with the lines a view reads: chunks and an inbox splice."""
    log = LogBuilder()
    log.add(
        "agent/inbox/spliced",
        {"target": "next-turn", "start": 0, "inserted": [{"id": "m-1", "role": "user", "content": []}]},
    )
    for turn in (1, 2):
        log.add("turn/start", {"turn": turn})
        log.add("step/start", {"turn": turn, "step": 1})
        log.user(f"Prompt {turn}")
        chunks = [
            log.add("assistant/chunk", {"turn": turn, "step": 1, "chunk": {"type": "text-delta", "text": delta}})["seq"]
            for delta in ("Rea", "ding")
        ]
        call = f"call_{turn}"
        blocks = [{"type": "text", "text": "Reading"}, {"type": "tool-call", "id": call, "name": "r"}]
        log.assistant(turn, 1, blocks)["sourceEventSeqs"] = chunks
        log.tool_round(turn, 1, call, "alpha")
        log.add("step/end", {"turn": turn, "step": 1})
        log.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return log.events


def first(kind: str, change: Callable[[Event], Any]) -> Callable[[list[Event]], None]:
    """A change to the first event of type `kind`."""

    def apply(events: list[Event]) -> None:
        change(next(e for e in events if e["type"] == kind))

    return apply


def text(kind: str, raw: bytes) -> Callable[[list[Event]], None]:
    """The first `kind` event's first text (a chunk's delta, a message's first text block) written as `raw`."""

    def apply(events: list[Event]) -> None:
        event = next(e for e in events if e["type"] == kind)
        data = event["data"]
        holder = data["chunk"] if kind == "assistant/chunk" else (data.get("message") or data)["content"][0]
        holder["text"] = "\x00MARK\x00"
        event["_raw"] = (b'"\\u0000MARK\\u0000"', raw)

    return apply


def last(kind: str) -> Callable[[list[Event]], int]:
    """Where the last event of type `kind` lies."""
    return lambda events: max(i for i, e in enumerate(events) if e["type"] == kind)


def renumbered(events: list[Event]) -> None:
    for seq, event in enumerate(events):
        event["seq"] = seq


def open_call_of_no_step(events: list[Event]) -> None:
    """The last turn opens no step, and its reply, which names none, is the last event: the crash closers' result
    for its call names no step either (a step absent, not null)."""
    turn, reply = last("turn/start")(events), last("assistant/message")(events)
    events[reply]["data"].pop("step")
    del events[reply + 1 :]
    events[:] = [e for i, e in enumerate(events) if i <= turn or e["type"] != "step/start"]
    renumbered(events)
    events[-1]["sourceEventSeqs"] = [seq for seq in events[-1]["sourceEventSeqs"] if seq < len(events) - 1]


def step_ended_unanswered(events: list[Event]) -> None:
    """The last turn's call is never made nor answered, its step ends and the log ends there: the crash tracker
    forgets the call at the step's end, so the closers close only the turn."""
    turn = last("turn/start")(events)
    dropped = ("tool/call", "tool/result", "turn/end")
    events[:] = [e for i, e in enumerate(events) if i < turn or e["type"] not in dropped]
    renumbered(events)


CHANGES: dict[str, Callable[[list[Event]], None]] = {
    "as written": lambda events: None,
    "bad UTF-8 in a chunk's text": text("assistant/chunk", b'"a\xffb"'),
    "an encoded surrogate in a message's text": text("assistant/message", b'"a\xed\xa0\x80b"'),
    "a lone surrogate escape in a tool result's text": text("tool/result", b'"a\\ud800b"'),
    "a number past the doubles in a chunk's text": text("assistant/chunk", b"1e999"),
    "an integer past 64 bits in a user message's text": text("user/message", b"123456789012345678901234567890"),
    "deep nesting in a chunk's text": text("assistant/chunk", b"[" * 100 + b"]" * 100),
    "a turn past 64 bits": first("turn/start", lambda e: e.update(_raw=(b'"turn":1}', b'"turn":%d}' % 2**70))),
    "a turn as a string": first("step/start", lambda e: e["data"].update(turn="1")),
    "a turn as a float": first("turn/end", lambda e: e["data"].update(turn=1.0)),
    "a chunk of another step": first("assistant/chunk", lambda e: e["data"].update(step=7)),
    "a chunk with no turn": first("assistant/chunk", lambda e: e["data"].pop("turn")),
    "a time as a float": first("step/end", lambda e: e.update(time=float(e["time"]))),
    "a time past the safe integers": first("tool/call", lambda e: e.update(time=2**60)),
    "an ignorable envelope": first("step/start", lambda e: e.update(ignorable=True)),
    "an extra envelope key": first("assistant/message", lambda e: e.update(extra=1)),
    "null data": first("step/start", lambda e: e.update(data=None)),
    "data that is a list": first("tool/call", lambda e: e.update(data=[1])),
    "a step with no step": first("step/start", lambda e: e["data"].pop("step")),
    "a legacy turn start": first("turn/start", lambda e: e["data"].update(trigger={"kind": "user"})),
    "a turn end with an error": first(
        "turn/end", lambda e: e["data"].update(reason={"kind": "error", "error": {"message": "x", "code": "E"}})
    ),
    "a null content block": first("assistant/message", lambda e: e["data"]["message"]["content"].append(None)),
    "a block of no type": first("assistant/message", lambda e: e["data"]["message"]["content"][0].pop("type")),
    "an empty message id": first("user/message", lambda e: e["data"].update(id="")),
    "a message of the wrong role": first("assistant/message", lambda e: e["data"]["message"].update(role="user")),
    "a tool result for another call": first(
        "tool/result", lambda e: e["data"]["message"]["content"][0].update(toolCallId="call_9")
    ),
    "a tool result's error code a number": first("tool/result", lambda e: e["data"].update(error={"code": 500})),
    "a tool result that was not started": first(
        "tool/result", lambda e: e["data"].update(error={"code": "TOOL_NOT_STARTED"})
    ),
    "a source that cites a later seq": first("tool/result", lambda e: e.update(sourceEventSeqs=[99])),
    "a source of seqs as null": first("tool/result", lambda e: e.update(sourceEventSeqs=None)),
    "a replace": first("user/message", lambda e: e.update(surfaceOp={"start": 0, "end": 1})),
    "an inbox message of no id": first("agent/inbox/spliced", lambda e: e["data"]["inserted"][0].pop("id")),
    "an inbox message that is a string": first("agent/inbox/spliced", lambda e: e["data"]["inserted"].append("m")),
    "an inbox message id a number": first("agent/inbox/spliced", lambda e: e["data"]["inserted"][0].update(id=3)),
    "a seq that repeats": first("step/end", lambda e: e.update(seq=e["seq"] - 1)),
    "an open final turn": lambda events: events.pop(),
    # events out of a writer's order, which the crash tracker and the invariants follow from a view or whole
    "a first turn numbered 5": first("turn/start", lambda e: e["data"].update(turn=5)),
    "a turn of null": first("turn/start", lambda e: e["data"].update(turn=None)),
    "a turn start written as a step end": first("turn/start", lambda e: e.update(type="step/end")),
    "a step that skips one": first("step/start", lambda e: e["data"].update(step=3)),
    "a call written as the next step's start": first(
        "tool/call", lambda e: (e.update(type="step/start"), e["data"].update(step=2))
    ),
    "a step end written as a step start": first("step/end", lambda e: e.update(type="step/start")),
    "a turn end written as a turn start": first("turn/end", lambda e: e.update(type="turn/start")),
    "a call of another step": first("tool/call", lambda e: e["data"].update(step=2)),
    "a call of another id": first("tool/call", lambda e: e["data"].update(callId="call_x")),
    "a call of no id": first("tool/call", lambda e: e["data"].pop("callId")),
    "a reply of another turn": first("assistant/message", lambda e: e["data"].update(turn=2)),
    "a result of another step": first("tool/result", lambda e: e["data"].update(step=2)),
    "a reply that cites nothing": first("assistant/message", lambda e: e.update(sourceEventSeqs=[])),
    "a prompt that cites a later seq": first("user/message", lambda e: e.update(sourceEventSeqs=[99])),
    "a reply of no step, its call left open": open_call_of_no_step,
    "a reply, its call left open": lambda events: events.__delitem__(
        slice(last("assistant/message")(events) + 1, None)
    ),
    "a call left open": lambda events: events.__delitem__(slice(last("tool/call")(events) + 1, None)),
    "a step ended, its call unanswered": step_ended_unanswered,
    "a turn end written as the next turn's start": first(
        "turn/end", lambda e: (e.update(type="turn/start"), e["data"].update(turn=2))
    ),
    "a reply of no content": first("assistant/message", lambda e: e["data"]["message"].update(content=[])),
}


def line(event: Event) -> bytes:
    raw = event.pop("_raw", None)
    out = orjson.dumps(event)
    if raw is not None:
        out = out.replace(*raw)
    return out


def duplicated(key: bytes, value: bytes) -> Callable[[bytes], bytes]:
    """A line with `key` written again, as `value`, after the first key."""
    return lambda out: out.replace(b",", b',"' + key + b'":' + value + b",", 1)


# the same key twice in one object: JSON.parse keeps the last, and so do both reads
DUPLICATES: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "a seq written twice": ("step/start", duplicated(b"seq", b"0")),
    "a type written twice": ("step/start", duplicated(b"type", b'"step/end"')),
    "a time written twice": ("assistant/chunk", duplicated(b"time", b'"later"')),
}


def write(path: Path, events: list[Event], rewrite: tuple[str, Callable[[bytes], bytes]] | None = None) -> Path:
    lines = []
    for event in events:
        out = line(event)
        if rewrite is not None and event["type"] == rewrite[0]:
            out, rewrite = rewrite[1](out), None
        lines.append(out)
    path.write_bytes(b"".join(out + b"\n" for out in [orjson.dumps(header("views")), *lines]))
    return path


def said(log: SessionLog) -> dict[str, Any]:
    """Everything a read says of a log: its verdict, its findings, and its index."""
    return {
        "verdict": log.verdict,
        "findings": [(d.code, d.severity, d.message, d.location) for d in log.diagnostics],
        "facts": (log.turns, log.steps, log.title, log.event_count, list(log.types), list(log.surface)),
        "closers": [log.raw_event(seq) for seq in log.closers],
        "index": (
            dict(log.message_ids),
            dict(log.source_kinds),
            dict(log.result_calls),
            dict(log.surface_ops),
            set(log.empty_assistant),
            set(log.ignorable),
            log.identity,
        ),
    }


def both_reads(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    source = source_of(path)
    return said(load_session(source)), said(load_session(source, keep_bytes=1 << 40))


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_a_log_read_by_views_says_what_it_says_read_whole(tmp_path: Path, change: str) -> None:
    events = session()
    CHANGES[change](events)
    viewed, whole = both_reads(write(tmp_path / "session.jsonl", events))
    assert viewed == whole


@pytest.mark.parametrize("name", DUPLICATES, ids=list(DUPLICATES))
def test_a_key_written_twice_reads_as_it_does_whole(tmp_path: Path, name: str) -> None:
    viewed, whole = both_reads(write(tmp_path / "session.jsonl", session(), DUPLICATES[name]))
    assert viewed == whole
