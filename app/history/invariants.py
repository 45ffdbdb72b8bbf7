"""dsh's optional relational invariants (docs/format.md §5.10): warnings, never refusals."""

from __future__ import annotations

from typing import Any

# the only types `InvariantChecker.feed` checks: a reader may skip the call for any other
WATCHED_TYPES = frozenset(
    {
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "assistant/chunk",
        "assistant/message",
        "tool/call",
        "tool/result",
        "todo/write",
        "request/header",
        "request/context",
    }
)
NONE: list[str] = []  # no warnings (shared: callers only read it)


class InvariantChecker:
    """Streams events and names each break of a writer invariant.

    `history.reading.Reader._take_views` moves it on itself for the events that break none (decision 0041):
    what `check` does with one of those must be done there too."""

    def __init__(self) -> None:
        self.turn: Any = None
        self.last_turn = 0
        self.step: Any = None
        self.last_step = 0
        self.calls: set[tuple[object, ...]] = set()

    def feed(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        if not isinstance(kind, str) or kind not in WATCHED_TYPES:
            return NONE
        data = event.get("data")
        return self.check(kind, data if isinstance(data, dict) else {}, event.get("surfaceOp"))

    def check(self, kind: str, data: dict[str, Any], surface_op: Any) -> list[str]:
        """`feed`, for a reader that has read the event's type (one of WATCHED_TYPES), its data (`{}` if it
        is no object) and its `surfaceOp` (None for none). It judges the data as stored, whatever its types: a
        warning names what the log wrote."""
        turn, step = data.get("turn"), data.get("step")
        if kind == "assistant/chunk" and turn == self.turn and step == self.step:
            return NONE  # the common case, kept short
        out: list[str] = []
        if kind == "turn/start":
            if self.turn is not None:
                out.append(f"turn {turn} starts inside open turn {self.turn}")
            if turn != self.last_turn + 1 and self.last_turn:
                out.append(f"turn {turn} does not follow turn {self.last_turn}")
            self.turn, self.step, self.last_step = turn, None, 0
            if isinstance(self.turn, int):
                self.last_turn = self.turn
        elif kind == "turn/end":
            if self.turn is None:
                out.append("turn/end with no open turn")
            self.turn = self.step = None
        elif kind == "step/start":
            if self.turn is None:
                out.append("step/start outside a turn")
            if self.step is not None:
                out.append(f"step {step} starts inside open step {self.step}")
            if step != self.last_step + 1:
                out.append(f"step {step} does not follow step {self.last_step}")
            self.step = step
            if isinstance(self.step, int):
                self.last_step = self.step
        elif kind == "step/end":
            self.step = None
        elif kind in ("assistant/chunk", "assistant/message", "tool/call") or (
            kind == "tool/result" and surface_op == "append"
        ):
            if (turn, step) != (self.turn, self.step):
                out.append(
                    f"{kind} names turn {turn} step {step}, but the open step is turn {self.turn} step {self.step}"
                )
            if kind == "tool/call":
                self.calls.add(_call_key(turn, step, data.get("callId")))
            elif kind == "tool/result":
                message, error = data.get("message"), data.get("error")
                message = message if isinstance(message, dict) else {}
                source = message.get("source")
                source = source if isinstance(source, dict) else {}
                error = error if isinstance(error, dict) else {}
                key = _call_key(turn, step, source.get("callId"))
                if key not in self.calls and error.get("code") != "TOOL_NOT_STARTED":
                    out.append(f"tool result for call {source.get('callId')!r} has no tool/call in its step")
        elif kind in ("todo/write", "request/header", "request/context") and self.turn is None:
            out.append(f"{kind} outside a turn")
        return out


def _call_key(turn: Any, step: Any, call_id: Any) -> tuple[object, ...]:
    """A call's place as a set can hold it: a log may write a list or an object where an id belongs."""
    return tuple(v if v is None or isinstance(v, str | int | float) else repr(v) for v in (turn, step, call_id))
