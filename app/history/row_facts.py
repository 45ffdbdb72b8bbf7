"""What each transcript row shows, worked out once (docs/format.md §5.5, docs/ui.md §5).

A `Row` names the events it draws on; its facts say what they mean: a tool call's
outcome, a command's, a retry's, the text a stream carried, whether the row reports
an error. The page, its JSON twin and search present these facts and decide
nothing again, so they cannot disagree about a row.

Facts keep the log's own values where the log may hold anything (a turn number, a
token count): formatting them is the presentation's job.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..log.diagnostics import Diagnostic
from ..log.jsonvalues import parse_json
from ..model.payloads import (
    ApprovalAsked as ApprovalAskedData,
)
from ..model.payloads import (
    ApprovalDecided as ApprovalDecidedData,
)
from ..model.payloads import (
    AssistantChunk,
    AssistantMessage,
    CodeDispatch,
    CommandDone,
    CommandRun,
    Compaction,
    Hook,
    Payload,
    Retry,
    Step,
    StreamChunk,
    ToolCall,
    ToolError,
    ToolResult,
    TurnEnd,
    TurnStart,
    failure_of,
)
from ..model.rules import BOOKKEEPING_TYPES
from ..model.values import ContentBlock, Event, Message, TextBlock, ToolResultBlock, block_from_json
from .readable import ReadableLog
from .session import SessionLog, TailRecord
from .transcript import Row, RowKind, transcript_rows

# A tool result with one of these error codes did not fail: it never ran to its end (dsh's
# `TOOL_OUTCOME_UNKNOWN` crash closer, a call stopped before or while it ran): docs/ui.md §5.3 "stopped".
STOPPED_CODES = frozenset({"TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED", "ABORTED", "ABORTED_BEFORE_DISPATCH"})
# The types of chunk whose text a stream carried (docs/format.md §3.1 `assistant/chunk`).
STREAMED_CHUNKS = frozenset({"text-delta", "reasoning-delta", "tool-call-delta"})

ToolOutcome = Literal["ok", "error", "stopped", "running"]
CommandOutcome = Literal["ok", "error", "running"]
# Retried once it started; cancelled once its turn ended first; else still waiting.
RetryOutcome = Literal["ok", "cancelled", "waiting"]
UsageName = Literal["inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens", "reasoningTokens"]
USAGE_NAMES: tuple[UsageName, ...] = (
    "inputTokens",
    "cacheReadTokens",
    "cacheWriteTokens",
    "outputTokens",
    "reasoningTokens",
)
# The token counts a message logged, in dsh's order, each as logged.
UsageCounts = tuple[tuple[UsageName, Any], ...]
# Where a step's model request starts: the step itself, or the retry that asked again (docs/format.md §3.1, §3.2);
# and the events no step runs across, where looking back for that start gives up.
REQUEST_STARTS = frozenset({"step/start", "llm/retry-started"})
STEP_BOUNDS = frozenset({"step/end", "turn/start", "turn/end"})
_LOOKING_BACK = REQUEST_STARTS | STEP_BOUNDS
# How a subagent tool's result names the child session it started or wrote to ("started subagent <id>",
# "message queued as the next turn for subagent <id>"): the id is the word after `subagent`.
_NAMED_CHILD = re.compile(r"\bsubagent ([A-Za-z0-9][A-Za-z0-9_-]*)")


@dataclass(frozen=True, slots=True)
class MessageFacts:
    """A prompt, a steering message or an injected context (`user`, `steering`, `context`)."""

    message: Message
    recall: Message | None = None  # the session recall context that came with a prompt
    time: int | None = None  # wall clock (epoch ms) of a prompt or steering message (`wall_clock`)


@dataclass(frozen=True, slots=True)
class StreamTiming:
    """How fast a step's answer streamed, from the times its events carry (docs/format.md §2.3 `time`)."""

    first_token_ms: int  # from its request's start (`step/start`, or the retry that asked again) to its first delta
    tokens_per_second: float | None  # `outputTokens` over first delta to message; None when either is not logged


@dataclass(frozen=True, slots=True)
class AssistantFacts:
    message: Message
    interrupted: bool
    usage: UsageCounts
    time: int | None = None  # wall clock (epoch ms) of the message, when the log carries one (`wall_clock`)
    timing: StreamTiming | None = None  # None when the step streamed no timed delta


@dataclass(frozen=True, slots=True)
class StreamFacts:
    """What a step streamed without a message to show it (`partial-stream`)."""

    text: str
    usage: UsageCounts  # the usage of the empty message that closed the stream, if any


@dataclass(frozen=True, slots=True)
class HookInvoked:
    point: Any
    handler: Any


@dataclass(frozen=True, slots=True)
class HookResult:
    point: Any
    decision: Any
    stderr: str | None


@dataclass(frozen=True, slots=True)
class ApprovalAsked:
    reason: Any


@dataclass(frozen=True, slots=True)
class ApprovalDecided:
    outcome: Any


@dataclass(frozen=True, slots=True)
class PrunedAt:
    """The result was later pruned: the model read `content` instead from then on."""

    seq: int
    content: tuple[ContentBlock, ...] | None


ToolNote = HookInvoked | HookResult | ApprovalAsked | ApprovalDecided | PrunedAt


@dataclass(frozen=True, slots=True)
class SubcallFacts:
    """A code-mode sub-call (`tool/code-dispatch-start` and `tool/code-dispatch`)."""

    name: str
    arguments: Any  # as logged (parsed JSON)
    is_error: bool
    output: tuple[ContentBlock, ...] | None  # None until it finished


@dataclass(frozen=True, slots=True)
class ToolFacts:
    name: str  # the wire name; empty for a result with no logged call
    call_id: str | None
    arguments: Any  # as logged: a JSON string, normally
    outcome: ToolOutcome
    result_id: str | None  # the result message's id (kept by a pruned copy)
    # the result's content (its tool-result block's); None: no result, or one whose message holds nothing
    result: tuple[ContentBlock, ...] | None
    error_name: Any  # the result's `error.name`, when it logged an error
    error_code: Any  # its `error.code` as logged (a string, normally); None when absent
    duration_ms: int | None
    subcalls: tuple[SubcallFacts, ...]
    notes: tuple[ToolNote, ...]  # hooks, approvals and prunings, in log order
    # the session a subagent call names (its `subagent_id` argument, or the id its result says it started)
    child_session: str | None = None
    # the result's `meta` as logged: what dsh's host derives a result's card from (a search's matches, a diff)
    result_meta: Any = None

    @property
    def pruned(self) -> PrunedAt | None:
        """The latest pruning: what the model read instead of the result from then on."""
        return next((n for n in reversed(self.notes) if isinstance(n, PrunedAt)), None)


@dataclass(frozen=True, slots=True)
class CompactionFacts:
    """A compaction marker's facts (docs/format.md §5.5, §5.6)."""

    items: int | None  # how many history items it shadowed
    tokens: Any  # `shadowedTokenCount` as logged; None when absent
    summary: str | None  # the summary's text (Markdown)
    checkpoint_id: str | None  # the checkpoint a /compact marker stands for


@dataclass(frozen=True, slots=True)
class CommandFacts:
    name: str
    args: Any
    outcome: CommandOutcome
    output: str
    compaction: CompactionFacts | None = None  # a /compact command that produced a checkpoint


@dataclass(frozen=True, slots=True)
class RetryFacts:
    retry: Any
    max_retries: Any  # None when absent (no limit)
    delay_ms: Any  # None when absent
    failure_message: str
    failure_code: str
    streamed: str  # what the failed attempt streamed
    outcome: RetryOutcome


@dataclass(frozen=True, slots=True)
class TurnStopFacts:
    """A turn that ended in an error or at the output token limit."""

    reason: Literal["error", "max-tokens"]
    message: str
    code: Any


@dataclass(frozen=True, slots=True)
class BoundaryFacts:
    """A turn or step boundary."""

    number: Any  # the turn or step number as logged
    duration_ms: int | None
    outcome: str | None  # a turn's end reason (`open` while it has none); None for a step
    usage: UsageCounts = ()  # a step whose message is empty and streamed nothing shows its usage here
    time: int | None = None  # wall clock (epoch ms) of its start, when the log carries one (`wall_clock`)


@dataclass(frozen=True, slots=True)
class EventFacts:
    """Any other event, shown compact with its JSON (`event`, `unknown`)."""

    type: str
    fields: tuple[tuple[str, str | int | float], ...]  # its scalar data fields
    event: Mapping[str, Any]  # the event as stored (after dsh's upgrades)
    bookkeeping: bool  # the harness's bookkeeping, not conversation (`model.rules.BOOKKEEPING_TYPES`)


@dataclass(frozen=True, slots=True)
class FindingFacts:
    """A diagnostic where it lies, with the record it could not read."""

    diagnostic: Diagnostic
    record: TailRecord | None
    text: str  # the record's bytes, decoded with replacement characters


RowFacts = (
    MessageFacts
    | AssistantFacts
    | StreamFacts
    | ToolFacts
    | CommandFacts
    | CompactionFacts
    | RetryFacts
    | TurnStopFacts
    | BoundaryFacts
    | EventFacts
    | FindingFacts
)


def reports_error(facts: RowFacts) -> bool:
    """Whether the row reports a failure. The page marks exactly these rows with a red dot and
    *errors only* finds exactly these: a failed tool call or command, a failed turn, an error finding.
    A call that was stopped, a retried model request or a token limit is not a failure."""
    if isinstance(facts, ToolFacts | CommandFacts):
        return facts.outcome == "error"
    if isinstance(facts, TurnStopFacts):
        return facts.reason == "error"
    if isinstance(facts, FindingFacts):
        return facts.diagnostic.severity == "error"
    return False


# the only rows that can report a failure (`reports_error`): their facts are all a count needs to build
MAY_FAIL: frozenset[RowKind] = frozenset({"tool-call", "command", "manual-compaction", "turn-error", "diagnostic"})


def error_count(log: SessionLog) -> int:
    """Rows that report a failure, the rows the session page marks with a red dot."""
    readable, rows = transcript_rows(log)
    return sum(1 for row in rows if row.kind in MAY_FAIL and reports_error(row_facts(readable, row)))


def reports_stop(facts: RowFacts) -> bool:
    """Whether the row reports something that stopped short without failing: a tool call stopped
    before or while it ran, a turn at its output token limit, a warning. The page marks these amber."""
    if isinstance(facts, ToolFacts):
        return facts.outcome == "stopped"
    if isinstance(facts, TurnStopFacts):
        return facts.reason == "max-tokens"
    if isinstance(facts, FindingFacts):
        return facts.diagnostic.severity == "warning"
    return False


def row_facts(log: ReadableLog, row: Row, *, words_only: bool = False) -> RowFacts:
    """The facts of `row`, whose events `log` reads. `words_only` leaves out what a row's words and its
    error mark never read (`session_search.shown_text`, `reports_error`), each a decode of more events: an
    answer's stream timing, and a boundary's end (its duration and outcome) and usage, left None and empty. A
    search index asks so, a view never. Each row kind has its facts below (`_BY_KIND`); a kind with none, or a
    row whose event lacks what its kind reads, is told as a plain event."""
    if row.diagnostic is not None:
        raw = row.tail.raw if row.tail is not None else None
        return FindingFacts(row.diagnostic, row.tail, raw.decode("utf-8", "replace") if raw else "")
    event = log.event(row.seq)
    at = _Row(log, row, event, words_only)
    facts = _BY_KIND[row.kind](at) if row.kind in _BY_KIND else None
    if facts is not None:
        return facts
    data = event.data if isinstance(event.data, dict) else {}  # shown as logged, every scalar field
    fields = tuple((k, v) for k, v in data.items() if isinstance(v, str | int | float) and not isinstance(v, bool))
    return EventFacts(event.type, fields, event.raw, event.type in BOOKKEEPING_TYPES)


@dataclass(frozen=True, slots=True)
class _Row:
    """A row whose facts are being read: its log, the row, its event, and whether only its words are asked for."""

    log: ReadableLog
    row: Row
    event: Event
    words_only: bool

    @property
    def payload(self) -> Payload | None:
        return self.event.payload


def _message_facts(at: _Row) -> RowFacts | None:
    if at.event.message is None:
        return None
    recall = at.row.link("recall")
    said = wall_clock(at.event.time) if at.row.kind != "context" else None  # docs/ui.md §5.1: a bubble's clock
    return MessageFacts(at.event.message, at.log.event(recall[0]).message if recall else None, said)


def _assistant_facts(at: _Row) -> RowFacts | None:
    event = at.event
    if event.message is None:
        return None
    payload = at.payload if isinstance(at.payload, AssistantMessage) else AssistantMessage()
    usage = usage_counts(payload.usage)
    chunks = at.row.link("chunks")
    timing = None if at.words_only else stream_timing(at.log, chunks, event, dict(usage).get("outputTokens"))
    return AssistantFacts(event.message, payload.interrupted is True, usage, wall_clock(event.time), timing)


def _stream_facts(at: _Row) -> RowFacts:
    return StreamFacts(stream_text(at.log, at.row.link("chunks")), _logged_usage(at.log, at.row.link("assistant")))


def _stop_facts(at: _Row) -> RowFacts:
    reason = at.payload.reason if isinstance(at.payload, TurnEnd) else None
    error = failure_of(reason.error if reason is not None else None)
    return TurnStopFacts("error" if at.row.kind == "turn-error" else "max-tokens", error.message or "", error.code)


def _turn_facts(at: _Row) -> RowFacts:
    event = at.event
    turn = at.payload.turn if isinstance(at.payload, TurnStart) else None
    if at.words_only:
        return BoundaryFacts(turn, None, None, time=wall_clock(event.time))
    end = _first(at.log, at.row.link("end"))
    reason = end.payload.reason if end is not None and isinstance(end.payload, TurnEnd) else None
    outcome = reason.kind if reason is not None else None
    return BoundaryFacts(
        turn,
        _duration(at.log, event, end),
        outcome or ("open" if end is None else None),
        time=wall_clock(event.time),
    )


def _step_facts(at: _Row) -> RowFacts:
    event = at.event
    step = at.payload.step if isinstance(at.payload, Step) else None
    if at.words_only:
        return BoundaryFacts(step, None, None, time=wall_clock(event.time))
    end = _first(at.log, at.row.link("end"))
    usage = _logged_usage(at.log, at.row.link("usage-only"))
    return BoundaryFacts(step, _duration(at.log, event, end), None, usage, wall_clock(event.time))


_BY_KIND: dict[RowKind, Callable[[_Row], RowFacts | None]] = {
    "user": _message_facts,
    "steering": _message_facts,
    "context": _message_facts,
    "assistant-step": _assistant_facts,
    "partial-stream": _stream_facts,
    "tool-call": lambda at: _tool(at.log, at.row, at.event),
    "command": lambda at: _command(at.log, at.row, at.payload),
    "manual-compaction": lambda at: _command(at.log, at.row, at.payload),
    "compaction": lambda at: _compaction(at.log, at.row),
    "model-retry": lambda at: _retry(at.log, at.row, at.payload),
    "turn-error": _stop_facts,
    "turn-max-tokens": _stop_facts,
    "turn": _turn_facts,
    "step": _step_facts,
}


def wall_clock(time: int) -> int | None:
    """An event's `time` as a wall clock, or None when the log carries none: a fixture written without
    times reads as 0 (docs/format.md §1.5), and no dsh ran before 1970."""
    return time if time > 0 else None


def elapsed(start: int, end: int | None) -> int | None:
    """How long something took, the one rule every duration follows (a row's, a step's, a timeline span's):
    end minus start; None while it is open (no end), in a log without times, and when the clock ran backwards
    (a session resumed on a machine whose clock is behind: never a negative duration)."""
    if end is None or wall_clock(start) is None or end < start:
        return None
    return end - start


def stored_end(log: ReadableLog, end: Event | None) -> int | None:
    """The time of the event that ended something, when the log stored it: a crash closer ends nothing, since
    its time is the last real event's (docs/decisions/0030-time-and-prices.md)."""
    return end.time if end is not None and end.seq not in log.log.closers else None


def stream_timing(log: ReadableLog, chunks: tuple[int, ...], message: Event, output_tokens: Any) -> StreamTiming | None:
    """Time to first token and tokens per second of the answer `message` closed, from the times of its
    chunks: None when it streamed no delta, or its request's start carries no time."""
    first = next((chunk for chunk in map(log.event, chunks) if _delta(chunk)), None)  # each decoded once
    if first is None:
        return None
    start = request_start(log.types, first.seq)
    started = log.event(start).time if start is not None else 0
    if wall_clock(started) is None or first.time < started:
        return None
    streaming = message.time - first.time
    tokens = output_tokens if isinstance(output_tokens, int) and not isinstance(output_tokens, bool) else None
    rate = tokens * 1000 / streaming if tokens and streaming > 0 else None
    return StreamTiming(first.time - started, rate)


def request_start(types: Sequence[str], seq: int) -> int | None:
    """The event that asked for the model call streaming at `seq`: its step's start, or the retry that asked
    again; None when a step or turn bound comes first (no request of this step is known)."""
    start = next((s for s in range(seq - 1, -1, -1) if types[s] in _LOOKING_BACK), None)
    return start if start is not None and types[start] in REQUEST_STARTS else None


def _delta(event: Event) -> StreamChunk | None:
    """The chunk an `assistant/chunk` event streamed, if it is a delta."""
    chunk = event.payload.chunk if isinstance(event.payload, AssistantChunk) else None
    return chunk if chunk is not None and chunk.type in STREAMED_CHUNKS else None


def usage_counts(usage: Any) -> UsageCounts:
    """The token counts a `usage` object logs, in dsh's order."""
    if not isinstance(usage, dict):
        return ()
    return tuple((name, usage[name]) for name in USAGE_NAMES if name in usage)


def stream_text(log: ReadableLog, chunks: tuple[int, ...]) -> str:
    """What a run of `assistant/chunk` events streamed, text, reasoning and tool-call arguments alike."""
    out: list[str] = []
    for event in map(log.event, chunks):
        if (chunk := _delta(event)) is not None:
            out.append(chunk.text if chunk.text is not None else chunk.arguments_delta or "")
    return "".join(out)


def _first(log: ReadableLog, seqs: tuple[int, ...]) -> Event | None:
    return log.event(seqs[0]) if seqs else None


def _duration(log: ReadableLog, start: Event, end: Event | None) -> int | None:
    return elapsed(start.time, stored_end(log, end))


def _logged_usage(log: ReadableLog, seqs: tuple[int, ...]) -> UsageCounts:
    """The usage an assistant message logged: a partial stream's, or a step's that hosts only usage."""
    message = _first(log, seqs)
    return (
        usage_counts(message.payload.usage)
        if message is not None and isinstance(message.payload, AssistantMessage)
        else ()
    )


def _result(message: Message | None) -> tuple[tuple[ContentBlock, ...] | None, bool]:
    """A result message's content (its tool-result block's), and whether it reports an error."""
    if message is None or not message.content:
        return None, False
    block = message.content[0]
    if not isinstance(block, ToolResultBlock):
        return (), False
    return block.content, block.is_error is True


def _tool(log: ReadableLog, row: Row, event: Event) -> ToolFacts:
    if isinstance(event.payload, ToolCall):
        name, arguments, call_id = event.payload.name or "", event.payload.arguments, event.payload.call_id
    elif event.type == "tool/call":  # a call whose data is no object
        name, arguments, call_id = "", "", None
    else:  # a result with no logged call
        name, arguments = "", ""
        call_id = event.message.source.get("callId") if event.message else None
    result = _first(log, row.link("result"))
    message = result.message if result is not None else None
    content, is_error = _result(message)
    logged = result.payload if result is not None and isinstance(result.payload, ToolResult) else ToolResult()
    error = logged.error or ToolError()
    error_code = error.code
    outcome: ToolOutcome
    if result is None:
        outcome = "running"
    elif error_code in STOPPED_CODES:
        outcome = "stopped"
    else:
        outcome = "error" if is_error or bool(error_code) else "ok"  # any code that says something is a failure
    notes: list[ToolNote] = [_note(log.event(seq)) for seq in row.link("hooks") + row.link("approvals")]
    notes += [PrunedAt(seq, _result(log.event(seq).message)[0]) for seq in row.link("pruned")]
    return ToolFacts(
        name=name,
        call_id=call_id,
        arguments=arguments,
        outcome=outcome,
        result_id=message.id if message is not None else None,
        result=content,
        error_name=error.name,
        error_code=error_code,
        duration_ms=_duration(log, event, result) if event.type == "tool/call" else None,
        subcalls=_subcalls(log, row.link("subcalls")),
        notes=tuple(notes),
        child_session=_child_session(name, arguments, content),
        result_meta=logged.meta,
    )


def subagent_child(name: str, arguments: Any, result: Message | None) -> str | None:
    """The session a subagent call names, from its call's arguments and its result message, as its tool row
    links it (the timeline's subagent spans)."""
    return _child_session(name, arguments, _result(result)[0])


def _child_session(name: str, arguments: Any, result: tuple[ContentBlock, ...] | None) -> str | None:
    """The session a subagent call names: its `subagent_id` argument (a message sent to it), else the id
    a `subagent…` tool's result says it started. A foreground child's result is its answer alone: None."""
    args = arguments
    if isinstance(arguments, str):
        try:  # parsed only when it may name one: every tool row's facts pass here
            args = parse_json(arguments)[0] if "subagent_id" in arguments else None
        except ValueError:  # arguments the model wrote that are not JSON name nothing
            args = None
    named = args.get("subagent_id") if isinstance(args, dict) else None
    if isinstance(named, str) and named:
        return named
    if not name.startswith("subagent") or not result:
        return None
    text = "".join(b.text for b in result if isinstance(b, TextBlock))
    found = _NAMED_CHILD.search(text)
    return found.group(1) if found else None


def _subcalls(log: ReadableLog, seqs: tuple[int, ...]) -> tuple[SubcallFacts, ...]:
    """Each sub-call once: its start names it, its end (with `isError`) gives its output."""
    found: dict[str, SubcallFacts] = {}
    for seq in seqs:
        sub = log.event(seq).payload
        if not isinstance(sub, CodeDispatch):
            continue
        key = str(sub.sub_call_id)
        known = found.get(key) or SubcallFacts(sub.name or "", sub.arguments, False, None)
        if sub.is_error is not None:  # the end: it says whether the call failed, and its output
            content = tuple(block_from_json(b) for b in sub.content or ())
            known = SubcallFacts(known.name, known.arguments, sub.is_error, content)
        found[key] = known
    return tuple(found.values())


def _note(event: Event) -> ToolNote:
    """A hook or approval, as a note on the tool row it concerns."""
    payload = event.payload
    hook = payload if isinstance(payload, Hook) else Hook()
    if event.type == "hook/invoked":
        return HookInvoked(hook.point, hook.handler_id)
    if event.type == "hook/result":
        return HookResult(hook.point, hook.decision, hook.stderr_summary)
    if event.type == "approval/asked":
        asked = payload if isinstance(payload, ApprovalAskedData) else ApprovalAskedData()
        return ApprovalAsked(asked.reason if asked.reason is not None else asked.tool_name)
    return ApprovalDecided(payload.outcome if isinstance(payload, ApprovalDecidedData) else None)


def _command(log: ReadableLog, row: Row, payload: Payload | None) -> CommandFacts:
    run = payload if isinstance(payload, CommandRun) else CommandRun()
    done = _first(log, row.link("done"))
    said = done.payload if done is not None and isinstance(done.payload, CommandDone) else CommandDone()
    outcome: CommandOutcome = "running" if done is None else ("error" if said.kind == "error" else "ok")
    compaction = _compaction(log, row) if row.kind == "manual-compaction" else None
    return CommandFacts(run.name if run.name is not None else "Command", run.args, outcome, said.text or "", compaction)


def _compaction(log: ReadableLog, row: Row) -> CompactionFacts:
    checkpoint = _first(log, row.link("checkpoint"))  # a /compact command's marker: the row anchors at the command
    checkpoint_id = checkpoint.message.id if checkpoint is not None and checkpoint.message is not None else None
    summary = _first(log, row.link("summary"))
    data = summary.payload if summary is not None and isinstance(summary.payload, Compaction) else None
    if data is None:
        return CompactionFacts(None, None, None, checkpoint_id)
    seqs = data.shadowed_seqs
    text = "".join(
        str(b.get("text", "")) for b in data.summary or () if isinstance(b, dict) and b.get("type") == "text"
    )
    return CompactionFacts(
        len(seqs) if seqs is not None else None, data.shadowed_token_count, text or None, checkpoint_id
    )


def _retry(log: ReadableLog, row: Row, payload: Payload | None) -> RetryFacts:
    retry = payload if isinstance(payload, Retry) else Retry()
    failure = failure_of(retry.failure)
    return RetryFacts(
        retry=retry.retry,
        max_retries=retry.max_retries,
        delay_ms=retry.delay_ms,
        failure_message=failure.message or "",
        failure_code=str(failure.code) if failure.code is not None else "",
        streamed=stream_text(log, row.link("chunks")),
        outcome=_retry_outcome(log, row),
    )


def _retry_outcome(log: ReadableLog, row: Row) -> RetryOutcome:
    """Retried once it started; cancelled once its turn ended first (an open final turn is ended
    by the crash closers, so a log that stops before the retry cancels it too); else waiting."""
    if row.link("started"):
        return "ok"
    try:
        log.types.index("turn/end", row.seq + 1)
    except ValueError:
        return "waiting"
    return "cancelled"
