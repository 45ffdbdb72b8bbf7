"""Pairs of runs to compare (issue 17): the same prompt twice, a fork and its parent, a resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.support.builders import PROVIDER, LogBuilder, header

Event = dict[str, Any]


def tool_run(result: str, answer: str | None = None, *, seed: int = 7, turns: int = 1) -> LogBuilder:
    """`turns` turns of one prompt: the model reads a.txt (step n.1), the tool answers `result`, the
    model answers from it (step n.2). Two runs that differ in `result` part at step 1.1."""
    log = LogBuilder(seed)
    for turn in range(1, turns + 1):
        log.add("turn/start", {"turn": turn})
        log.add("step/start", {"turn": turn, "step": 1})
        log.user("Read a.txt please" if turn == 1 else f"Read it again ({turn})")
        log.add(
            "request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial" if turn == 1 else "change"}
        )
        call = f"call_{seed}_{turn}"  # call ids differ between runs, as a provider's do
        log.assistant(
            turn, 1, [{"type": "tool-call", "id": call, "name": "read", "arguments": '{"file_path": "a.txt"}'}]
        )
        log.tool_round(turn, 1, call, result)
        log.add("step/end", {"turn": turn, "step": 1})
        log.add("step/start", {"turn": turn, "step": 2})
        log.assistant(turn, 2, [{"type": "text", "text": answer or f"The file says {result}."}])
        log.add("step/end", {"turn": turn, "step": 2})
        log.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return log


def continued(seed_events: list[Event], prompt: str, turn: int, *, seed: int = 11) -> list[Event]:
    """`seed_events` as a fork or resume inherits them, its `session/end-seed`, then one more turn."""
    log = LogBuilder(seed)
    log.events = [dict(e) for e in seed_events]
    log.add("session/end-seed", {})
    log.add("turn/start", {"turn": turn})
    log.add("step/start", {"turn": turn, "step": 1})
    log.user(prompt)
    log.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "resume"})
    log.assistant(turn, 1, [{"type": "text", "text": f"On it: {prompt}"}])
    log.add("step/end", {"turn": turn, "step": 1})
    log.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return log.events


def write_log(path: Path, events: list[Event], head: dict[str, Any] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [head or header(path.stem), *events]))
    return path


def fork_pair(folder: Path) -> tuple[Path, Path, int]:
    """A parent of two turns and a fork of it after its first turn that asks something else:
    (parent, fork, the fork's seed length)."""
    parent = tool_run("alpha", turns=2).events
    seed = next(e["seq"] for e in parent if e["type"] == "turn/end") + 1
    fork = continued(parent[:seed], "Now write b.txt", 2)
    parent_path = write_log(folder / "parent.jsonl", parent, header("session-parent"))
    fork_head = header("session-fork", parentSession="session-parent", seedLength=seed)
    return parent_path, write_log(folder / "fork.jsonl", fork, fork_head), seed
