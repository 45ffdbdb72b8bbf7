"""Which other sessions a log names as its lineage (docs/format.md §2.1, §4.3): its parent (the header's
`parentSession`) and the workflow members it started (`tool-workflow/agent-start`'s `childId`).

A relay's `senderSessionId` is not lineage: it names whoever sent the message, a coordinating parent as often as
a child, or a session of no relation at all. Its card shows it as the mention it is; the page's "Child sessions"
lists only sessions a header or event names as parent and child (issue 41, item 5)."""

from __future__ import annotations

from ..model.payloads import WorkflowAgent, payload_as
from .session import SessionLog

_STARTS_A_CHILD = "tool-workflow/agent-start"


def named_sessions(log: SessionLog) -> dict[str, str]:
    """Session id → how this log names it as kin: `parent` or `workflow`."""
    named: dict[str, str] = {}
    if log.header and log.header.parent_session:
        named[log.header.parent_session] = "parent"
    for seq, kind in enumerate(log.types):
        if kind != _STARTS_A_CHILD:
            continue
        child = payload_as(log.event(seq).payload, WorkflowAgent).child_id
        if child:
            named.setdefault(child, "workflow")
    return named
