"""The context budget across a session: tokens per step and what shrank the context.

Per step, the counts are the ones its `assistant/message` reports for the call
that answered; between steps, every surface replace is a point where the
context was rewritten (a compaction checkpoint, a pruned tool result).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.payloads import RequestContext, payload_as
from .replacements import Replacement, replacement
from .requests import RequestIndex
from .session import SessionLog
from .spend.tokens import Usage


@dataclass(frozen=True, slots=True)
class StepBudget:
    key: str
    turn: int
    step: int
    calls: int
    request_at: int | None  # the answered call's request point; None for a step without a call
    messages: int  # model-visible messages in that request
    usage: Usage | None
    answered: bool  # a call of this step produced an `assistant/message`


@dataclass(frozen=True, slots=True)
class Shrink:
    """A replace between two requests, placed before the first step that read its result."""

    replacement: Replacement
    before_step: int  # index into Budget.steps; len(steps) when no later step read it


@dataclass(frozen=True, slots=True)
class Budget:
    steps: tuple[StepBudget, ...]
    shrinks: tuple[Shrink, ...]
    context_window: int | None  # the latest route's window, when logged

    @property
    def peak(self) -> int:
        return max((max(s.usage.context, s.usage.output) for s in self.steps if s.usage), default=0)


def session_budget(log: SessionLog, requests: RequestIndex) -> Budget:
    """Tokens per step, in log order, and the replaces between the steps' requests."""
    index = requests.calls
    pending = sorted({s.answered.request_at for s in index.steps if s.answered is not None})
    counts: dict[int, int] = {}
    size = 0
    i = 0
    for seq, op in log.surface_ops.items():  # one fold, counting instead of listing
        while i < len(pending) and pending[i] < seq:
            counts[pending[i]] = size
            i += 1
        shadowed = log.shadowed_by.get(seq, ()) if op != "append" else ()
        size -= sum(1 for s in shadowed if s not in log.empty_assistant)
        size += 0 if seq in log.empty_assistant else 1
    for point in pending[i:]:
        counts[point] = size
    steps = []
    for step in index.steps:
        answered = step.answered
        at = answered.request_at if answered is not None else None
        steps.append(
            StepBudget(
                step.key,
                step.turn,
                step.step,
                len(step.calls),
                at,
                counts.get(at, 0) if at is not None else 0,
                answered.usage if answered is not None else None,
                step.message is not None,
            )
        )
    shrinks = []
    for seq in sorted(log.shadowed_by):
        replaced = replacement(log, seq)
        if replaced is not None:
            after = next(
                (n for n, s in enumerate(steps) if s.request_at is not None and s.request_at >= seq), len(steps)
            )
            shrinks.append(Shrink(replaced, after))
    route = requests.types.last("request/context", log.event_count - 1)
    window = None
    if route is not None:
        window = payload_as(log.event(route).payload, RequestContext).context_window
    return Budget(tuple(steps), tuple(shrinks), window)
