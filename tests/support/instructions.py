"""A session whose instructions card (an `agent-instructions` context, form `instructions`) holds a given phrase."""

from __future__ import annotations

import orjson

from tests.support.builders import LogBuilder, header


def instructed_turn(b: LogBuilder, turn: int, rule: str) -> None:
    """A completed turn whose AGENTS.md instructions carry `rule`, as dsh injects them (a card closed at first)."""
    b.add("turn/start", {"turn": turn})
    b.add("step/start", {"turn": turn, "step": 1})
    b.user("Quote the price of the blue mug")
    b.user(
        f"<system-reminder>\nInstructions from: AGENTS.md\n\n# Shop rules\n\n{rule}\n\n</system-reminder>",
        source={
            "kind": "agent-instructions",
            "form": "instructions",
            "changes": [{"action": "set", "path": "AGENTS.md"}],
        },
    )
    b.assistant(turn, 1, [{"type": "text", "text": "The blue mug costs 35."}])
    b.add("step/end", {"turn": turn, "step": 1})
    b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def instructions_log(session_id: str, rule: str) -> bytes:
    """One completed turn whose AGENTS.md instructions carry `rule`; JSONL bytes."""
    b = LogBuilder()
    instructed_turn(b, 1, rule)
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *b.events])
