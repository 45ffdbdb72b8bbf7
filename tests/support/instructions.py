"""A session whose instructions card (an `agent-instructions` context, form `instructions`) holds a given phrase."""

from __future__ import annotations

import orjson

from tests.support.builders import LogBuilder, header


def instructions_log(session_id: str, rule: str) -> bytes:
    """One completed turn whose AGENTS.md instructions carry `rule`, as dsh injects them; JSONL bytes."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Quote the price of the blue mug")
    b.user(
        f"<system-reminder>\nInstructions from: AGENTS.md\n\n# Shop rules\n\n{rule}\n\n</system-reminder>",
        source={
            "kind": "agent-instructions",
            "form": "instructions",
            "changes": [{"action": "set", "path": "AGENTS.md"}],
        },
    )
    b.assistant(1, 1, [{"type": "text", "text": "The blue mug costs 35."}])
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *b.events])
