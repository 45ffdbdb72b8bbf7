"""Logs built from `testing.events` builders at the times a test gives, written and read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_inspect.history.session import SessionLog
from dsh_inspect.testing import events as ev
from dsh_inspect.testing.seeding import assign_positions, numbered

from tests.support.logs import load_path
from tests.support.request_logs import write_log

T0 = 1_790_000_000_000
Timed = tuple[int, dict[str, Any]]  # ms after `start`, and the event


def timed_log(tmp_path: Path, timed: list[Timed], *, start: int = T0) -> SessionLog:
    """The events at the times given, as dsh would have written them (what the builders leave to the seeder
    filled in), read back."""
    events = [{**event, "time": start + at} for at, event in timed]
    written = assign_positions(numbered(events, {}, start=0, last_time=start, keep_times=True))
    return load_path(write_log(tmp_path / "session.jsonl", written))


def chunk(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "assistant/chunk", "data": {"turn": ev.TURN, "step": ev.STEP, "chunk": {"type": kind, **fields}}}


def streamed(text: str) -> list[dict[str, Any]]:
    """A text block's chunks: its start (no content), one delta, its end."""
    return [
        chunk("block-start", index=0, blockType="text"),
        chunk("text-delta", index=0, text=text),
        chunk("block-end", index=0, block={"type": "text", "text": text}),
    ]


USAGE = {"inputTokens": 1000, "cacheReadTokens": 500, "outputTokens": 200, "reasoningTokens": 50}


def one_call(model: str = "deepseek-v4-flash", provider: str = "deepseek-official") -> list[Timed]:
    """A turn of one step whose one call `model` answered on route `provider`, with `USAGE`."""
    return [
        (0, ev.turn_start()),
        (0, ev.prompt("hello")),
        (1, ev.step_start()),
        (2, ev.answer("hi", usage=USAGE, model=model, provider=provider)),
        (3, ev.step_end()),
        (4, ev.turn_end()),
    ]
