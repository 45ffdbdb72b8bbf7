"""Token counts as dsh logs them (`TokenUsage`, docs/format.md §3.3)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...model.payloads import AssistantMessage, payload_as


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return int(value)


@dataclass(frozen=True, slots=True)
class Usage:
    input: int
    output: int
    cache_read: int | None
    cache_write: int | None
    reasoning: int | None

    @property
    def context(self) -> int:
        """Everything the request was billed as input: the three input counts are disjoint."""
        return self.input + (self.cache_read or 0) + (self.cache_write or 0)

    def to_json(self) -> dict[str, int | None]:
        return {
            "inputTokens": self.input,
            "outputTokens": self.output,
            "cacheReadTokens": self.cache_read,
            "cacheWriteTokens": self.cache_write,
            "reasoningTokens": self.reasoning,
            "contextTokens": self.context,
        }


def usage_from(value: Any) -> Usage | None:
    """A `TokenUsage` object, or None when the two required counts are not both there."""
    if not isinstance(value, Mapping):
        return None
    input_tokens, output_tokens = _count(value.get("inputTokens")), _count(value.get("outputTokens"))
    if input_tokens is None or output_tokens is None:
        return None
    return Usage(
        input_tokens,
        output_tokens,
        _count(value.get("cacheReadTokens")),
        _count(value.get("cacheWriteTokens")),
        _count(value.get("reasoningTokens")),
    )


def session_usage(log: Any) -> Usage | None:
    """The session's tokens: every answered call's usage summed (None when no call logged any)."""
    totals = [0, 0, 0, 0, 0]
    seen = False
    for seq, kind in enumerate(log.types):
        if kind != "assistant/message":
            continue
        usage = usage_from(payload_as(log.event(seq).payload, AssistantMessage).usage)
        if usage is None:
            continue
        seen = True
        for i, count in enumerate((usage.input, usage.output, usage.cache_read, usage.cache_write, usage.reasoning)):
            totals[i] += count or 0
    return Usage(*totals) if seen else None
