"""Finding rows in a session: text and facets per row, computed once per file version."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from ..forms import project_context
from ..history.session import SessionLog
from ..history.transcript import Row
from ..model.values import Message, ReasoningBlock, TextBlock, ToolResultBlock

_ERROR_KINDS = frozenset({"turn-error", "diagnostic"})


@dataclass(frozen=True, slots=True)
class RowFacts:
    text: str  # lower-cased searchable text
    kind: str
    form: str | None  # a context row's rendered form
    tool: str | None
    error: bool


def _message_text(message: Message | None) -> str:
    if message is None:
        return ""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, (TextBlock, ReasoningBlock)):
            parts.append(block.text)
        elif isinstance(block, ToolResultBlock):
            parts.extend(b.text for b in block.content if isinstance(b, TextBlock))
    return "\n".join(parts)


def row_facts(log: SessionLog, row: Row) -> RowFacts:
    if row.diagnostic is not None:
        d, tail = row.diagnostic, row.tail
        raw = tail.raw.decode("utf-8", "replace") if tail and tail.raw else ""
        return RowFacts(f"{d.code} {d.message} {raw}".lower(), row.kind, None, None, d.severity == "error")
    event = log.event(row.seq)
    data = event.data if isinstance(event.data, dict) else {}
    form = tool = None
    error = row.kind in _ERROR_KINDS
    if row.kind == "context" and event.message is not None:
        view = project_context(event.message)
        form = view.rendered_form or "opaque"
        text = f"{view.label or ''} {_message_text(event.message)}"
    elif row.kind == "tool-call":
        tool = str(data.get("name", "")) or None
        results = [log.event(s) for s in row.link("result")]
        result_text = "".join(_message_text(r.message) for r in results)
        error = any(
            isinstance(r.data, dict)
            and (
                r.data.get("error")
                or any(isinstance(b, ToolResultBlock) and b.is_error for b in (r.message.content if r.message else ()))
            )
            for r in results
        )
        text = f"{tool or ''} {data.get('arguments', '')} {result_text}"
    elif row.kind in ("command", "manual-compaction"):
        done = [log.event(s).data for s in row.link("done")]
        error = any(isinstance(d, dict) and d.get("kind") == "error" for d in done)
        text = f"{data.get('name', '')} {data.get('args', '')} " + " ".join(
            str(d.get("text", "")) for d in done if isinstance(d, dict)
        )
    elif event.message is not None:
        text = _message_text(event.message)
    else:
        text = f"{event.type} {orjson.dumps(event.data).decode()}"
    return RowFacts(text.lower(), row.kind, form, tool, error)


# every row kind a person can filter by (templates/rows/ has a partial for each)
ROW_KINDS = (
    "user",
    "steering",
    "context",
    "assistant-step",
    "tool-call",
    "command",
    "compaction",
    "model-retry",
    "turn-error",
    "turn-max-tokens",
    "partial-stream",
    "turn",
    "step",
    "event",
    "unknown",
    "diagnostic",
)
# a filter that names a family takes its members: a /compact marker is a compaction too
_KIND_FAMILIES = {"compaction": frozenset({"compaction", "manual-compaction"})}


def search(
    facts: list[RowFacts], *, q: str = "", kind: str = "", form: str = "", tool: str = "", errors: bool = False
) -> list[int]:
    """Indexes of the rows matching every given criterion."""
    needle = q.strip().lower()
    kinds = _KIND_FAMILIES.get(kind, frozenset({kind}))
    return [
        i
        for i, f in enumerate(facts)
        if (not needle or needle in f.text)
        and (not kind or f.kind in kinds)
        and (not form or f.form == form)
        and (not tool or f.tool == tool)
        and (not errors or f.error)
    ]
