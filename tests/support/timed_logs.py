"""Logs built from `testing.events` builders at the times a test gives, written and read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from dsh_inspect.history.session import SessionLog
from dsh_inspect.testing import events as ev
from dsh_inspect.testing.seeding import assign_positions, numbered

from tests.support.builders import header
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


def unmeasured_call() -> list[Timed]:
    """`one_call`, its answer interrupted before it logged a usage (usage is optional on `assistant/message`)."""
    return [(at, ev.answer("cut", interrupted=True) if e["type"] == "assistant/message" else e) for at, e in one_call()]


PARENT, CHILDREN = "parent-timed", ("child-flaky", "child-docs")
CHILD_TITLES = ("Find the flaky test", "Write the release notes")


def write_timed(root: Path, session_id: str, timed: list[Timed], **header_fields: Any) -> Path:
    """`timed` written as session `session_id`'s log in its own folder under `root`, its header with
    `header_fields` (a subagent's `parentSession`, …)."""
    events = assign_positions(
        numbered([{**e, "time": T0 + at} for at, e in timed], {}, start=0, last_time=T0, keep_times=True)
    )
    path = root / session_id / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id, **header_fields), *events]))
    return path


def write_subagent_family(root: Path) -> None:
    """A parent session that starts two subagents in the background (a `subagent` call each, whose result names
    the child it started), and each child: a model call, a shell command of a second, and an answer; a child's
    title is its `CHILD_TITLES` entry."""
    starts = [ev.call("subagent", {"description": t, "prompt": t, "run_in_background": True}) for t in CHILD_TITLES]
    parent: list[Timed] = [
        (0, ev.turn_start()),
        (0, ev.prompt("find the flaky test and write the notes")),
        (10, ev.step_start()),
        (200, ev.answer(None, calls=starts)),
    ]
    for i, (block, child) in enumerate(zip(starts, CHILDREN, strict=True)):
        parent += [
            (210 + i * 100, ev.tool_call(block)),
            (250 + i * 100, ev.tool_result(block, f"started subagent {child}")),
        ]
    parent += [(500, ev.step_end()), (510, ev.step_start()), (800, ev.answer("Both started.")), (810, ev.step_end())]
    parent += [(820, ev.turn_end())]
    write_timed(root, PARENT, parent)
    for i, (child, title) in enumerate(zip(CHILDREN, CHILD_TITLES, strict=True)):
        run = ev.call("bash", {"command": "pytest -q"})
        at = 300 + i * 400  # each starts once its parent's call started it
        timed: list[Timed] = [
            (at, ev.turn_start()),
            (at, ev.prompt(title)),
            (at, ev.title(title, 1)),
            (at + 10, ev.step_start()),
            (at + 100, ev.answer(None, calls=[run])),
            (at + 110, ev.tool_call(run)),
            (at + 1110, ev.tool_result(run, "7 passed")),
            (at + 1120, ev.step_end()),
            (at + 1130, ev.step_start()),
            (at + 1300, ev.answer("Done.")),
            (at + 1310, ev.step_end()),
            (at + 1320, ev.turn_end()),
        ]
        write_timed(root, child, timed, parentSession=PARENT, origin="subagent", delegationDepth=1)
