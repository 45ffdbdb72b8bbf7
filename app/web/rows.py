"""Turning transcript rows into what templates and the JSON twin show.

The web layer's only job here is to load each row's events and hand the
forms layer's projections to the templates; no decision about a log's
meaning is made here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from app.forms import ContextView, project_context
from app.history.session import SessionLog
from app.history.transcript import Row
from app.model.values import Event, ReasoningBlock, TextBlock


@dataclass(frozen=True, slots=True)
class RowView:
    row: Row
    event: Event | None
    related: tuple[Event, ...]
    context: ContextView | None
    label: str
    summary: str

    @property
    def anchor(self) -> str:
        """`msg-{id}` for a message row, else `seq-{n}` (PRODUCT.md Interfaces)."""
        message = self.event.message if self.event else None
        return f"msg-{message.id}" if message is not None else f"seq-{self.row.seq}"


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def row_view(log: SessionLog, row: Row) -> RowView:
    if row.kind == "diagnostic":
        tail = row.tail
        assert tail is not None
        return RowView(row, None, (), None, tail.kind, f"{tail.location.describe()}: {tail.reason or ''}")
    event = log.event(row.seq)
    related = tuple(log.event(s) for s in row.related if s != row.seq)
    context = project_context(event.message) if row.kind == "context" and event.message else None
    label, summary = event.type, ""
    message = event.message
    if row.kind in ("user", "steering") and message:
        summary = message.text()
    elif row.kind == "assistant-step" and message:
        summary = "".join(b.text for b in message.content if isinstance(b, TextBlock)) or "".join(
            b.text for b in message.content if isinstance(b, ReasoningBlock))
    elif row.kind == "tool-call" and isinstance(event.data, dict):
        label = str(event.data.get("name") or event.type)
        summary = str(event.data.get("arguments", ""))
    elif isinstance(event.data, dict):
        summary = ", ".join(f"{k}: {v}" for k, v in event.data.items() if isinstance(v, (str, int, float)))
    return RowView(row, event, related, context, label, _first_line(summary))


def row_json(view: RowView) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": view.row.kind, "seq": view.row.seq, "key": view.row.key, "anchor": view.anchor,
                           "label": view.label, "summary": view.summary}
    if view.event is not None:
        out["type"] = view.event.type
        if view.event.message is not None:
            out["messageId"] = view.event.message.id
    if view.related:
        out["related"] = [e.seq for e in view.related]
    if view.context is not None:
        c = view.context
        out["context"] = {"role": c.role, "title": c.title_key, "label": c.label, "declaredForm": c.declared_form,
                          "renderedForm": c.rendered_form, "summary": c.header_summary}
    if view.row.tail is not None:
        tail = view.row.tail
        out["diagnostic"] = {"kind": tail.kind, "reason": tail.reason, "line": tail.location.line,
                             "row": tail.location.row, "offset": tail.location.offset}
    return out


def context_json(view: RowView) -> dict[str, Any]:
    """A context row with its whole body, as the open row shows it."""
    assert view.context is not None
    return {**row_json(view), "body": asdict(view.context.body)}
