"""The model calls of each step (docs/format.md §5.4, docs/decisions/0004).

A step may call the model several times: a failed attempt, its retries, a
compaction between them. Only the call that succeeded gets an
`assistant/message`, which cites its chunks; the others are known from their
chunk runs, their `llm/retry` notices, or both. What a call was sent is the
surface just before its first chunk (or, for a call that streamed nothing,
just before the event that reports it).

The index is built from event types and surface ops, decoding only
`step/start` and `assistant/message` events, so it stays cheap for long logs;
callers keep it per file version (`RequestIndex`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..model.payloads import AssistantMessage, decode_payload, payload_as
from ..model.payloads import Step as StepData
from ..model.rules import SURFACE_TYPES, decode_source_event_seqs
from .session import SessionLog
from .spend.tokens import Usage, usage_from

# Events that cannot fall inside one streamed call: each closes the chunk run
# before it, so chunks after it belong to a new call.
_CALL_BOUNDARIES = SURFACE_TYPES | {
    "llm/retry",
    "llm/retry-started",
    "request/header",
    "request/context",
    "compaction/start",
    "compaction/summary",
    "compaction/end",
    "compaction/prune",
}


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One call to the model inside a step."""

    number: int  # 1-based, in log order within the step
    request_at: int  # the model read the surface as it stood after this seq
    first_chunk: int | None
    last_chunk: int | None
    chunk_count: int
    retry: int | None  # the `llm/retry` that gave this call up
    message: int | None  # the `assistant/message` this call produced
    usage: Usage | None  # what that message reports


@dataclass(frozen=True, slots=True)
class Step:
    key: str  # "turn.step", plus "~n" when a log repeats the pair
    turn: int
    step: int
    start: int  # the `step/start` seq
    end: int  # the last seq of the step's window (its `step/end` when logged)
    calls: tuple[ModelCall, ...]

    @property
    def message(self) -> int | None:
        return next((c.message for c in self.calls if c.message is not None), None)

    @property
    def answered(self) -> ModelCall | None:
        """The call the step's `assistant/message` answers, else its last call."""
        return next((c for c in self.calls if c.message is not None), self.calls[-1] if self.calls else None)


@dataclass(frozen=True, slots=True)
class CallIndex:
    steps: tuple[Step, ...]
    by_key: dict[str, int]  # step key → index in `steps`

    def step(self, key: str) -> Step | None:
        i = self.by_key.get(key)
        return self.steps[i] if i is not None else None

    def ordered_calls(self) -> list[tuple[Step, ModelCall]]:
        return [(s, c) for s in self.steps for c in s.calls]

    def previous_call(self, step: Step, call: ModelCall) -> tuple[Step, ModelCall] | None:
        """The model call made just before `call`, in this step or an earlier one."""
        if call.number > 1:
            return step, step.calls[call.number - 2]
        i = self.by_key[step.key]
        for earlier in reversed(self.steps[:i]):
            if earlier.calls:
                return earlier, earlier.calls[-1]
        return None


@dataclass(slots=True)
class _Draft:
    request_at: int
    first_chunk: int | None = None
    last_chunk: int | None = None
    chunk_count: int = 0
    retry: int | None = None
    message: int | None = None
    usage: Usage | None = None

    def holds(self, seq: int) -> bool:
        return (
            self.first_chunk is not None and self.last_chunk is not None and self.first_chunk <= seq <= self.last_chunk
        )


@dataclass(slots=True)
class _Splitter:
    drafts: list[_Draft] = field(default_factory=list)
    open: _Draft | None = None  # the chunk run in progress

    def chunk(self, seq: int) -> None:
        if self.open is None:
            self.open = _Draft(request_at=seq - 1, first_chunk=seq)
            self.drafts.append(self.open)
        self.open.last_chunk = seq
        self.open.chunk_count += 1

    def retry(self, seq: int) -> None:
        self.open = None
        last = self.drafts[-1] if self.drafts else None
        if last is not None and last.retry is None and last.message is None:
            last.retry = seq
        else:  # a call that failed before streaming anything
            self.drafts.append(_Draft(request_at=seq - 1, retry=seq))

    def message(self, seq: int, raw: dict[str, Any]) -> None:
        cited = _cited(raw)
        draft = None
        if cited:
            first = min(cited)
            draft = next((d for d in self.drafts if d.message is None and d.holds(first)), None)
        if draft is None and cited is None:
            draft = self.open  # no citations recorded: the run right before it
        if draft is None and cited and self.open is not None:
            draft = self.open  # citations outside the step (a trimmed log): trust position
        if draft is None:  # `[]`: the provider streamed nothing
            draft = _Draft(request_at=seq - 1)
            self.drafts.append(draft)
        draft.message = seq
        draft.usage = usage_from(
            payload_as(decode_payload("assistant/message", raw.get("data")), AssistantMessage).usage
        )
        self.open = None


def _cited(raw: dict[str, Any]) -> list[int] | None:
    if "sourceEventSeqs" not in raw:
        return None
    try:
        return decode_source_event_seqs(raw["sourceEventSeqs"])
    except ValueError:
        return None


def _split(log: SessionLog, start: int, end: int) -> tuple[ModelCall, ...]:
    splitter = _Splitter()
    types = log.types
    for seq in range(start, end + 1):
        kind = types[seq]
        if kind == "assistant/chunk":
            splitter.chunk(seq)
        elif kind == "llm/retry":
            splitter.retry(seq)
        elif kind == "assistant/message" and log.surface_ops.get(seq) == "append":
            splitter.message(seq, log.raw_event(seq))  # a replace is a rewrite, not a call's answer
        elif kind in _CALL_BOUNDARIES:
            splitter.open = None
    return tuple(
        ModelCall(i + 1, d.request_at, d.first_chunk, d.last_chunk, d.chunk_count, d.retry, d.message, d.usage)
        for i, d in enumerate(splitter.drafts)
    )


def step_key(turn: int, step: int, occurrence: int) -> str:
    """A step's key: `turn.step`, and `~n` for the n-th `step/start` of a pair the log repeats
    (a resumed or replayed turn), so every step keeps its own model view. The transcript keys
    its rows' step links the same way."""
    return f"{turn}.{step}" + (f"~{occurrence}" if occurrence > 1 else "")


def turn_step(data: Any) -> tuple[int, int] | None:
    """The turn and step a `step/start`'s stored data names, when it names both."""
    bound = payload_as(decode_payload("step/start", data), StepData)
    return (bound.turn, bound.step) if bound.turn is not None and bound.step is not None else None


class StepBounds(msgspec.Struct, frozen=True, gc=False):
    """Where one step lies in the log: its key (`turn.step`, `~n` for a repeated pair) and its events. (A Struct:
    a long log has thousands, made each time its steps are keyed.)"""

    key: str
    turn: int
    step: int
    start: int  # its step/start
    end: int  # its step/end, or the event before the turn/end of a turn that ended without closing it


_BOUNDS = frozenset({"step/start", "step/end", "turn/end"})


def step_bounds(log: SessionLog) -> list[StepBounds]:
    """Every step of the log, keyed and bounded, in log order (what model views and comparisons are keyed by)."""
    types = log.types
    kept = {seq: (turn, step) for seq, turn, step in log.step_pairs()}
    marks = [(seq, kind) for seq, kind in enumerate(types) if kind in _BOUNDS]  # one pass over a long log's types
    unkept = [seq for seq, kind in marks if kind == "step/start" and seq not in kept]
    closes = [seq for seq, kind in marks if kind != "step/start"]
    for seq, event in zip(unkept, log.raw_events_at(unkept), strict=True):
        if (pair := turn_step(event.get("data"))) is not None:
            kept[seq] = pair
    starts = sorted((seq, *pair) for seq, pair in kept.items())  # (seq, turn, step)
    out: list[StepBounds] = []
    seen: dict[tuple[int, int], int] = {}
    for i, (start, turn, step) in enumerate(starts):
        limit = starts[i + 1][0] - 1 if i + 1 < len(starts) else len(types) - 1
        c = bisect_right(closes, start)
        end = closes[c] if c < len(closes) and closes[c] <= limit else limit
        if types[end] == "turn/end":
            end = max(start, end - 1)  # a turn that ended without closing its step
        seen[(turn, step)] = seen.get((turn, step), 0) + 1
        out.append(StepBounds(step_key(turn, step, seen[(turn, step)]), turn, step, start, end))
    return out


def call_index(log: SessionLog) -> CallIndex:
    """Every step of the log with its model calls, in log order."""
    steps = tuple(Step(b.key, b.turn, b.step, b.start, b.end, _split(log, b.start, b.end)) for b in step_bounds(log))
    return CallIndex(steps, {step.key: i for i, step in enumerate(steps)})
