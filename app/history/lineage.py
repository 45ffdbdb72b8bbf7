"""Which other sessions a log names (docs/format.md §2.1, §3.2, §4.3): its parent, and the
children it heard from or started (relay senders, workflow members)."""

from __future__ import annotations

from .session import SessionLog

_NAMING_TYPES = ("user/message", "tool-workflow/agent-start")


def named_sessions(log: SessionLog) -> dict[str, str]:
    """Session id → how this log names it: `parent`, `relay` or `workflow`."""
    named: dict[str, str] = {}
    if log.header and log.header.parent_session:
        named[log.header.parent_session] = "parent"
    for seq, kind in enumerate(log.types):
        if kind not in _NAMING_TYPES:
            continue
        event = log.event(seq)
        if kind == "user/message" and event.message is not None:
            sender = event.message.source.get("senderSessionId")
            if isinstance(sender, str) and sender:
                named.setdefault(sender, "relay")
        elif isinstance(event.data, dict) and isinstance(event.data.get("childId"), str):
            named.setdefault(event.data["childId"], "workflow")
    return named
