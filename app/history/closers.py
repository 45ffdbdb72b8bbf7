"""In-memory crash closers for an open final turn (docs/format.md §5.8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# dsh's own words (repair.ts): the model reads them, so they are data, not ours to phrase.
OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external state "
    "or ask the user. Do not retry blindly."
)
NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)


# the only types `CrashTracker.feed` follows: a reader may skip the call for any other
TRACKED_TYPES = frozenset(
    {"turn/start", "turn/end", "step/start", "step/end", "assistant/message", "tool/call", "tool/result"}
)


class _Absent:
    """JavaScript's `undefined`: what dsh's pass reads from a field the data lacks (None is JSON null)."""

    def __repr__(self) -> str:
        return "undefined"


ABSENT: Any = _Absent()
# the field dsh's pass reads from each tracked type's data without a guard: absent data makes it throw
_READS = {"turn/start": "turn", "step/start": "step", "tool/call": "callId"}


def _field(data: Any, key: str) -> Any:
    """`data[key]` as JavaScript reads it from any non-null value: absent unless `data` is an object holding it."""
    return data.get(key, ABSENT) if isinstance(data, dict) else ABSENT


@dataclass(slots=True)
class _Pending:
    step: Any
    call_seq: int | None = None


class CrashTracker:
    """Follows turns, steps and tool calls so an open final turn can be closed, as dsh's repair pass
    (`interruptedTurnClosers`) does: it reads every tracked event, in closed turns too.

    `history.reading.Reader._take_views` moves it on itself for the events a writer writes in order (decision
    0041): what `follow` does with one of those must be done there too."""

    def __init__(self) -> None:
        self.turn: Any = None  # the open turn's `data.turn`; None (JSON null) when no turn is open
        self.step: Any = None  # the open step's `data.step`; None when none is open
        self.pending: dict[str, _Pending] = {}

    def follow(self, kind: str, data: Any, seq: Any) -> str | None:
        """Move on by one event of a TRACKED_TYPES type with this data (ABSENT for none) and `seq` (as stored,
        None for none). Returns the TypeError dsh's pass throws on it, where it reads a field of null or absent
        data."""
        field = _READS.get(kind)
        if field is not None and (data is None or data is ABSENT):
            return f"Cannot read properties of {'null' if data is None else 'undefined'} (reading '{field}')"
        if kind == "turn/start":
            self.turn, self.step = _field(data, "turn"), None
            self.pending.clear()
        elif kind == "turn/end":
            self.turn, self.step = None, None
            self.pending.clear()
        elif kind == "step/start":
            self.step = _field(data, "step")
        elif kind == "step/end":
            self.step = None
            self.pending.clear()
        elif kind == "assistant/message":
            message = data.get("message") if isinstance(data, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else ():
                if block is None:
                    return "Cannot read properties of null (reading 'type')"
                if isinstance(block, dict) and block.get("type") == "tool-call" and isinstance(block.get("id"), str):
                    self.call(block["id"], _field(data, "step"))
        elif kind == "tool/call":
            # only a string can name a pending call (the ids come from tool-call blocks); a list or an
            # object here is a broken log, for the rules to judge, and must not reach a dict lookup
            call_id = _field(data, "callId")
            pending = self.pending.get(call_id) if isinstance(call_id, str) else None
            if pending is not None:
                pending.call_seq = seq
        elif kind == "tool/result":
            message = data.get("message") if isinstance(data, dict) else None
            source = message.get("source") if isinstance(message, dict) else None
            call_id = source.get("callId") if isinstance(source, dict) else None
            if isinstance(call_id, str):
                self.pending.pop(call_id, None)
        return None

    def call(self, call_id: str, step: Any) -> None:
        """A tool call of a reply in step `step` (as stored) pending, as `follow` of the reply adds it."""
        self.pending[call_id] = _Pending(step)

    @property
    def open(self) -> bool:
        return self.turn is not None

    def closers(self, next_seq: int, time: int) -> list[dict[str, Any]]:
        if not self.open:
            return []
        out: list[dict[str, Any]] = []
        seq = next_seq
        for call_id, pending in self.pending.items():
            logged = pending.call_seq is not None
            error = (
                {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
                if logged
                else {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
            )
            event: dict[str, Any] = {
                "type": "tool/result",
                "seq": seq,
                "time": time,
                "data": {
                    **_defined(turn=self.turn, step=pending.step),
                    "message": {
                        "id": f"interrupted-tool-result-{call_id}-{seq}",
                        "role": "user",
                        "content": [
                            {
                                "type": "tool-result",
                                "toolCallId": call_id,
                                "isError": True,
                                "content": [
                                    {"type": "text", "text": OUTCOME_UNKNOWN_TEXT if logged else NOT_STARTED_TEXT}
                                ],
                            }
                        ],
                        "source": {"kind": "tool", "callId": call_id},
                    },
                    "error": error,
                },
            }
            if logged:
                event["sourceEventSeqs"] = [pending.call_seq]
            event["surfaceOp"] = "append"
            out.append(event)
            seq += 1
        if self.step is not None:
            out.append({"type": "step/end", "seq": seq, "time": time, "data": _defined(turn=self.turn, step=self.step)})
            seq += 1
        out.append(
            {
                "type": "turn/end",
                "seq": seq,
                "time": time,
                "data": _defined(turn=self.turn, reason={"kind": "interrupted"}),
            }
        )
        return out


def _defined(**fields: Any) -> dict[str, Any]:
    """An object as JSON.stringify writes it: a field whose value is undefined is left out."""
    return {key: value for key, value in fields.items() if value is not ABSENT}
