"""Where two recorded conversations part, for test authors: `conversation_diff` gives the
comparison `/compare` and `dsh-inspect diff` show, `assert_same_conversation` fails with its first
divergence in a few lines. No pytest here: `dsh_inspect.testing` re-exports both."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..history.compare import Comparison, compare_logs, divergence_lines
from ..history.session import SessionLog, load_one
from .seeding import SCAFFOLD_CWD, SeededSession, seed_events, write_seed

Event = dict[str, Any]

# What `conversation_diff` compares: a log's path, a seeded session, a read log, or a list of events
# (a fixture's, with or without seq and time).
Conversation = SessionLog | SeededSession | Path | str | Sequence[Event]


def _log_of(conversation: Conversation, folder: Path, name: str) -> SessionLog:
    if isinstance(conversation, SessionLog):
        return conversation
    if isinstance(conversation, SeededSession):
        return load_one(str(conversation.path))
    if isinstance(conversation, (str, Path)):
        return load_one(str(conversation))
    plan = seed_events(conversation, session_id=f"conversation-{name}", cwd=SCAFFOLD_CWD, now_ms=1)
    return load_one(str(write_seed(folder / name, plan, "none")))


def conversation_diff(a: Conversation, b: Conversation, ignore: Sequence[str] = ()) -> Comparison:
    """Where two conversations part: `history.compare.Comparison`, as `/compare` and `dsh-inspect diff`
    give it. `ignore` names parts left out: "reasoning", "system", "tools", "config", "context",
    "timestamps" (never compared), "tool_result:<name>" ("tool_result:*" for every tool)."""
    with tempfile.TemporaryDirectory(prefix="dsh-conversation-") as folder:
        return compare_logs(_log_of(a, Path(folder), "a"), _log_of(b, Path(folder), "b"), ignore)


def assert_same_conversation(a: Conversation, b: Conversation, ignore: Sequence[str] = ()) -> None:
    """Fail, naming the first divergence in a few lines, unless the two conversations are the same."""
    comparison = conversation_diff(a, b, ignore)
    if not comparison.same:
        raise AssertionError("the conversations differ\n" + "\n".join(divergence_lines(comparison)))
