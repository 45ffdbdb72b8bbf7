"""Turning transcript rows into what the row templates and the JSON twin show.

The derivation (`history.row_facts`) says what a row means; this module only
presents it: bodies, numbers and wording are settled here so a template lays
them out and decides nothing. Each row kind has its view type (`RowView.part`).
Wording stays `Phrase`s, so one view serves either language; bodies stay whole,
and each page shows them to its `body_cap` setting (docs/product.md: every body is
capped).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import singledispatch
from typing import Any, ClassVar, Literal

from markupsafe import Markup

from ...forms import ContextView, project_context, session_recall_labels
from ...forms.content import Bounded, bound, bound_json
from ...forms.jsformat import TEXT_LIMIT, cap_utf16, pretty_json
from ...forms.tool_asks import Ask, CommandAsk
from ...forms.tool_outcomes import SearchListing, ShellExit, search_listing, shell_exit
from ...forms.tools import ToolPresentation, parse_arguments, present_tool, result_text
from ...history.readable import ReadableLog
from ...history.row_facts import (
    ApprovalAsked,
    ApprovalDecided,
    AssistantFacts,
    BoundaryFacts,
    CommandFacts,
    CompactionFacts,
    EventFacts,
    FindingFacts,
    HookInvoked,
    HookResult,
    MessageFacts,
    RetryFacts,
    RowFacts,
    StreamFacts,
    StreamTiming,
    SubcallFacts,
    ToolFacts,
    ToolNote,
    TurnStopFacts,
    UsageCounts,
    reports_error,
    reports_stop,
    row_facts,
)
from ...history.transcript import Row
from ...log.jsonvalues import js_string
from ...model.text import first_line
from ...model.values import ContentBlock, ImageBlock, ReasoningBlock, TextBlock, ToolCallBlock
from .clock import WallClock
from .markdown import render_markdown
from .strings import Phrase, Text, count, phrase
from .wording import WORDS


@dataclass(frozen=True, slots=True)
class Body:
    """One body a row shows, whole: text, Markdown or JSON from an untrusted log.

    A page shows its first `body_cap` UTF-16 units (a setting) and swaps in the
    rest on "Show all" from `/sessions/{key}/bodies/{seq}?part={part}`.
    """

    part: str  # which body of its row: the show-all route finds it by this
    whole: str
    markdown: bool = False

    def capped(self, cap: int) -> Bounded:
        return bound(self.whole, cap)

    def html(self, cap: int | None = None) -> Markup:
        """Sanitized HTML of a Markdown body, rendered from its first `cap` units only: a
        renderer given a huge text would stall the page the cap is there to protect."""
        return render_markdown(self.whole if cap is None else cap_utf16(self.whole, cap)[0])

    @property
    def text(self) -> str:
        """The body as a window's JSON twin carries it: to the default cap, whatever the page's."""
        return cap_utf16(self.whole)[0]


@dataclass(frozen=True, slots=True, eq=False)
class JsonBody:
    """A body that is a value shown as 2-space JSON, printed only as far as it is shown: a page shows the head
    of a huge event without its whole text ever being held, and "Show all" prints it whole."""

    part: str
    value: Any  # a JSON value as read (an event, a block), printed by `pretty_json`
    markdown: ClassVar[bool] = False

    def capped(self, cap: int) -> Bounded:
        return bound_json(self.value, cap)

    @property
    def whole(self) -> str:
        return pretty_json(self.value)

    @property
    def text(self) -> str:
        """The body as a window's JSON twin carries it: to the default cap, whatever the page's."""
        return self.capped(TEXT_LIMIT).text


AnyBody = Body | JsonBody

BlockKind = Literal["markdown", "text", "think", "image", "json"]


@dataclass(frozen=True, slots=True)
class Block:
    """One piece of an assistant step or bubble, in content order."""

    kind: BlockKind
    body: AnyBody | None = None  # the block's text, Markdown source or JSON: every kind but an image
    summary: str = ""  # a think block's first line
    label: Phrase | None = None  # what an image is
    attachment: str | None = None  # an image's attachment id, to show it when the archive carries it


# --- one view type per row kind --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BubbleView:
    """A prompt or a steering message (`user`, `steering`)."""

    blocks: tuple[Block, ...]
    recall_labels: tuple[str, ...]  # the sessions a recall context that came with it refers to


@dataclass(frozen=True, slots=True)
class AnswerView:
    """An assistant step's content (`assistant-step`)."""

    blocks: tuple[Block, ...]
    stopped: bool  # interrupted: a `Stopped` tag

    @property
    def copies(self) -> bool:
        """Whether it has text to copy: its Markdown blocks (a step of tool calls only has none)."""
        return any(b.kind == "markdown" for b in self.blocks)


@dataclass(frozen=True, slots=True)
class ToolSubcall:
    name: str
    arguments: AnyBody  # shown when the sub-call has no ask
    is_error: bool
    output: Body | None
    ask: Ask | None  # what it asked, as a call of its tool's (`forms.tool_asks`)
    asked: Body | None  # the ask's long text

    @property
    def state(self) -> str:
        return "error" if self.is_error else "ok"


@dataclass(frozen=True, slots=True)
class ToolView:
    """A tool call and its result (`tool-call`, docs/ui.md §5.3)."""

    presentation: ToolPresentation
    name: str
    call_id: str | None
    arguments: Body  # the IN section, when the call has no ask (`presentation.ask`)
    asked: Body | None  # the ask's long text (a command, a file's content, a program), to its body cap
    output: Body | None  # the OUT section; a shell command's without the exit its pill shows
    exit: ShellExit | None  # a shell command's exit, for its pill
    listing: SearchListing | None  # a search's matches or paths, listed above the text the model read
    error_code: str | None
    subcalls: tuple[ToolSubcall, ...]
    notes: tuple[Phrase, ...]  # hooks, approvals, pruning: one line each
    pruned: Body | None  # the model-facing replacement text, when pruned
    result_message_id: str | None  # the result message's id (kept by a pruned copy), for its identity page
    path: str | None  # a file the header shows as a link (not on an error row)
    title_key: str  # the row's title in the page's language
    state_text: Phrase | None  # the visually hidden Running / Failed / Stopped
    single_file: bool  # a read, write or edit of one file: its header names the file (docs/ui.md §5.3)
    command: str | None  # a shell tool's command line, to copy
    child_session: str | None  # the subagent session the call names (`ToolFacts.child_session`)

    @property
    def shows_json(self) -> bool:
        """Whether the card's IN is the arguments' JSON: a call whose arguments are not its tool's shape."""
        return self.presentation.ask is None


@dataclass(frozen=True, slots=True)
class MarkerView:
    """A compaction marker (`compaction`, and a /compact command that produced one, docs/ui.md §5.5)."""

    title: Text
    summary: Text
    body: Body | None  # the summary, Markdown; None: the marker cannot open
    items: int | None
    tokens: str | None
    checkpoint_id: str | None


@dataclass(frozen=True, slots=True)
class CommandView:
    """A command (`command`, `manual-compaction`, docs/ui.md §5.4); its outcome text is the row's detail."""

    args: str
    marker: MarkerView | None  # a /compact command shown as the marker it produced
    line: str  # the command as typed (`/name` and its arguments), to copy


@dataclass(frozen=True, slots=True)
class RetryView:
    """A model request retry notice (`model-retry`, docs/ui.md §5.6)."""

    summary: Phrase  # Retried model request (1/3) · 1.5s (docs/ui.md §5.6)
    retry: str
    maximum: str
    seconds: str
    delay: Phrase
    message: str
    code: str
    streamed: Body | None  # what the failed attempt streamed


@dataclass(frozen=True, slots=True)
class StopView:
    """A turn that failed or hit the token limit (`turn-error`, `turn-max-tokens`)."""

    title: Phrase
    text: Text
    code: str | None


@dataclass(frozen=True, slots=True)
class BoundaryView:
    """A turn or step boundary (`turn`, `step`)."""

    label: Phrase  # Turn 3, Step 2
    number: str
    outcome: Text | None  # how a turn ended, when not completed


@dataclass(frozen=True, slots=True)
class EventView:
    """Any other event (`event`, `unknown`): compact, its JSON a click away."""

    label: Text
    type: str


@dataclass(frozen=True, slots=True)
class FindingView:
    """A diagnostic where it lies (`diagnostic`)."""

    code: str
    severity: str
    title: Phrase | None  # the record kind's label; None: the code shows instead


Part = (
    BubbleView
    | ContextView
    | AnswerView
    | ToolView
    | CommandView
    | MarkerView
    | RetryView
    | StopView
    | BoundaryView
    | EventView
    | FindingView
    | None
)
Dot = Literal["error", "stopped"]


@dataclass(frozen=True, slots=True)
class RowView:
    """What a row shows. Every kind has a title, a summary, a state and facts; `part` holds the rest."""

    row: Row
    facts: RowFacts
    part: Part
    # `msg-{id}` for a message row (`~2`, `~3`… for repeated ids), else its key (docs/product.md Interfaces)
    anchor: str
    type: str | None  # the type of the event it anchors at; None for a finding
    title: Text = ""
    summary: Text = ""
    state: str = ""  # the row's `data-state`: ok, error, stopped, running, … (per kind, docs/ui.md §5)
    fact_phrases: tuple[Phrase, ...] = ()  # small labelled facts: durations, token counts, usage
    detail: AnyBody | None = None  # the row's expandable text (command output, raw JSON of a compact row)
    time: WallClock | None = None  # when a turn or step started, a prompt was sent, an answer arrived

    @property
    def timing(self) -> StreamTiming | None:
        """How fast an assistant step's answer streamed, when its events carry the times."""
        return self.facts.timing if isinstance(self.facts, AssistantFacts) else None

    @property
    def error(self) -> bool:
        """Whether the row reports a failure (`history.row_facts.reports_error`)."""
        return reports_error(self.facts)

    @property
    def dot(self) -> Dot | None:
        """The state dot the row's header shows instead of its icon: red exactly when it reports an
        error, amber when it reports a stop (`history.row_facts`)."""
        if self.error:
            return "error"
        return "stopped" if reports_stop(self.facts) else None

    @property
    def step(self) -> str | None:
        """The step whose model view the row links to (the rows that run inside a step)."""
        return self.row.step

    @property
    def identity(self) -> str | None:
        """The message the row stands for (`Row.message`), whose id it shows and whose identity page it
        links: its own message, or the result a tool row shows, the checkpoint a `/compact` marker stands
        for, the empty message a partial stream or a step hosts. The row anchors at `msg-{id}`."""
        return self.row.message

    @property
    def bookkeeping(self) -> bool:
        """Whether the row shows harness bookkeeping rather than conversation."""
        return isinstance(self.facts, EventFacts) and self.facts.bookkeeping

    @property
    def marker(self) -> MarkerView | None:
        """The compaction marker the row shows: a compaction's, or the one a /compact command is shown as."""
        part = self.part
        return part if isinstance(part, MarkerView) else part.marker if isinstance(part, CommandView) else None

    def bodies(self) -> Iterator[AnyBody]:
        """Every body the row shows (context bodies keep their own, contractual bound: docs/ui.md §3)."""
        part = self.part
        if isinstance(part, BubbleView | AnswerView):
            yield from (b.body for b in part.blocks if b.body is not None)
        if self.detail is not None:
            yield self.detail
        if isinstance(part, ToolView):
            if part.shows_json:
                yield part.arguments
            yield from (b for b in (part.asked, part.output, part.pruned) if b is not None)
            for sub in part.subcalls:
                yield from (b for b in (sub.asked if sub.ask else sub.arguments, sub.output) if b is not None)
        if self.marker is not None and self.marker.body is not None:
            yield self.marker.body
        if isinstance(part, RetryView) and part.streamed is not None:
            yield part.streamed

    def body(self, part: str) -> AnyBody | None:
        return next((b for b in self.bodies() if b.part == part), None)


def duration(ms: int | None) -> Phrase | None:
    if ms is None or ms < 0:
        return None
    if ms < 1000:
        return phrase("duration.ms", ms=ms)
    seconds = ms / 1000
    if seconds < 60:
        return phrase("duration.seconds", seconds=f"{seconds:.1f}")
    return phrase("duration.minutes", minutes=int(seconds // 60), seconds=int(seconds % 60))


def _image_label(block: ImageBlock) -> Phrase:
    a = block.attachment
    name = a.get("name") if isinstance(a.get("name"), str) else a.get("attachmentId", "")
    size = f"{js_string(a.get('width'))}×{js_string(a.get('height'))}" if "width" in a else ""
    details = (js_string(name), js_string(a.get("mediaType", "")), size)
    return phrase("row.image", details=" ".join(x for x in details if x))


def content_blocks(content: tuple[ContentBlock, ...], *, markdown: bool) -> tuple[Block, ...]:
    """Text runs (joined without separator), reasoning, images and unknown blocks, in order."""
    out: list[Block] = []
    run: list[str] = []

    def part() -> str:
        return f"block-{len(out)}"

    def flush() -> None:
        if run:
            text = "".join(run)
            if text:
                out.append(Block("markdown" if markdown else "text", Body(part(), text, markdown=markdown)))
            run.clear()

    for block in content:
        if isinstance(block, TextBlock):
            run.append(block.text)
            continue
        flush()
        if isinstance(block, ReasoningBlock):
            out.append(Block("think", Body(part(), block.text), summary=first_line(block.text)))
        elif isinstance(block, ImageBlock):
            attachment = block.attachment.get("attachmentId")
            out.append(
                Block(
                    "image", label=_image_label(block), attachment=attachment if isinstance(attachment, str) else None
                )
            )
        elif isinstance(block, ToolCallBlock):
            continue  # tool calls render as their own rows
        else:
            out.append(Block("json", JsonBody(part(), block.to_json())))
    flush()
    return tuple(out)


def _number(value: object) -> str:
    """A count as every page prints it (`strings.count`); anything else a log wrote, as JavaScript would."""
    return count(value) if isinstance(value, int) and not isinstance(value, bool) else js_string(value)


def usage_phrases(usage: UsageCounts) -> tuple[Phrase, ...]:
    return tuple(phrase(WORDS.usage[name], count=_number(value)) for name, value in usage)


def timing_phrases(timing: StreamTiming | None) -> tuple[Phrase, ...]:
    """TTFT 1.2 s, 42 tok/s (docs/ui.md §5.2's turn tail): what the step's events carry of them."""
    if timing is None:
        return ()
    ttft = duration(timing.first_token_ms)
    shown = (phrase("row.ttft", duration=ttft),) if ttft is not None else ()
    rate = timing.tokens_per_second
    return shown + ((phrase("row.tokensPerSecond", rate=count(round(rate))),) if rate is not None else ())


def _note(note: ToolNote) -> Phrase:
    """A hook, approval or pruning, as one line on the tool row it concerns."""
    if isinstance(note, HookInvoked):
        return phrase("tool.hookInvoked", point=note.point, handler=note.handler)
    if isinstance(note, HookResult):
        if note.stderr is not None:
            return phrase("tool.hookResultStderr", point=note.point, decision=note.decision, stderr=note.stderr)
        return phrase("tool.hookResult", point=note.point, decision=note.decision)
    if isinstance(note, ApprovalAsked):
        return phrase("tool.approvalAsked", reason=note.reason)
    if isinstance(note, ApprovalDecided):
        return phrase("tool.approvalDecided", outcome=note.outcome)
    return phrase("tool.prunedAt", seq=note.seq)


def _shell_exit(presentation: ToolPresentation, facts: ToolFacts, output: str | None) -> ShellExit | None:
    """How a shell command the tool ran ended: not for a call that failed to run, nor one run in the
    background (its result is a job's id)."""
    ask = presentation.ask
    if not isinstance(ask, CommandAsk) or ask.background or facts.outcome != "ok" or output is None:
        return None
    return shell_exit(output)


def _tool_view(facts: ToolFacts, output: str | None, cwd: str | None) -> ToolView:
    presentation = present_tool(facts.name, facts.arguments, cwd)
    state = WORDS.tool_states.get(facts.outcome)
    pruned = facts.pruned
    pruned_text = result_text(pruned.content) if pruned is not None else None
    ask = presentation.ask
    exit = _shell_exit(presentation, facts, output)
    shown = exit.output if exit is not None else output
    return ToolView(
        presentation=presentation,
        name=facts.name,
        call_id=facts.call_id,
        arguments=Body("in", presentation.arguments),
        asked=_asked(ask, "asked"),
        output=Body("out", shown) if shown is not None else None,
        exit=exit,
        listing=search_listing(facts.result_meta),
        error_code=js_string(facts.error_code) if facts.error_code is not None else None,
        subcalls=tuple(_subcall(n, s, cwd) for n, s in enumerate(facts.subcalls)),
        notes=tuple(_note(n) for n in facts.notes),
        pruned=Body("pruned", pruned_text) if pruned_text is not None else None,
        result_message_id=facts.result_id,
        path=presentation.path if not reports_error(facts) else None,
        title_key=WORDS.tool_titles[presentation.title_name],
        state_text=phrase(state) if state is not None else None,
        single_file=presentation.path is not None,
        command=_shell_command(presentation, facts.arguments),
        child_session=facts.child_session,
    )


def _asked(ask: Ask | None, part: str) -> Body | None:
    """An ask's long text as the body `part` (a command, a file's content, a program)."""
    return Body(part, ask.long_text) if ask is not None and ask.long_text is not None else None


def _subcall(n: int, s: SubcallFacts, cwd: str | None) -> ToolSubcall:
    """A code-mode sub-call: shown as a call of its tool is (what it asked), its result as text."""
    ask = present_tool(s.name, s.arguments, cwd).ask
    return ToolSubcall(
        s.name,
        JsonBody(f"sub-{n}-in", s.arguments),
        s.is_error,
        Body(f"sub-{n}-out", result_text(s.output) or "") if s.output is not None else None,
        ask,
        _asked(ask, f"sub-{n}-asked"),
    )


def _shell_command(presentation: ToolPresentation, arguments: object) -> str | None:
    """A `bash` or `pwsh` call's `command` argument: what a reader copies to run it again."""
    if presentation.variant != "bash":
        return None
    args = parse_arguments(arguments)
    command = args.get("command") if isinstance(args, dict) else None
    return command if isinstance(command, str) and command else None


def _marker(facts: CompactionFacts, title: Text, fallback: str) -> MarkerView:
    body = Body("summary", facts.summary, markdown=True) if facts.summary else None
    tokens = _number(facts.tokens) if facts.tokens is not None else None
    summary: Text
    if facts.items is not None and tokens is not None:
        summary = phrase("message.compaction.completed", items=facts.items, tokens=tokens)
    else:
        summary = fallback or phrase("compaction.view" if body else "compaction.unavailable")
    return MarkerView(title, summary, body, facts.items, tokens, facts.checkpoint_id)


def _retry_view(facts: RetryFacts) -> RetryView:
    delay = facts.delay_ms
    seconds = (
        js_string(round(delay / 1000, 3)) if isinstance(delay, int | float) and not isinstance(delay, bool) else "?"
    )
    retry = js_string(facts.retry)
    maximum = js_string(facts.max_retries) if facts.max_retries is not None else "∞"
    label = phrase(WORDS.retry_outcomes[facts.outcome])
    return RetryView(
        summary=phrase("retry.summary", label=label, retry=retry, maximum=maximum, seconds=seconds),
        retry=retry,
        maximum=maximum,
        seconds=seconds,
        delay=phrase("retry.delay", ms=js_string(delay)),
        message=facts.failure_message,
        code=facts.failure_code,
        streamed=Body("streamed", facts.streamed) if facts.streamed else None,
    )


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a row's view is made: the row, the log its events are read from, its anchor, the session's cwd."""

    row: Row
    log: ReadableLog
    anchor: str
    cwd: str | None

    @property
    def event_type(self) -> str:
        return self.log.types[self.row.seq]


def row_view(log: ReadableLog, row: Row, cwd: str | None, anchor: str) -> RowView:
    """The view of `row` (whose events `log` reads) at its anchor; `cwd` shortens tool paths. Each kind of
    facts has its view below, found by the facts' type."""
    return _view(row_facts(log, row), _Place(row, log, anchor, cwd))


@singledispatch
def _view(facts: RowFacts, at: _Place) -> RowView:
    raise TypeError(f"no view for {type(facts).__name__}")


@_view.register
def _message_view(facts: MessageFacts, at: _Place) -> RowView:
    message = facts.message
    part: Part
    if at.row.kind == "context":
        part = project_context(message)
    else:
        labels = session_recall_labels(facts.recall.source) if facts.recall is not None else ()
        part = BubbleView(content_blocks(message.content, markdown=False), labels)
    return RowView(at.row, facts, part, at.anchor, at.event_type, time=WallClock.of(facts.time))


@_view.register
def _answer_view(facts: AssistantFacts, at: _Place) -> RowView:
    return RowView(
        at.row,
        facts,
        AnswerView(content_blocks(facts.message.content, markdown=True), facts.interrupted),
        at.anchor,
        at.event_type,
        state="stopped" if facts.interrupted else "ok",
        fact_phrases=usage_phrases(facts.usage) + timing_phrases(facts.timing),
        time=WallClock.of(facts.time),
    )


@_view.register
def _stream_view(facts: StreamFacts, at: _Place) -> RowView:
    return RowView(
        at.row,
        facts,
        None,
        at.anchor,
        at.event_type,
        detail=Body("detail", facts.text),
        fact_phrases=usage_phrases(facts.usage),
    )


@_view.register
def _tool_row_view(facts: ToolFacts, at: _Place) -> RowView:
    output = result_text(facts.result, facts.error_name, facts.error_code)
    tool = _tool_view(facts, output, at.cwd)
    # an error row's summary is the first line of its result (docs/ui.md §5.3)
    summary = cap_utf16(output)[0].split("\n", 1)[0] if reports_error(facts) and output else tool.presentation.summary
    return RowView(
        at.row,
        facts,
        tool,
        at.anchor,
        at.event_type,
        title=tool.presentation.title,
        summary=summary,
        state=facts.outcome,
        fact_phrases=tuple(x for x in (duration(facts.duration_ms),) if x),
    )


@_view.register
def _command_view(facts: CommandFacts, at: _Place) -> RowView:
    text = facts.output
    marker = _marker(facts.compaction, facts.name, first_line(text) if text else "") if facts.compaction else None
    return RowView(
        at.row,
        facts,
        CommandView(js_string(facts.args), marker, f"/{facts.name}{js_string(facts.args)}"),
        at.anchor,
        at.event_type,
        title=facts.name,
        summary=first_line(text) if text else phrase(WORDS.command_outcomes[facts.outcome]),
        state=facts.outcome,
        detail=Body("detail", text) if "\n" in text else None,
    )


@_view.register
def _compaction_view(facts: CompactionFacts, at: _Place) -> RowView:
    return RowView(at.row, facts, _marker(facts, phrase("message.compaction"), ""), at.anchor, at.event_type)


@_view.register
def _retry_row_view(facts: RetryFacts, at: _Place) -> RowView:
    return RowView(at.row, facts, _retry_view(facts), at.anchor, at.event_type, state=facts.outcome)


@_view.register
def _stop_view(facts: TurnStopFacts, at: _Place) -> RowView:
    failed = facts.reason == "error"
    title = phrase("turn.failed" if failed else "turn.maxTokens")
    code = js_string(facts.code) if failed and facts.code is not None else None
    stop = StopView(title, facts.message if failed else phrase("turn.maxTokensHint"), code)
    return RowView(at.row, facts, stop, at.anchor, at.event_type, title=title, summary=facts.message)


@_view.register
def _boundary_view(facts: BoundaryFacts, at: _Place) -> RowView:
    number = js_string(facts.number)
    label = phrase("row.turn", turn=number) if at.row.kind == "turn" else phrase("row.step", step=number)
    outcome = facts.outcome if facts.outcome not in (None, "completed") else None
    shown = tuple(x for x in (duration(facts.duration_ms),) if x) + usage_phrases(facts.usage)
    boundary = BoundaryView(label, number, _turn_outcome(outcome) if outcome is not None else None)
    return RowView(
        at.row,
        facts,
        boundary,
        at.anchor,
        at.event_type,
        title=number,
        state=facts.outcome or "",
        fact_phrases=shown,
        time=WallClock.of(facts.time),
    )


@_view.register
def _event_view(facts: EventFacts, at: _Place) -> RowView:
    event_label: Text = facts.type if at.row.kind == "event" else phrase("row.unknownEvent", type=facts.type)
    return RowView(
        at.row,
        facts,
        EventView(event_label, facts.type),
        at.anchor,
        at.event_type,
        title=facts.type,
        summary=first_line(", ".join(f"{k}: {js_string(v)}" for k, v in facts.fields)),
        detail=JsonBody("detail", facts.event),
    )


def _turn_outcome(kind: str) -> Text:
    """How a turn ended, worded when dsh's vocabulary has it (docs/format.md §3.3 `TurnEndReason`), else as logged."""
    key = WORDS.turn_outcomes.get(kind)
    return phrase(key) if key is not None else kind


@_view.register
def _finding_view(facts: FindingFacts, at: _Place) -> RowView:
    """A finding is laid out from its diagnostic (and the record it could not read), not from events."""
    row, anchor = at.row, at.anchor
    d, record = facts.diagnostic, facts.record
    key = WORDS.records.get(record.kind) if record is not None else None
    part = FindingView(d.code, d.severity, phrase(key) if key else None)
    return RowView(
        row,
        facts,
        part,
        anchor,
        None,
        title=record.kind if record is not None else d.code,
        summary=f"{d.location.describe()}: {d.message}",
        state=d.severity,
        detail=Body("record", facts.text) if facts.text else None,  # a part no event row has
    )


def rendered_markdown(body: AnyBody | None) -> Markup | None:
    """A Markdown body's HTML as the JSON twin carries it: from its first default-cap units."""
    return body.html(TEXT_LIMIT) if isinstance(body, Body) and body.markdown else None
