"""The declared shapes of the session page's JSON twins (docs/product.md Interfaces: every page has one;
they appear in `/openapi.json`).

A twin carries what its page shows, from the same views (`rows.RowView`): a row's
kind-specific facts sit under a key of their own (`tool`, `command`, `compaction`,
`retry`, …) that is null for the other kinds. Interface words are in English.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

from ...forms import ContextView
from ...forms.jsformat import TEXT_LIMIT
from ...sessions.wire import Twin
from .rows import (
    AnswerView,
    AnyBody,
    Block,
    BlockKind,
    BubbleView,
    CommandView,
    MarkerView,
    RetryView,
    RowView,
    StopView,
    ToolView,
    rendered_markdown,
)
from .strings import ENGLISH


class BlockJson(Twin):
    kind: BlockKind
    text: str  # the text of a text or think block (a Markdown block's HTML, an image's label)
    summary: str | None = None  # a think block's first line
    json_text: str | None = None  # an unknown block's JSON

    model_config = ConfigDict(alias_generator=lambda name: "json" if name == "json_text" else to_camel(name))


class BodyJson(Twin):
    """How much of a body the twin carries: `total` UTF-16 units whole, cut at the default cap when
    `truncated`; `/api/sessions/{key}/bodies/{seq}?part=` answers it whole."""

    part: str
    total: int
    truncated: bool


class SubcallJson(Twin):
    name: str
    is_error: bool
    arguments: str
    output: str | None


class ToolJson(Twin):
    """What a tool row shows: its header, IN and OUT, its sub-calls, what the model saw once pruned, its notes."""

    name: str
    call_id: str | None
    variant: str
    title: str
    summary: str
    path: str | None
    state: str
    error_code: str | None
    result_message_id: str | None
    arguments: str
    output: str | None
    pruned: str | None
    notes: list[str]
    subcalls: list[SubcallJson]
    single_file: bool  # a read, write or edit of one file: the card shows no IN (docs/ui.md §5.3)
    command: str | None  # a shell tool's command line, as its copy button copies it
    child_session: str | None  # the subagent session the call names (the page links it when it is loaded)


class ContextJson(Twin):
    role: str
    title: str
    label: str | None
    declared_form: str | None
    rendered_form: str | None
    summary: str | None


class CompactionJson(Twin):
    items: int | None  # history items it shadowed
    tokens: str | None  # `shadowedTokenCount`, as the marker words it
    summary: str | None  # the summary's Markdown source
    markdown: str | None  # its HTML, to the default cap
    checkpoint_id: str | None


class CommandJson(Twin):
    args: str
    line: str  # the command as typed, as its copy button copies it


class TimingJson(Twin):
    """How fast an assistant step's answer streamed, from the times its events carry."""

    ttft_ms: int  # its request's start to its first streamed delta
    tokens_per_second: float | None  # `outputTokens` over the streaming; None when not logged


class RetryJson(Twin):
    summary: str
    retry: str
    maximum: str
    seconds: str
    delay: str
    message: str
    code: str
    streamed: str | None  # what the failed attempt streamed


class StopJson(Twin):
    """A turn that failed or reached the token limit."""

    title: str
    text: str
    code: str | None


class DiagnosticJson(Twin):
    """A finding where it lies; an unreadable record's kind and reason with it."""

    code: str
    severity: str
    message: str
    file: str | None
    line: int | None
    row: int | None
    offset: int | None
    kind: str | None = None
    reason: str | None = None


class RunJson(Twin):
    """A run row's events: how many, and the seqs they run over (`first` to `last`)."""

    count: int
    first: int
    last: int


class RowJson(Twin):
    kind: str
    seq: int
    key: str
    anchor: str
    links: dict[str, list[int]]
    type: str | None
    message_id: str | None  # the message the row stands for, whole (`anchor` names a long one by its handle)
    step: str | None
    title: str
    summary: str
    state: str
    error: bool  # the row reports a failure: a red dot on the page, a hit of *errors only*
    dot: Literal["error", "stopped"] | None  # the state dot the row shows: red for an error, amber for a stop
    bookkeeping: bool
    facts: list[str]
    detail: str | None
    outside: str | None  # why dsh would not load what the row shows (or, on a finding, what follows)
    time: str | None  # when a turn or step started, an answer arrived: ISO 8601 UTC; None when not logged
    timing: TimingJson | None
    bodies: list[BodyJson]
    blocks: list[BlockJson] | None = None
    recall_labels: list[str] | None = None
    tool: ToolJson | None = None
    context: ContextJson | None = None
    command: CommandJson | None = None
    compaction: CompactionJson | None = None
    retry: RetryJson | None = None
    stop: StopJson | None = None
    diagnostic: DiagnosticJson | None = None
    run: RunJson | None = None  # a run row: one row for many like events (`?run={key}` pages its rows)


class ContextRowJson(RowJson):
    body: dict[str, Any]  # the rendered body (docs/ui.md §3), as the open row shows it


class WindowJson(Twin):
    """A window of rows, where it lies, and where its neighbours start."""

    from_: int
    to: int
    total_rows: int | None
    previous_from: int | None
    next_from: int | None
    rows: list[RowJson]
    # a page of a run row's rows: the run's key (`?run=` pages them; `from`, `to` and the rest count its rows)
    run: str | None = None
    # the page of a run row's rows that shows the row `?at=` names, when that row lies inside a run
    opened_run: WindowJson | None = None

    model_config = ConfigDict(alias_generator=lambda name: "from" if name == "from_" else to_camel(name))


def _block(b: Block) -> BlockJson:
    if b.kind == "markdown":
        text = str(rendered_markdown(b.body) or "")
    elif b.label is not None:
        text = str(b.label)
    else:
        text = b.body.text if b.body is not None and b.kind in ("text", "think") else ""
    json = b.body.text if b.kind == "json" and b.body is not None else None
    return BlockJson(kind=b.kind, text=text, summary=b.summary or None, json_text=json)


def _body(body: AnyBody) -> BodyJson:
    shown = body.capped(TEXT_LIMIT)
    return BodyJson(part=body.part, total=shown.total, truncated=shown.truncated)


def _tool(view: RowView, tool: ToolView) -> ToolJson:
    p = tool.presentation
    return ToolJson(
        name=tool.name,
        call_id=tool.call_id,
        variant=p.variant,
        title=p.title,
        summary=p.summary,
        path=p.path,
        state=view.state,
        error_code=tool.error_code,
        result_message_id=tool.result_message_id,
        arguments=tool.arguments.text,
        output=tool.output.text if tool.output else None,
        pruned=tool.pruned.text if tool.pruned else None,
        notes=[str(n) for n in tool.notes],
        subcalls=[
            SubcallJson(
                name=s.name, is_error=s.is_error, arguments=s.arguments.text, output=s.output.text if s.output else None
            )
            for s in tool.subcalls
        ],
        single_file=tool.single_file,
        command=tool.command,
        child_session=tool.child_session,
    )


def _compaction(marker: MarkerView) -> CompactionJson:
    html = rendered_markdown(marker.body)
    return CompactionJson(
        items=marker.items,
        tokens=marker.tokens,
        summary=marker.body.text if marker.body is not None else None,
        markdown=str(html) if html is not None else None,
        checkpoint_id=marker.checkpoint_id,
    )


def _context(c: ContextView) -> ContextJson:
    return ContextJson(
        role=c.role,
        title=ENGLISH(c.title_key),
        label=c.label,
        declared_form=c.declared_form,
        rendered_form=c.rendered_form,
        summary=c.header_summary,
    )


def _diagnostic(view: RowView) -> DiagnosticJson | None:
    d, tail = view.row.diagnostic, view.row.tail
    if d is None:
        return None
    record = {"kind": tail.kind, "reason": tail.reason} if tail is not None else {}
    return DiagnosticJson.model_validate({**d.to_json(), **record})


def row_json(view: RowView) -> RowJson:
    part, marker = view.part, view.marker
    timing = view.timing
    return RowJson(
        kind=view.row.kind,
        seq=view.row.seq,
        key=view.row.key,
        anchor=view.anchor,
        links={k: list(v) for k, v in view.row.links},
        type=view.type,
        message_id=view.identity,
        step=view.step,
        title=str(view.title),
        summary=str(view.summary),
        state=view.state,
        error=view.error,
        dot=view.dot,
        bookkeeping=view.bookkeeping,
        facts=[str(p) for p in view.fact_phrases],
        detail=view.detail.text if view.detail is not None else None,
        outside=view.row.outside,
        time=view.time.iso if view.time is not None else None,
        timing=TimingJson(ttft_ms=timing.first_token_ms, tokens_per_second=timing.tokens_per_second)
        if timing is not None
        else None,
        bodies=[_body(b) for b in view.bodies()],
        blocks=[_block(b) for b in part.blocks] if isinstance(part, BubbleView | AnswerView) else None,
        recall_labels=list(part.recall_labels) if isinstance(part, BubbleView) else None,
        tool=_tool(view, part) if isinstance(part, ToolView) else None,
        context=_context(part) if isinstance(part, ContextView) else None,
        command=CommandJson(args=part.args, line=part.line) if isinstance(part, CommandView) else None,
        compaction=_compaction(marker) if marker is not None else None,
        retry=(
            RetryJson(
                summary=str(part.summary),
                retry=part.retry,
                maximum=part.maximum,
                seconds=part.seconds,
                delay=str(part.delay),
                message=part.message,
                code=part.code,
                streamed=part.streamed.text if part.streamed is not None else None,
            )
            if isinstance(part, RetryView)
            else None
        ),
        stop=StopJson(title=str(part.title), text=str(part.text), code=part.code)
        if isinstance(part, StopView)
        else None,
        run=RunJson(count=view.row.count, first=view.row.seq, last=view.row.last) if view.row.count > 1 else None,
        diagnostic=_diagnostic(view),
    )


def context_json(view: RowView) -> ContextRowJson:
    """A context row with its whole body, as the open row shows it."""
    assert isinstance(view.part, ContextView)
    return ContextRowJson(**row_json(view).model_dump(), body=asdict(view.part.body))
