"""Logs for what daily readers expect on each row (issue 14, deliverable 5): a session whose events carry
times, a stream, failing and single-file tools and subagent calls; one without a stream; one retried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from dsh_inspect.model.messages import create_tool_result_message, using_id_source

from tests.support.builders import T0, LogBuilder, header

PARENT, CHILD, GONE = "parent-0001", "child-0001", "child-never-loaded"
COMMAND = "ls -la /nope && echo '<done>'"
# name, arguments, result text, failed
CALLS = {
    "call_sh": ("bash", {"command": COMMAND}, "ls: /nope: No such file", True),
    "call_rd": ("read", {"file_path": "/work/project/notes.txt"}, "the notes", False),
    "call_sa": (
        "subagent",
        {"description": "d", "prompt": "p", "run_in_background": True},
        f"started subagent {CHILD}",
        False,
    ),
    "call_sm": ("send_message", {"subagent_id": GONE, "message": "hi"}, "queued", False),
}


def tool(b: LogBuilder, call_id: str) -> None:
    name, args, out, failed = CALLS[call_id]
    call = b.add(
        "tool/call", {"turn": 1, "step": 2, "callId": call_id, "name": name, "arguments": orjson.dumps(args).decode()}
    )
    with using_id_source(b._ids):
        message = create_tool_result_message(call_id=call_id, content=[{"type": "text", "text": out}], is_error=failed)
    b.add(
        "tool/result",
        {"turn": 1, "step": 2, "message": message.to_json()},
        surfaceOp="append",
        sourceEventSeqs=[call["seq"]],
    )


def delta(b: LogBuilder, text: str) -> int:
    chunk = {"type": "text-delta", "index": 0, "text": text}
    return int(b.add("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk})["seq"])


def timed_log() -> LogBuilder:
    """Turn 1's first step streams its answer: its first token 1.2 s after the step starts, 40 tokens in
    2 s. Its second step runs a failing shell command, a single-file read, a subagent started in the
    background and a message to another; then a /permission command and a bookkeeping event.
    Events are a second apart, but for the stream."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Say hello & <wave>")
    chunks = [delta(b, "Hello, "), delta(b, "**reader**")]
    answer = b.assistant(
        1, 1, [{"type": "text", "text": "Hello, **reader**"}], usage={"inputTokens": 9, "outputTokens": 40}
    )
    answer["sourceEventSeqs"] = chunks
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("step/start", {"turn": 1, "step": 2})
    tools = [
        {"type": "tool-call", "id": c, "name": n, "arguments": orjson.dumps(a).decode()}
        for c, (n, a, _, _) in CALLS.items()
    ]
    b.assistant(1, 2, tools)
    for call_id in CALLS:
        tool(b, call_id)
    b.add("step/end", {"turn": 1, "step": 2})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    b.add("command/run", {"commandId": "cmd-1", "name": "permission", "args": " read-only", "source": {"kind": "user"}})
    b.add("command/done", {"commandId": "cmd-1", "kind": "success", "text": "permission preset read-only"})
    b.add("permission/preset", {"preset": "read-only"})
    for e in b.events:
        e["time"] = T0 + e["seq"] * 1000
    step_start = b.events[1]["time"]
    b.events[chunks[0]]["time"] = step_start + 1200
    b.events[chunks[1]]["time"] = step_start + 2000
    answer["time"] = step_start + 3200
    return b


def untimed_log() -> LogBuilder:
    """Two turns with no stream: their steps carry no time to first token nor speed."""
    b = LogBuilder()
    b.turn(1)
    return b


def retried_log() -> LogBuilder:
    """A step whose first request failed and was retried 5 s later; the retry's first token came 300 ms after it."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("again")
    failure = {"message": "overloaded", "code": "OVERLOADED"}
    retry = {"retryId": "r1", "turn": 1, "step": 1, "provider": "p", "mode": "normal", "policyKey": "k"}
    b.add("llm/retry", {**retry, "retry": 1, "maxRetries": 3, "delayMs": 5000, "failure": failure})
    started = b.add("llm/retry-started", {"retryId": "r1", "turn": 1, "step": 1, "retry": 1})
    first = delta(b, "Done.")
    answer = b.assistant(1, 1, [{"type": "text", "text": "Done."}], usage={"inputTokens": 3, "outputTokens": 2})
    answer["sourceEventSeqs"] = [first]
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    for e in b.events:
        e["time"] = T0 + e["seq"] * 1000
    started["time"] = T0 + 10_000
    b.events[first]["time"] = started["time"] + 300
    answer["time"] = b.events[first]["time"]  # the whole answer in its first chunk: no speed to tell
    for e in b.events[first + 2 :]:
        e["time"] += 10_000
    return b


def write(root: Path, session_id: str, b: LogBuilder, **extra: Any) -> None:
    path = root / session_id / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id, **extra), *b.events]))
