"""A session's facts as its page header and its JSON twin give them: the verdict, the counts, the
diagnostics. Read by the session page and by the live tail, which sends the header again when they change."""

from __future__ import annotations

from typing import Any

from ...access import OPEN, Identity
from ...history.session import SessionLog
from ...history.spend.tokens import session_usage
from ...model.plain_text import title_text
from ...sessions.keys import session_url
from ...sessions.registry import Entry
from ...sessions.transcript import Transcript
from ..state import WebState
from .entries import entry_json, related_sessions, versions_json
from .spend.cost import cost_phrase, priced_by, source_phrase
from .spend.timeline import cost_of, header_figures, timing_of
from .windows import file_size


def session_json(entry: Entry, log: SessionLog, t: Transcript) -> dict[str, Any]:
    """The session's facts; its diagnostics are the page's diagnostic rows, in page order."""
    return {
        **entry_json(entry),
        **versions_json(entry),
        "header": log.header.to_json() if log.header else None,
        "title": log.title,  # as logged: Markdown, maybe
        "plainTitle": title_text(log.title),
        "verdict": log.verdict.to_json(),
        "events": log.stored_count,  # as stored: never the closers dsh would add
        "messages": log.message_count,
        "turns": log.turns,
        "steps": log.steps,
        "diagnostics": [d.to_json() for d in t.diagnostics],
        "size": file_size(entry),
    }


def facts_context(
    state: WebState, entry: Entry, log: SessionLog, t: Transcript, who: Identity = OPEN
) -> dict[str, Any]:
    """The session's facts, relatives (those `who` may see), token totals, times and cost, as the page's header
    shows them (`sessions/facts.html`): the page, the one-file export and the live tail's redrawn header."""
    return {
        "session": session_json(entry, log, t),
        "related": related_sessions(state, entry, log, who),
        "usage": state.registry.derived(entry.key, "usage", session_usage),
        "timing": header_figures(timing_of(state, entry)),
        "cost": cost_phrase(cost_of(state, entry).to_json()),
        "cost_source": source_phrase(state.settings.prices()),
        "priced_by": priced_by(cost_of(state, entry)),
        "base_url": session_url(entry.key),
    }
