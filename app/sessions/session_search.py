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

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from io import StringIO
from typing import Any

from ..forms import RenderedForm, compact_json, project_context
from ..forms.tool_outcomes import search_listing
from ..forms.tools import present_tool, result_text
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


def _call_text(name: str, arguments: Any, result: str | None) -> str:
    """A call's words: its name, its arguments as logged and as its card shows them (a diff's lines…), its
    result's text."""
    ask = present_tool(name, arguments).ask
    return " ".join((name, str(arguments), ask.text if ask else "", result or ""))


def _tool_text(facts: ToolFacts) -> str:
    """A tool row's words: its call's, the matches or paths its result lists, and its code-mode sub-calls'."""
    listing = search_listing(facts.result_meta)
    return " ".join(
        (
            _call_text(facts.name, facts.arguments, result_text(facts.result, facts.error_name, facts.error_code)),
            listing.text if listing else "",
            *(_call_text(s.name, s.arguments, result_text(s.output)) for s in facts.subcalls),
        )
    )


def _text(facts: RowFacts) -> str:
    """The words a row shows."""
    if isinstance(facts, MessageFacts | AssistantFacts):
        return _message_text(facts.message)
    if isinstance(facts, StreamFacts):
        return facts.text
    if isinstance(facts, ToolFacts):
        return _tool_text(facts)
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
    if isinstance(facts, EventFacts):  # its header: the type and its scalar fields (`web.present.rows._event_view`)
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


_UTF8 = "surrogatepass"  # a lone surrogate from a log's JSON string is still text to find


@dataclass(frozen=True, slots=True)
class SearchIndex:
    """Every row of a session as search sees it, packed: each kind of text all rows' in one UTF-8 buffer
    with each row's end offset in it, and the facets as columns. As a `Searchable` per row, W3's 148k rows
    held 60 MiB; packed, under half, and one `find` over a buffer scans every row. Its buffers are never
    written once built."""

    text: bytearray  # row i's lower-cased text is text[text_ends[i - 1]:text_ends[i]]
    text_ends: array[int]
    raw: bytearray  # the same for the raw JSON of compact event rows
    raw_ends: array[int]
    kinds: tuple[RowKind, ...]
    forms: tuple[RenderedForm | None, ...]
    tools: tuple[str | None, ...]
    errors: bytes  # 1 for a row that reports an error


def search_index(rows: Iterable[Searchable]) -> SearchIndex:
    """`rows`, taken one at a time, packed."""
    text, raw = bytearray(), bytearray()
    text_ends, raw_ends = array("q"), array("q")
    kinds: list[RowKind] = []
    forms: list[RenderedForm | None] = []
    tools: dict[str | None, str | None] = {}  # each tool name held once
    tool_of: list[str | None] = []
    errors = bytearray()
    for row in rows:
        text += row.text.encode("utf-8", _UTF8)
        text_ends.append(len(text))
        raw += row.raw.encode("utf-8", _UTF8)
        raw_ends.append(len(raw))
        kinds.append(row.kind)
        forms.append(row.form)
        tool_of.append(tools.setdefault(row.tool, row.tool))
        errors.append(row.error)
    return SearchIndex(text, text_ends, raw, raw_ends, tuple(kinds), tuple(forms), tuple(tool_of), bytes(errors))


def _rows_holding(buffer: bytearray, ends: array[int], needle: bytes) -> Iterator[int]:
    """The rows whose stretch of `buffer` holds `needle`, in order (a match across two rows' ends is none)."""
    at = buffer.find(needle)
    while at != -1:
        row = bisect_right(ends, at)
        if at + len(needle) <= ends[row]:
            yield row
            at = buffer.find(needle, ends[row])
        else:
            at = buffer.find(needle, at + 1)


def search(
    rows: SearchIndex,
    *,
    q: str = "",
    kind: str = "",
    form: str = "",
    tool: str = "",
    errors: bool = False,
    raw: bool = False,
) -> list[int]:
    """Indexes of the rows matching every given criterion; `raw` lets the words match raw event JSON too."""
    needle = q.strip().lower().encode("utf-8", _UTF8)
    if needle:
        found = set(_rows_holding(rows.text, rows.text_ends, needle))
        if raw:
            found.update(_rows_holding(rows.raw, rows.raw_ends, needle))
        candidates: Iterable[int] = sorted(found)
    else:
        candidates = range(len(rows.kinds))
    kinds = KIND_FAMILIES.get(kind, frozenset({kind}))
    return [
        i
        for i in candidates
        if (not kind or rows.kinds[i] in kinds)
        and (not form or rows.forms[i] == form)
        and (not tool or rows.tools[i] == tool)
        and (not errors or rows.errors[i])
    ]
