"""Writing dsh sessions event by event, in the order dsh's agent loop writes
them (docs/format.md §5.10), with every message made by the `create_*` helpers
and every id drawn from a seeded id source, so the output is reproducible."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..model.messages import (
    SeededIds,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
    using_id_source,
)

Event = dict[str, Any]
PROVIDER = {"provider": "deepseek-official", "model": "deepseek-v4-flash"}
CONTEXT_WINDOW = 1_000_000


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call a model step makes, and what came back."""

    name: str
    arguments: dict[str, Any]
    output: str
    error: tuple[str, str] | None = None  # (name, code) of a failed call
    meta: dict[str, Any] | None = None
    before: Sequence[tuple[str, dict[str, Any]]] = ()  # hook or approval events between call and result


@dataclass
class SessionBuilder:
    session_id: str
    seed: int
    cwd: str
    created_at: int
    header_extra: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    surface: list[int] = field(default_factory=list)
    turn: int = 0
    step: int = 0
    step_open: bool = False
    calls: int = 0

    def __post_init__(self) -> None:
        self._ids = SeededIds(self.seed)

    # -- envelope ------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        return {
            "type": "session",
            "version": 0,
            "id": self.session_id,
            "createdAt": self.created_at,
            "cwd": self.cwd,
            "delegationDepth": 0,
            **self.header_extra,
        }

    def add(self, type_: str, data: Any, **envelope: Any) -> Event:
        seq = len(self.events)
        event = {"type": type_, "seq": seq, "time": self.created_at + 500 + 37 * seq, "data": data, **envelope}
        self.events.append(event)
        if envelope.get("surfaceOp") == "append":
            self.surface.append(seq)
        return event

    def lines(self) -> bytes:
        return b"".join(orjson.dumps(x) + b"\n" for x in [self.header(), *self.events])

    # -- messages ------------------------------------------------------------
    def user_message(self, text: str | Sequence[str], source: dict[str, Any]) -> dict[str, Any]:
        texts = [text] if isinstance(text, str) else list(text)
        with using_id_source(self._ids):
            message = create_user_message(content=[{"type": "text", "text": t} for t in texts], source=source)
        return message.to_json()

    def context(self, text: str | Sequence[str], source: dict[str, Any]) -> Event:
        """Injected context: a non-user `user/message` (docs/product.md "Producer-declared context forms")."""
        return self.add("user/message", self.user_message(text, source), surfaceOp="append")

    def mint(self) -> str:
        return self._ids()

    # -- turns and steps -----------------------------------------------------
    def begin_turn(
        self,
        prompt: str,
        *,
        contexts: Sequence[tuple[str | Sequence[str], dict[str, Any]]] = (),
        title: str | None = None,
    ) -> None:
        """The prompt queued in the inbox, the turn, its first step, the prompt and its contexts."""
        message = self.user_message(prompt, {"kind": "user"})
        self.add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [message]})
        self.turn += 1
        self.step = 0
        self.add("turn/start", {"turn": self.turn})
        self.add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []})
        self._open_step()
        prompt_event = self.add("user/message", message, surfaceOp="append")
        for text, source in contexts:
            self.context(text, source)
        if title is not None:
            self.add(
                "session/title", {"title": title, "messageSeqs": [prompt_event["seq"]], "source": {"kind": "fallback"}}
            )
        if self.turn == 1:
            self.add(
                "request/header",
                {"header": {"config": dict(PROVIDER), "system": "You are a coding agent."}, "reason": "initial"},
            )
            self.add("request/context", {**PROVIDER, "contextWindow": CONTEXT_WINDOW})

    def _open_step(self) -> None:
        self.step += 1
        self.step_open = True
        self.add("step/start", {"turn": self.turn, "step": self.step})

    def model_step(self, *, text: str | None = None, reasoning: str | None = None, calls: Sequence[Call] = ()) -> None:
        """One model call: its stream, its message, then each tool call and result."""
        if not self.step_open:
            self._open_step()
        blocks: list[dict[str, Any]] = []
        if reasoning:
            blocks.append({"type": "reasoning", "text": reasoning})
        if text:
            blocks.append({"type": "text", "text": text})
        call_ids = []
        for call in calls:
            self.calls += 1
            call_ids.append(f"call_{self.calls:02d}")
            blocks.append(
                {
                    "type": "tool-call",
                    "id": call_ids[-1],
                    "name": call.name,
                    "arguments": orjson.dumps(call.arguments).decode(),
                }
            )
        chunk_seqs = self._stream(blocks, "tool-calls" if calls else "stop")
        with using_id_source(self._ids):
            message = create_assistant_message(content=blocks, provider=PROVIDER["provider"], model=PROVIDER["model"])
        usage = {"inputTokens": 120 + 40 * len(self.surface), "outputTokens": 24 + 4 * len(blocks)}
        self.add(
            "assistant/message",
            {"turn": self.turn, "step": self.step, "message": message.to_json(), "usage": usage},
            surfaceOp="append",
            sourceEventSeqs=chunk_seqs,
        )
        for call, call_id, block in zip(calls, call_ids, blocks[len(blocks) - len(calls) :], strict=True):
            logged = self.add(
                "tool/call",
                {
                    "turn": self.turn,
                    "step": self.step,
                    "callId": call_id,
                    "name": call.name,
                    "arguments": block["arguments"],
                },
            )
            for type_, before in call.before:
                self.add(type_, {**before, "callId": call_id} if type_ == "approval/asked" else before)
            with using_id_source(self._ids):
                result = create_tool_result_message(
                    call_id=call_id, content=[{"type": "text", "text": call.output}], is_error=call.error is not None
                )
            data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": result.to_json()}
            if call.error is not None:
                data["error"] = {"name": call.error[0], "code": call.error[1]}
            if call.meta is not None:
                data["meta"] = call.meta
            self.add("tool/result", data, surfaceOp="append", sourceEventSeqs=[logged["seq"]])
        self.add("step/end", {"turn": self.turn, "step": self.step})
        self.step_open = False

    def _stream(self, blocks: list[dict[str, Any]], finish: str) -> list[int]:
        seqs = []

        def chunk(value: dict[str, Any]) -> None:
            seqs.append(self.add("assistant/chunk", {"turn": self.turn, "step": self.step, "chunk": value})["seq"])

        for index, block in enumerate(blocks):
            kind = block["type"]
            chunk({"type": "block-start", "index": index, "blockType": kind})
            if kind in ("text", "reasoning"):
                words = block["text"].split(" ")
                half = max(1, len(words) // 2)
                for piece in (" ".join(words[:half]), " " + " ".join(words[half:]) if words[half:] else ""):
                    if piece:
                        chunk({"type": f"{kind}-delta", "index": index, "text": piece})
            else:
                chunk(
                    {
                        "type": "tool-call-delta",
                        "index": index,
                        "id": block["id"],
                        "name": block["name"],
                        "argumentsDelta": block["arguments"],
                    }
                )
            chunk({"type": "block-end", "index": index, "block": block})
        chunk({"type": "usage", "usage": {"inputTokens": 120, "outputTokens": 24}})
        chunk({"type": "finish", "reason": {"kind": finish}})
        return seqs

    def end_turn(self, reason: dict[str, Any] | None = None) -> None:
        self.add("turn/end", {"turn": self.turn, "reason": reason or {"kind": "completed"}})

    # -- compaction ----------------------------------------------------------
    def compact(self, summary: str, *, tokens: int) -> None:
        """A manual `/compact` between turns (docs/format.md §5.6): the whole history
        is replaced by one checkpoint message with a new id."""
        command_id = f"cmd-{self.mint()[:8]}-1"
        compaction_id = self.mint()
        shadowed = list(self.surface)
        self.add("command/run", {"commandId": command_id, "name": "compact", "args": "", "source": {"kind": "user"}})
        start = self.add(
            "compaction/start", {"compactionId": compaction_id, "sourceCommandId": command_id, "turn": None}
        )
        span = {"start": shadowed[0], "end": shadowed[-1]}
        done = self.add(
            "compaction/summary",
            {
                "compactionId": compaction_id,
                "sourceCommandId": command_id,
                "summary": [{"type": "text", "text": summary}],
                "shadowedRange": span,
                "shadowedSeqs": shadowed,
                "shadowedTokenCount": tokens,
                **PROVIDER,
            },
        )
        checkpoint = self.user_message(
            [
                "This is an automatically generated checkpoint condensing an earlier span of the conversation to "
                "free up context. Continue the task directly from the messages that follow.\n\n<compacted-summary>",
                summary,
                "</compacted-summary>",
            ],
            {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id, "sourceCommandId": command_id},
        )
        replace = self.add(
            "user/message",
            checkpoint,
            surfaceOp={"op": "replace", **span},
            sourceEventSeqs=[start["seq"], done["seq"], *shadowed],
        )
        self.surface = [replace["seq"]]
        self.add("compaction/end", {"compactionId": compaction_id, "sourceCommandId": command_id, "turn": None})
        self.add(
            "command/done",
            {
                "commandId": command_id,
                "kind": "success",
                "text": f"Compacted {len(shadowed)} history items (~{tokens} tokens).",
                "sourceEventSeq": done["seq"],
            },
        )
