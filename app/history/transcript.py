"""The human transcript (FORMAT.md §5.5, UI.md §0): rows in log order.

Rows are light: a kind, the seq they anchor at and the seqs of the events
they draw on, so a window of rows can be rendered by decoding only its own
events. Replacement copies stay model-only, except the compaction checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from app.history.session import SessionLog, TailRecord
from app.model.rules import KNOWN_EVENT_TYPES
from app.model.values import Event

RowKind = Literal[
    "user", "steering", "context", "assistant-step", "tool-call", "compaction", "event", "unknown", "diagnostic",
]


@dataclass(frozen=True, slots=True)
class Row:
    kind: RowKind
    seq: int  # the anchor: rows sort by it
    key: str
    related: tuple[int, ...] = ()  # other events the row shows (a tool call's result, ...)
    tail: TailRecord | None = None  # for a diagnostic row: the record outside dsh's view


@dataclass(slots=True)
class _Inbox:
    """Pending-input lists per target; ids taken off `next-step` unclaimed-cancelled are steering."""

    lists: dict[str, list[str]] = field(default_factory=dict)
    claimed: set[str] = field(default_factory=set)

    def splice(self, data: Any) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("target"), str):
            return
        items = self.lists.setdefault(data["target"], [])
        start = data.get("start") if isinstance(data.get("start"), int) else 0
        removed = data.get("removedCount") if isinstance(data.get("removedCount"), int) else 0
        inserted = [m.get("id") for m in data.get("inserted", ()) if isinstance(m, dict)]
        gone = items[start : start + removed]
        items[start : start + removed] = [i for i in inserted if isinstance(i, str)]
        if data["target"] == "next-step" and data.get("outcome") != "canceled":
            self.claimed.update(i for i in gone if isinstance(i, str))


def is_checkpoint(event: Event) -> bool:
    message = event.message
    return (
        event.type == "user/message"
        and isinstance(event.surface_op, dict)
        and message is not None
        and message.source.kind == "plugin"
        and message.source.get("plugin") == "compact"
    )


def user_message_kind(event: Event, claimed: set[str]) -> RowKind | None:
    """The row a `user/message` becomes, or None for a model-only copy."""
    message = event.message
    if message is None:
        return None
    if event.surface_op == "append":
        if message.source.kind == "user":
            return "steering" if message.id in claimed else "user"
        return "context"
    return "compaction" if is_checkpoint(event) else None


def context_row_at(log: SessionLog, seq: int) -> Row | None:
    """The context row anchored at `seq`, if the event there is one."""
    if not 0 <= seq < log.event_count or log.types[seq] != "user/message":
        return None
    return Row("context", seq, f"seq-{seq}") if user_message_kind(log.event(seq), set()) == "context" else None


def build_rows(log: SessionLog) -> list[Row]:
    """Every row of a session, in anchor order, then rows for records outside dsh's view."""
    recalls: set[int] = set()
    rows = list(_event_rows(log, recalls))
    rows.sort(key=lambda r: (r.seq, r.key))
    # A prompt borrows the labels of a session reference right after it (UI.md §0).
    rows = [replace(r, related=(r.seq + 1,)) if r.kind in ("user", "steering") and r.seq + 1 in recalls else r
            for r in rows]
    for i, tail in enumerate(log.tail):
        rows.append(Row("diagnostic", log.event_count + i, f"tail-{i}", tail=tail))
    return rows


def _event_rows(log: SessionLog, recalls: set[int]) -> Iterator[Row]:
    inbox = _Inbox()
    calls: dict[str, int] = {}  # callId → tool/call seq
    results: dict[int, int] = {}  # tool/call seq → tool/result seq
    tool_rows: list[int] = []
    for event in log.events():
        seq, kind = event.seq, event.type
        if kind == "agent/inbox/spliced":
            inbox.splice(event.data)
            yield Row("event", seq, f"seq-{seq}")
        elif kind == "user/message":
            row_kind = user_message_kind(event, inbox.claimed)
            if row_kind == "context" and event.message and event.message.source.kind == "session-reference":
                recalls.add(seq)
            if row_kind is not None:
                yield Row(row_kind, seq, f"seq-{seq}")
        elif kind == "assistant/message" and event.message is not None:
            if event.surface_op == "append" and event.message.content:
                yield Row("assistant-step", seq, f"seq-{seq}")
        elif kind == "tool/call":
            call_id = event.data.get("callId") if isinstance(event.data, dict) else None
            if isinstance(call_id, str):
                calls[call_id] = seq
            tool_rows.append(seq)
        elif kind == "tool/result" and event.message is not None:
            if event.surface_op == "append":
                call_seq = calls.get(event.message.source.get("callId"))
                if call_seq is not None and call_seq not in results:
                    results[call_seq] = seq
                else:
                    yield Row("tool-call", seq, f"seq-{seq}", related=(seq,))  # a result with no logged call
        elif kind == "assistant/chunk":
            continue  # merged into its assistant step
        elif event.ignorable or kind not in KNOWN_EVENT_TYPES:
            yield Row("unknown", seq, f"seq-{seq}")
        else:
            yield Row("event", seq, f"seq-{seq}")
    for call_seq in tool_rows:
        result = results.get(call_seq)
        yield Row("tool-call", call_seq, f"seq-{call_seq}", related=(result,) if result is not None else ())
