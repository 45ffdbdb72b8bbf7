"""Finding rows in a session: each row's text and facets, computed once per file version.

Both come from the row's facts (`history.row_facts`), the ones its view presents, so a
row cannot be classified one way by the page and another by search: *errors only*
finds exactly the rows that report an error (`reports_error`), the rows with a red dot.

A row's text is what it shows or opens to show (tool arguments and results, context bodies,
reasoning, command output); the event JSON a compact event row keeps behind its header is its
*raw* text, searched only when asked (`raw=True`): a word that only the JSON holds would
otherwise find a row that shows no such word.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..forms import RenderedForm, compact_json, project_context
from ..forms.tools import result_text
from ..history.row_facts import (
    AssistantFacts,
    BoundaryFacts,
    CommandFacts,
    CompactionFacts,
    EventFacts,
    MessageFacts,
    RetryFacts,
    RowFacts,
    StreamFacts,
    ToolFacts,
    TurnStopFacts,
    reports_error,
)
from ..history.transcript import KIND_FAMILIES, Row, RowKind
from ..log.jsonvalues import js_string
from ..model.values import Message, ReasoningBlock, TextBlock, ToolResultBlock


@dataclass(frozen=True, slots=True)
class Searchable:
    """A row as search sees it."""

    text: str  # lower-cased text the row shows or opens to show
    raw: str  # lower-cased event JSON of a compact event row ("" for the others), searched only on request
    kind: RowKind
    form: RenderedForm | None  # a context row's rendered form
    tool: str | None
    error: bool


def _message_text(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock | ReasoningBlock):
            parts.append(block.text)
        elif isinstance(block, ToolResultBlock):
            parts.extend(b.text for b in block.content if isinstance(b, TextBlock))
    return "\n".join(parts)


def _text(facts: RowFacts) -> str:
    """The words a row shows."""
    if isinstance(facts, MessageFacts | AssistantFacts):
        return _message_text(facts.message)
    if isinstance(facts, StreamFacts):
        return facts.text
    if isinstance(facts, ToolFacts):
        return f"{facts.name} {facts.arguments} {result_text(facts.result, facts.error_name, facts.error_code) or ''}"
    if isinstance(facts, CommandFacts):
        return f"{facts.name} {facts.args} {facts.output}"
    if isinstance(facts, CompactionFacts):
        return facts.summary or ""
    if isinstance(facts, RetryFacts):
        return f"{facts.failure_message} {facts.failure_code} {facts.streamed}"
    if isinstance(facts, TurnStopFacts):
        return f"{facts.message} {facts.code if facts.code is not None else ''}"
    if isinstance(facts, BoundaryFacts):
        return str(facts.number)
    if isinstance(facts, EventFacts):  # its header: the type and its scalar fields (`rows._event_view`)
        return f"{facts.type} {', '.join(f'{k}: {js_string(v)}' for k, v in facts.fields)}"
    d = facts.diagnostic
    return f"{d.code} {d.message} {facts.text}"


def shown_text(row: Row, facts: RowFacts) -> tuple[str, RenderedForm | None]:
    """The words a row shows, as written (search within a session and across sessions read these),
    and a context row's rendered form."""
    text = _text(facts)
    if row.kind == "context" and isinstance(facts, MessageFacts):
        view = project_context(facts.message)
        return f"{view.label or ''} {text}", view.form
    return text, None


def raw_text(facts: RowFacts) -> str:
    """A compact event row's event as stored, in compact JSON: what its header does not show."""
    return compact_json(facts.event) if isinstance(facts, EventFacts) else ""


@dataclass(frozen=True, slots=True)
class Shown:
    """What a row shows, as written, and the facets search filters it by (in a session and across them)."""

    text: str
    form: RenderedForm | None
    tool: str | None
    error: bool  # `reports_error`: the row's red dot


def shown(row: Row, facts: RowFacts) -> Shown:
    text, form = shown_text(row, facts)
    tool = facts.name or None if isinstance(facts, ToolFacts) else None
    return Shown(text, form, tool, reports_error(facts))


def searchable(row: Row, facts: RowFacts) -> Searchable:
    seen = shown(row, facts)
    return Searchable(seen.text.lower(), raw_text(facts).lower(), row.kind, seen.form, seen.tool, seen.error)


def search(
    rows: list[Searchable],
    *,
    q: str = "",
    kind: str = "",
    form: str = "",
    tool: str = "",
    errors: bool = False,
    raw: bool = False,
) -> list[int]:
    """Indexes of the rows matching every given criterion; `raw` lets the words match raw event JSON too."""
    needle = q.strip().lower()
    kinds = KIND_FAMILIES.get(kind, frozenset({kind}))
    return [
        i
        for i, f in enumerate(rows)
        if (not needle or needle in f.text or (raw and needle in f.raw))
        and (not kind or f.kind in kinds)
        and (not form or f.form == form)
        and (not tool or f.tool == tool)
        and (not errors or f.error)
    ]
