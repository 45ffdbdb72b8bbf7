"""Where a session's time went: spans worked out from the times its events carry (docs/format.md §2.3 `time`).

A span is one thing that took time: a model call (waiting for its first token, then decoding), a tool run
(call to result), a command the person ran, a wait for the person (an approval asked to answered, a question
tool), a compaction, the idle time between turns, a subagent. Each is read from the log's own events and
nothing else (docs/decisions/0030-time-and-prices.md).

Three rules keep the figures honest. Only stored events close a span: a log cut mid-step leaves its span open
(no end, no duration, never the zero the crash closers' reused time would give). An end before its start (a
session resumed on a machine whose clock is behind) is told as a clock that ran backwards, never as a negative
duration. A log without times (a fixture, `time` 0) has no spans at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

from ...model.payloads import (
    ApprovalAsked,
    ApprovalDecided,
    AssistantChunk,
    CommandDone,
    CommandRun,
    Compaction,
    Payload,
    ToolCall,
    WorkflowAgent,
    payload_as,
)
from ...model.payloads import Step as StepData
from ..calls import CallIndex, ModelCall, Step, call_index
from ..row_facts import STREAMED_CHUNKS, elapsed, request_start, subagent_child, wall_clock
from ..session import SessionLog

SpanKind = Literal["model", "tool", "command", "wait", "compaction", "idle", "subagent"]
SPAN_KINDS: tuple[SpanKind, ...] = ("model", "tool", "command", "wait", "compaction", "idle", "subagent")
SpanState = Literal["closed", "open", "backwards"]

# Tools whose run is the model waiting for the person, not work: dsh's question tool.
QUESTION_TOOLS = frozenset({"ask_user_question"})
SUBAGENT_PREFIX = "subagent"  # dsh's subagent tools (`subagent`, `subagent_send`, …) run a child session


@dataclass(frozen=True, slots=True)
class Span:
    """One stretch of time. `seq` is the event it is read from (the row it opens); `end` None while open."""

    kind: SpanKind
    seq: int
    start: int  # epoch ms
    end: int | None  # epoch ms; None for an open span
    label: str  # what ran: a model, a tool's or command's name, an approval's tool
    step: str | None = None  # the step key it happened in
    first_token: int | None = None  # a model call's first streamed delta, epoch ms
    child: str | None = None  # the subagent session it ran, when the log names it

    @property
    def state(self) -> SpanState:
        if self.end is None:
            return "open"
        return "backwards" if self.end < self.start else "closed"

    @property
    def duration_ms(self) -> int | None:
        """End minus start; None for an open span or a clock that ran backwards (the rows' rule: `elapsed`)."""
        return elapsed(self.start, self.end)

    @property
    def ttft_ms(self) -> int | None:
        """A model call's wait for its first token; None when it streamed none or its clock ran backwards."""
        return elapsed(self.start, self.first_token)

    @property
    def decoding_ms(self) -> int | None:
        """A model call's time from its first token to its answer: its duration less its wait."""
        ttft, took = self.ttft_ms, self.duration_ms
        return took - ttft if ttft is not None and took is not None and took >= ttft else None


@dataclass(frozen=True, slots=True)
class StepTime:
    key: str
    seq: int  # its step/start
    start: int
    end: int | None  # its step/end's time; None while open
    model_ms: int  # its model calls' closed durations summed
    ttft_ms: int | None  # its answered call's

    @property
    def duration_ms(self) -> int | None:
        return elapsed(self.start, self.end)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "seq": self.seq,
            "durationMs": self.duration_ms,
            "modelMs": self.model_ms,
            "ttftMs": self.ttft_ms,
            "open": self.end is None,
        }


@dataclass(frozen=True, slots=True)
class Timing:
    """A session's spans in start order, its steps, and its wall clock."""

    spans: tuple[Span, ...]
    steps: tuple[StepTime, ...]
    first: int | None  # the first timed event's time
    last: int | None  # the last stored event's time
    wall_ms: int | None  # the time the log covers, a backwards jump counted as nothing
    backwards: int  # how many times the clock ran backwards between consecutive events

    def total(self, kind: SpanKind) -> int:
        """The closed durations of `kind`'s spans, summed."""
        return sum(s.duration_ms or 0 for s in self.spans if s.kind == kind)

    def slowest(self, kind: SpanKind, count: int) -> list[Span]:
        closed = (s for s in self.spans if s.kind == kind and s.duration_ms is not None)
        return sorted(closed, key=lambda s: (-(s.duration_ms or 0), s.seq))[:count]

    def slowest_steps(self, count: int) -> list[StepTime]:
        closed = (s for s in self.steps if s.duration_ms is not None)
        return sorted(closed, key=lambda s: (-(s.duration_ms or 0), s.seq))[:count]

    def totals_json(self) -> dict[str, Any]:
        """The session's figures: its wall time, each kind's time summed, clock jumps and spans still open."""
        return {
            "wallMs": self.wall_ms,
            **{f"{kind}Ms": self.total(kind) for kind in SPAN_KINDS},
            "clockBackwards": self.backwards,
            "openSpans": sum(1 for s in self.spans if s.end is None),
        }

    def durations_json(self) -> dict[str, Any]:
        """`durations` as `check --json` and the session twin give them: the totals, and each step's."""
        return {**self.totals_json(), "steps": [s.to_json() for s in self.steps]}


NO_TIMING = Timing((), (), None, None, None, 0)


def session_wall(log: SessionLog) -> tuple[int | None, int]:
    """The wall time alone (as `Timing.wall_ms`) and how often the clock ran backwards: what a list of many
    sessions shows, without working out every span."""
    if log.stored_count == 0 or wall_clock(log.event(0).time) is None:
        return None, 0
    _, _, wall, backwards = _Reader(log, log.stored_count).clock()
    return wall, backwards


def session_timing(log: SessionLog, calls: CallIndex | None = None) -> Timing:
    """Every span of `log`, read from its stored events (the crash closers close nothing: see the module);
    `calls` its model calls when the caller keeps them."""
    stored = log.stored_count
    if stored == 0 or wall_clock(log.event(0).time) is None:
        return NO_TIMING
    reader = _Reader(log, stored)
    steps = (calls or call_index(log)).steps
    spans = [*_model_spans(reader, steps), *reader.paired_spans()]
    spans.sort(key=lambda s: (s.start, s.seq))
    models: dict[str | None, list[Span]] = {}  # each step's model spans, in order: one pass, not one per step
    for span in spans:
        if span.kind == "model":
            models.setdefault(span.step, []).append(span)
    step_times = tuple(_step_time(reader, step, models.get(step.key, [])) for step in steps if step.start < stored)
    first, last, wall, backwards = reader.clock()
    return Timing(tuple(spans), step_times, first, last, wall, backwards)


class _Reader:
    """The stored events' times, each decoded once, and the spans that pair an opening event with its close."""

    def __init__(self, log: SessionLog, stored: int) -> None:
        self.log = log
        self.stored = stored
        self.types = log.types

    def time(self, seq: int) -> int:
        return self.log.event(seq).time

    def payload(self, seq: int) -> Payload | None:
        return self.log.event(seq).payload

    def clock(self) -> tuple[int, int, int, int]:
        """First and last time, the wall time forward jumps add up to, and how many jumps went backwards.
        Only step and turn bounds are read: enough to see a resumed session's clock, cheap on a long log."""
        marks = [0, *(s for s in range(1, self.stored) if self.types[s] in _CLOCK_MARKS), self.stored - 1]
        times = [self.time(s) for s in dict.fromkeys(marks)]
        gaps = [b - a for a, b in pairwise(times)]
        return times[0], times[-1], sum(g for g in gaps if g > 0), sum(1 for g in gaps if g < 0)

    def paired_spans(self) -> Iterator[Span]:
        """Tool runs, commands, approvals, compactions, workflow agents and idle time: each an opening event
        matched to its close by id, or the turn/end that ended it, or open."""
        opened: dict[tuple[str, str], _Opened] = {}  # (family, id) → what opened it
        step: str | None = None
        steps_seen: dict[tuple[int, int], int] = {}
        last_turn_end: int | None = None
        for seq in range(self.stored):
            kind = self.types[seq]
            if kind == "step/start":
                step = _step_key(payload_as(self.payload(seq), StepData), steps_seen)
            elif kind == "turn/start" and last_turn_end is not None:
                # opens the turn the person came back with; timed from the turn before it ended
                yield Span("idle", seq, self.time(last_turn_end), self.time(seq), "")
                last_turn_end = None
            elif kind == "turn/end":
                yield from self._ended_by_turn(opened, seq)
                last_turn_end, step = seq, None
            opening = _OPENING.get(kind)
            if opening is not None:
                key, label, child = opening(self.payload(seq))
                if key is not None:
                    opened[(_FAMILY[kind], key)] = _Opened(seq, label, child, step)
                continue
            closing = _CLOSING.get(kind)
            if closing is not None:
                key = closing(self, seq)
                found = opened.pop((_FAMILY[kind], key), None) if key is not None else None
                if found is not None:
                    yield self._span(kind, self._named_child(found, seq), self.time(seq))
        for (family, _), found in opened.items():
            yield self._span(_FAMILY_CLOSER[family], found, None)

    def _ended_by_turn(self, opened: dict[tuple[str, str], _Opened], seq: int) -> Iterator[Span]:
        """What the turn's end ended without closing (a tool call cancelled with its turn): closed there.
        A standalone compaction (between turns) is not the turn's."""
        for key in [k for k in opened if k[0] != "compaction"]:
            yield self._span(_FAMILY_CLOSER[key[0]], opened.pop(key), self.time(seq))

    def _named_child(self, opened: _Opened, result: int) -> _Opened:
        """A subagent tool's run with the child session its call or result names (as its tool row links it)."""
        if _tool_kind(opened.label) != "subagent" or self.types[result] != "tool/result":
            return opened
        call, answer = self.log.event(opened.seq).payload, self.log.event(result).message
        arguments = call.arguments if isinstance(call, ToolCall) else None
        named = subagent_child(opened.label, arguments, answer)
        return opened if named is None else _Opened(opened.seq, opened.label, named, opened.step)

    def _span(self, closer: str, opened: _Opened, end: int | None) -> Span:
        kind = _SPAN_KIND[closer](opened.label)
        return Span(kind, opened.seq, self.time(opened.seq), end, opened.label, opened.step, child=opened.child)


@dataclass(frozen=True, slots=True)
class _Opened:
    seq: int
    label: str
    child: str | None
    step: str | None


_CLOCK_MARKS = frozenset({"turn/start", "turn/end", "step/start", "step/end", "session/end-seed"})


def _step_key(data: StepData, seen: dict[tuple[int, int], int]) -> str | None:
    turn, step = data.turn, data.step
    if turn is None or step is None:
        return None
    seen[(turn, step)] = seen.get((turn, step), 0) + 1
    return f"{turn}.{step}" + (f"~{seen[(turn, step)]}" if seen[(turn, step)] > 1 else "")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _tool_opening(payload: Payload | None) -> tuple[str | None, str, str | None]:
    call = payload_as(payload, ToolCall)
    return _text(call.call_id), call.name or "", None


def _approval_opening(payload: Payload | None) -> tuple[str | None, str, str | None]:
    asked = payload_as(payload, ApprovalAsked)
    return _text(asked.id), asked.tool_name or "", None


def _command_opening(payload: Payload | None) -> tuple[str | None, str, str | None]:
    run = payload_as(payload, CommandRun)
    return _text(run.command_id), "/" + (run.name or ""), None


def _compaction_opening(payload: Payload | None) -> tuple[str | None, str, str | None]:
    return _text(payload_as(payload, Compaction).compaction_id), "", None


def _agent_opening(payload: Payload | None) -> tuple[str | None, str, str | None]:
    agent = payload_as(payload, WorkflowAgent)
    return _agent_key_of(agent), agent.label or "", _text(agent.child_id)


def _agent_key_of(agent: WorkflowAgent) -> str | None:
    run = _text(agent.run_id)
    return f"{run}/{agent.seq}" if run is not None and agent.seq is not None else None


def _result_key(reader: _Reader, seq: int) -> str | None:
    return reader.log.result_calls.get(seq)


def _approval_key(reader: _Reader, seq: int) -> str | None:
    return _text(payload_as(reader.payload(seq), ApprovalDecided).id)


def _command_key(reader: _Reader, seq: int) -> str | None:
    return _text(payload_as(reader.payload(seq), CommandDone).command_id)


def _compaction_key(reader: _Reader, seq: int) -> str | None:
    return _text(payload_as(reader.payload(seq), Compaction).compaction_id)


def _agent_key(reader: _Reader, seq: int) -> str | None:
    return _agent_key_of(payload_as(reader.payload(seq), WorkflowAgent))


def _tool_kind(name: str) -> SpanKind:
    if name in QUESTION_TOOLS:
        return "wait"
    return "subagent" if name.startswith(SUBAGENT_PREFIX) else "tool"


_OPENING = {
    "tool/call": _tool_opening,
    "approval/asked": _approval_opening,
    "command/run": _command_opening,
    "compaction/start": _compaction_opening,
    "tool-workflow/agent-start": _agent_opening,
}
_CLOSING = {
    "tool/result": _result_key,
    "approval/decided": _approval_key,
    "command/done": _command_key,
    "compaction/end": _compaction_key,
    "tool-workflow/agent-end": _agent_key,
}
_FAMILY = {
    "tool/call": "tool",
    "tool/result": "tool",
    "approval/asked": "approval",
    "approval/decided": "approval",
    "command/run": "command",
    "command/done": "command",
    "compaction/start": "compaction",
    "compaction/end": "compaction",
    "tool-workflow/agent-start": "agent",
    "tool-workflow/agent-end": "agent",
}
_FAMILY_CLOSER = {
    "tool": "tool/result",
    "approval": "approval/decided",
    "command": "command/done",
    "compaction": "compaction/end",
    "agent": "tool-workflow/agent-end",
}
_SPAN_KIND: dict[str, Any] = {
    "tool/result": _tool_kind,
    "approval/decided": lambda _: "wait",
    "command/done": lambda _: "command",
    "compaction/end": lambda _: "compaction",
    "tool-workflow/agent-end": lambda _: "subagent",
}


# --- model calls ---------------------------------------------------------------------------------


def _model_spans(reader: _Reader, steps: tuple[Step, ...]) -> Iterator[Span]:
    for step in steps:
        for call in step.calls:
            span = _model_span(reader, step, call)
            if span is not None:
                yield span


def _model_span(reader: _Reader, step: Step, call: ModelCall) -> Span | None:
    """A call from its request (the step's start or the retry that asked again, as the row's stream timing
    reads it) to its answer, its retry notice or, cut short, nothing: open."""
    shown = next((s for s in (call.message, call.retry, call.first_chunk) if s is not None), None)
    if shown is None or shown >= reader.stored:
        return None
    asked = request_start(reader.types, call.first_chunk if call.first_chunk is not None else shown)
    asked = asked if asked is not None and asked >= step.start else step.start
    first = _first_delta(reader, call)
    closed_by = call.message if call.message is not None else call.retry
    if closed_by is None and _answered_later(reader, step, call):
        closed_by = call.last_chunk  # a stream that stopped without a message, then the step went on
    end = reader.time(closed_by) if closed_by is not None and closed_by < reader.stored else None
    return Span("model", shown, reader.time(asked), end, _model_label(reader, call), step.key, first)


def _first_delta(reader: _Reader, call: ModelCall) -> int | None:
    if call.first_chunk is None or call.last_chunk is None:
        return None
    for seq in range(call.first_chunk, min(call.last_chunk, reader.stored - 1) + 1):
        chunk = payload_as(reader.payload(seq), AssistantChunk).chunk
        if chunk is not None and chunk.type in STREAMED_CHUNKS:
            return reader.time(seq)
    return None


def _answered_later(reader: _Reader, step: Step, call: ModelCall) -> bool:
    """Whether anything stored follows the call's last chunk in its step: it stopped, not the log."""
    return call.last_chunk is not None and call.last_chunk < min(step.end, reader.stored - 1)


def _model_label(reader: _Reader, call: ModelCall) -> str:
    if call.message is None or call.message >= reader.stored:
        return ""
    source = reader.log.event(call.message).message
    model = source.source.get("model") if source is not None else None
    return model if isinstance(model, str) else ""


def _step_time(reader: _Reader, step: Step, mine: list[Span]) -> StepTime:
    """`mine`: the step's model spans, in order."""
    ended = step.end  # its step/end, else the turn/end that ended it unclosed
    if reader.types[ended] != "step/end" and ended + 1 < reader.stored and reader.types[ended + 1] == "turn/end":
        ended += 1
    closed = ended < reader.stored and reader.types[ended] in ("step/end", "turn/end")
    answered = next((s for s in mine if s.seq == step.message), mine[-1] if mine else None)
    return StepTime(
        step.key,
        step.start,
        reader.time(step.start),
        reader.time(ended) if closed else None,
        sum(s.duration_ms or 0 for s in mine),
        answered.ttft_ms if answered is not None else None,
    )
