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
from io import StringIO

from ..forms import RenderedForm, compact_json, project_context
from ..forms.tools import result_text
from ..history.readable import ReadableLog
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
    row_facts,
)
from ..history.transcript import KIND_FAMILIES, Row, RowKind, each_row
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


# A run row (`Row.count`) shows what its rows show: their words are read from each, one row at a time (its
# events decoded only when words are asked for), each distinct text once, so a run finds what any of its rows
# would without holding a million of anything.


def row_shown(log: ReadableLog, row: Row, *, words_only: bool = False) -> Shown:
    """What `row` shows (a run row: its rows' words), its events read from `log`."""
    if row.count == 1:
        return shown(row, row_facts(log, row, words_only=words_only))
    return _run_shown(log, row, words_only=words_only)[0]


def row_searchable(log: ReadableLog, row: Row) -> Searchable:
    """`row` as search sees it (a run row: with its rows' words, and the raw JSON of each of its events)."""
    if row.count == 1:
        return searchable(row, row_facts(log, row))
    seen, raw = _run_shown(log, row, raw=True)
    return Searchable(seen.text.lower(), raw.lower(), row.kind, None, None, seen.error)


def _run_shown(log: ReadableLog, row: Row, *, words_only: bool = False, raw: bool = False) -> tuple[Shown, str]:
    """What run row `row` shows, and with `raw` its events' raw JSON, one line each ("" without)."""
    texts: dict[str, None] = {}
    raws = StringIO()
    error = False
    for inner in each_row([row]):
        facts = row_facts(log, inner, words_only=words_only)
        seen = shown(inner, facts)
        texts[seen.text] = None
        error = error or seen.error
        if raw:
            raws.write(raw_text(facts))
            raws.write("\n")
    return Shown("\n".join(texts), None, None, error), raws.getvalue()


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
