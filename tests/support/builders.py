"""Small, valid dsh logs built with the project's own message helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from dsh_inspect.model.messages import (
    SeededIds,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
    using_id_source,
)

Event = dict[str, Any]
T0 = 1_790_000_000_000
PROVIDER = {"provider": "deepseek-official", "model": "deepseek-v4-flash"}


def header(session_id: str = "session-test", **extra: Any) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 0,
        "id": session_id,
        "createdAt": T0,
        "cwd": "/work/project",
        "delegationDepth": 0,
        **extra,
    }


class LogBuilder:
    """Appends events the way dsh's agent loop orders them, numbering seq and time."""

    def __init__(self, seed: int = 7) -> None:
        self.events: list[Event] = []
        self._ids = SeededIds(seed)

    def add(self, type_: str, data: Any, **envelope: Any) -> Event:
        event = {"type": type_, "seq": len(self.events), "time": T0 + len(self.events), "data": data, **envelope}
        self.events.append(event)
        return event

    def user(self, text: str, source: dict[str, Any] | None = None) -> Event:
        with using_id_source(self._ids):
            message = create_user_message(content=[{"type": "text", "text": text}], source=source or {"kind": "user"})
        return self.add("user/message", message.to_json(), surfaceOp="append")

    def assistant(self, turn: int, step: int, blocks: list[dict[str, Any]], **extra: Any) -> Event:
        with using_id_source(self._ids):
            message = create_assistant_message(content=blocks, **PROVIDER)
        return self.add(
            "assistant/message",
            {"turn": turn, "step": step, "message": message.to_json(), **extra},
            surfaceOp="append",
            sourceEventSeqs=[],
        )

    def tool_round(self, turn: int, step: int, call_id: str, text: str, *, is_error: bool = False) -> Event:
        call = self.tool_call(turn, step, call_id)
        return self.tool_result(turn, step, call, text, is_error=is_error)

    def tool_call(self, turn: int, step: int, call_id: str) -> Event:
        return self.add(
            "tool/call",
            {"turn": turn, "step": step, "callId": call_id, "name": "read", "arguments": '{"file_path": "a.txt"}'},
        )

    def tool_result(self, turn: int, step: int, call: Event, text: str, *, is_error: bool = False) -> Event:
        with using_id_source(self._ids):
            message = create_tool_result_message(
                call_id=call["data"]["callId"], content=[{"type": "text", "text": text}], is_error=is_error
            )
        return self.add(
            "tool/result",
            {"turn": turn, "step": step, "message": message.to_json()},
            surfaceOp="append",
            sourceEventSeqs=[call["seq"]],
        )

    def turn(self, turn: int, prompt: str = "Read a.txt please", *, close: bool = True, failed: bool = False) -> None:
        """A turn of two steps: the model reads a.txt (its result an error when `failed`), then answers."""
        self.add("turn/start", {"turn": turn})
        self.add("step/start", {"turn": turn, "step": 1})
        self.user(prompt)
        self.add(
            "request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial" if turn == 1 else "change"}
        )
        call_id = f"call_{turn}"
        self.assistant(
            turn, 1, [{"type": "tool-call", "id": call_id, "name": "read", "arguments": '{"file_path": "a.txt"}'}]
        )
        self.tool_round(turn, 1, call_id, "Error: a.txt is gone" if failed else "alpha", is_error=failed)
        self.add("step/end", {"turn": turn, "step": 1})
        self.add("step/start", {"turn": turn, "step": 2})
        self.assistant(turn, 2, [{"type": "text", "text": "The file says alpha."}])
        self.add("step/end", {"turn": turn, "step": 2})
        if close:
            self.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def two_turns() -> LogBuilder:
    log = LogBuilder()
    log.turn(1)
    log.turn(2, "And again")
    return log


def numbered_turns(path: Path, turns: int, session_id: str = "long") -> Path:
    """A session of `turns` turns written to `path` (its folders made), turn N's prompt `prompt number N`."""
    log = LogBuilder()
    for turn in range(1, turns + 1):
        log.turn(turn, f"prompt number {turn}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *log.events]))
    return path


def large_session(folder: Path, key: str, size: int = 5 << 20) -> Path:
    """A session log of `size` bytes or more (by default more than a server reads in its own process): tool
    results of 16 KiB each, words to find in every one."""
    log, lines = LogBuilder(), [orjson.dumps(header(key))]
    turn = 0
    while sum(map(len, lines)) < size:
        turn += 1
        done = len(log.events)
        log.turn(turn, f"prompt {turn}", close=False)
        log.tool_round(turn, 1, f"call-{turn}", f"large result {turn} " + "word " * 3_300)
        log.add("turn/end", {"turn": turn})
        lines += [orjson.dumps(e) for e in log.events[done:]]
    path = folder / f"{key}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path
