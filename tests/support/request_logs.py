"""Built logs for request reconstruction and identity, and an independent §5.3 oracle.

Each builder returns a `LogBuilder` whose events dsh would accept; the tests
check that before relying on them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
from dsh_inspect.model.messages import SeededIds, create_user_message, using_id_source

from tests.support.builders import PROVIDER, LogBuilder, header

Event = dict[str, Any]
FAILURE = {"message": "the request exceeded the model context window", "code": "CONTEXT_WINDOW_EXCEEDED"}


def write_log(path: Path, events: list[Event], session_id: str = "session-test") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *events]))
    return path


def derive_messages(events: list[Event], upto: int) -> list[dict[str, Any]]:
    """docs/format.md §5.2 and §5.3, written straight from the text: the model-visible messages after `upto`."""
    nodes: list[Event] = []
    for event in events[: upto + 1]:
        op = event.get("surfaceOp")
        if op is None:
            continue
        if op == "append":
            nodes.append(event)
            continue
        seqs = [n["seq"] for n in nodes]
        i, j = seqs.index(op["start"]), seqs.index(op["end"])
        nodes[i : j + 1] = [event]
    out = []
    for event in nodes:
        message = event["data"] if event["type"] == "user/message" else event["data"]["message"]
        if event["type"] == "assistant/message" and not message["content"]:
            continue
        out.append(message)
    return out


def chunk(b: LogBuilder, turn: int, step: int, body: dict[str, Any]) -> int:
    return b.add("assistant/chunk", {"turn": turn, "step": step, "chunk": body})["seq"]


def streamed_answer(b: LogBuilder, turn: int, step: int, text: str, usage: dict[str, int]) -> Event:
    """A successful call: its chunks, then the `assistant/message` citing them."""
    seqs = [
        chunk(b, turn, step, {"type": "block-start", "index": 0, "blockType": "text"}),
        chunk(b, turn, step, {"type": "text-delta", "index": 0, "text": text}),
        chunk(b, turn, step, {"type": "block-end", "index": 0, "block": {"type": "text", "text": text}}),
        chunk(b, turn, step, {"type": "usage", "usage": usage}),
        chunk(b, turn, step, {"type": "finish", "reason": {"kind": "stop"}}),
    ]
    message = b.assistant(turn, step, [{"type": "text", "text": text}], usage=usage)
    message["sourceEventSeqs"] = seqs
    return message


def _replace(event: Event, start: int, end: int, cites: list[int]) -> Event:
    event["surfaceOp"] = {"op": "replace", "start": start, "end": end}
    event["sourceEventSeqs"] = cites
    return event


def compaction_between_calls() -> LogBuilder:
    """Turn 2 step 1: a call fails on the context window, a summarizing compaction
    replaces turn 1 (docs/format.md §5.6), and the same step calls again and succeeds."""
    b = LogBuilder()
    b.turn(1)  # surface seqs 2, 4, 6 and 9
    b.add("turn/start", {"turn": 2})
    b.add("step/start", {"turn": 2, "step": 1})
    b.user("Now summarize what you read")  # 14
    chunk(b, 2, 1, {"type": "usage", "usage": {"inputTokens": 0, "outputTokens": 0}})
    chunk(b, 2, 1, {"type": "finish", "reason": {"kind": "error", "failure": FAILURE}})
    start = b.add("compaction/start", {"compactionId": "compaction-1", "turn": 2})["seq"]
    shadowed = [2, 4, 6, 9]
    summary = b.add(
        "compaction/summary",
        {
            "compactionId": "compaction-1",
            "summary": [{"type": "text", "text": "Turn 1 read a.txt: alpha."}],
            "shadowedRange": {"start": 2, "end": 9},
            "shadowedSeqs": shadowed,
            "shadowedTokenCount": 420,
            **PROVIDER,
        },
    )["seq"]
    checkpoint = b.user(
        "Checkpoint.\n\n<compacted-summary>Turn 1 read a.txt: alpha.</compacted-summary>",
        {"kind": "plugin", "plugin": "compact", "compactionId": "compaction-1"},
    )
    _replace(checkpoint, 2, 9, [start, summary, *shadowed])
    b.add("compaction/end", {"compactionId": "compaction-1", "turn": 2})
    streamed_answer(b, 2, 1, "You read alpha.", {"inputTokens": 30, "outputTokens": 4, "cacheReadTokens": 10})
    b.add("step/end", {"turn": 2, "step": 1})
    b.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    return b


def retried_before_streaming() -> LogBuilder:
    """A call that fails before streaming anything, its retry notice, then the retried call."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Hello")
    b.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial"})
    b.add(
        "llm/retry",
        {
            "retryId": "retry-1",
            "turn": 1,
            "step": 1,
            "provider": PROVIDER["provider"],
            "mode": "normal",
            "policyKey": "normal",
            "retry": 1,
            "maxRetries": 2,
            "delayMs": 5,
            "failure": {"message": "socket hang up", "code": "TRANSPORT"},
        },
    )
    b.add("llm/retry-started", {"retryId": "retry-1", "turn": 1, "step": 1, "retry": 1})
    streamed_answer(b, 1, 1, "Hi.", {"inputTokens": 8, "outputTokens": 2})
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return b


def interrupted_then_empty() -> LogBuilder:
    """Turn 1 is cancelled mid-stream; turn 2 ends at max tokens with empty content; turn 3 asks again."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Start a long task")
    b.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial"})
    b.assistant(1, 1, [{"type": "text", "text": "partial"}], interrupted=True)  # 4
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "user"}}})
    b.add("turn/start", {"turn": 2})
    b.add("step/start", {"turn": 2, "step": 1})
    b.user("Go on")  # 9
    b.assistant(2, 1, [], usage={"inputTokens": 20, "outputTokens": 4096})  # 10: empty content
    b.add("step/end", {"turn": 2, "step": 1})
    b.add("turn/end", {"turn": 2, "reason": {"kind": "max-tokens"}})
    b.add("turn/start", {"turn": 3})
    b.add("step/start", {"turn": 3, "step": 1})
    b.user("Finish please")  # 15
    b.assistant(3, 1, [{"type": "text", "text": "Done."}])
    b.add("step/end", {"turn": 3, "step": 1})
    b.add("turn/end", {"turn": 3, "reason": {"kind": "completed"}})
    return b


def pruned_result() -> LogBuilder:
    """Turn 2 prunes turn 1's tool result (docs/format.md §5.6): same id, new content."""
    b = LogBuilder()
    b.turn(1)  # the tool result is seq 6
    b.add("turn/start", {"turn": 2})
    b.add("step/start", {"turn": 2, "step": 1})
    b.user("And now?")
    b.add("compaction/prune", {"shadowedRange": {"start": 6, "end": 6}, "shadowedSeqs": [6], "shadowedTokenCount": 57})
    pruned = copy.deepcopy(b.events[6])
    pruned["data"]["message"]["content"][0]["content"] = [{"type": "text", "text": "[tool result pruned]"}]
    b.add("tool/result", pruned["data"], surfaceOp={"op": "replace", "start": 6, "end": 6}, sourceEventSeqs=[6])
    b.assistant(2, 1, [{"type": "text", "text": "Still alpha."}], usage={"inputTokens": 40, "outputTokens": 3})
    b.add("step/end", {"turn": 2, "step": 1})
    b.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    return b


def steering() -> tuple[LogBuilder, str, str]:
    """A steering message queued on the `next-step` inbox and claimed; another queued and cancelled."""
    b = LogBuilder()
    with using_id_source(SeededIds("steering")):
        steer = create_user_message(
            content=[{"type": "text", "text": "Use the shell instead"}], source={"kind": "user"}
        )
        dropped = create_user_message(content=[{"type": "text", "text": "Never mind"}], source={"kind": "user"})
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Read a.txt")
    b.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial"})
    b.assistant(1, 1, [{"type": "tool-call", "id": "call_1", "name": "read", "arguments": "{}"}])
    b.tool_round(1, 1, "call_1", "alpha")
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [steer.to_json()]})  # 7
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "removedCount": 1, "inserted": []})  # 9
    b.add("step/start", {"turn": 1, "step": 2})
    b.add("user/message", steer.to_json(), surfaceOp="append")  # 11
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [dropped.to_json()]})  # 12
    b.add(
        "agent/inbox/spliced",
        {"target": "next-step", "start": 0, "removedCount": 1, "inserted": [], "outcome": "canceled"},
    )  # 13
    b.assistant(1, 2, [{"type": "text", "text": "Using the shell."}])
    b.add("step/end", {"turn": 1, "step": 2})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return b, steer.id, dropped.id


def header_and_state() -> LogBuilder:
    """Settings and a changed request header between two turns."""
    b = LogBuilder()
    b.add("sandbox/mode", {"mode": "read-only"})
    b.add("approval/policy", {"policy": "ask"})
    b.turn(1)  # logs the initial header at seq 5
    b.add("plan/mode", {"active": True})
    b.add(
        "goal/change",
        {
            "kind": "goal/change",
            "version": 1,
            "operation": "create",
            "goal": {"id": "goal-1", "revision": 1, "objective": "Ship it", "phase": "active", "maxGoalRounds": 3},
            "roundsStarted": 0,
            "createdAt": 1,
            "updatedAt": 1,
        },
    )
    b.add("turn/start", {"turn": 2})
    b.add(
        "todo/write",
        {"todos": [{"content": "read a.txt", "status": "completed"}, {"content": "answer", "status": "in_progress"}]},
    )
    b.add("step/start", {"turn": 2, "step": 1})
    b.user("Again, with the bigger model")
    tool = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}
    b.add(
        "request/header",
        {
            "header": {
                "config": {**PROVIDER, "model": "deepseek-v4-pro", "reasoningEffort": "high"},
                "system": "You are careful.",
                "tools": [tool],
            },
            "reason": "change",
        },
    )
    b.add("request/context", {"provider": PROVIDER["provider"], "model": "deepseek-v4-pro", "contextWindow": 128000})
    b.assistant(2, 1, [{"type": "text", "text": "Done again."}])
    b.add("step/end", {"turn": 2, "step": 1})
    b.add("step/start", {"turn": 2, "step": 2})
    b.add(
        "request/header",
        {
            "header": {
                "config": {**PROVIDER, "model": "deepseek-v4-pro", "reasoningEffort": "high"},
                "system": "You are careful.",
                "tools": [tool],
            },
            "reason": "change",
        },
    )
    b.assistant(2, 2, [{"type": "text", "text": "And once more."}])
    b.add("step/end", {"turn": 2, "step": 2})
    b.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    return b
