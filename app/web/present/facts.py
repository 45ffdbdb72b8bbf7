"""A session's facts as its page header and its JSON twin give them: the verdict, the counts, the
diagnostics. Read by the session page and by the live tail, which sends the header again when they change."""

from __future__ import annotations

from typing import Any

from ...history.session import SessionLog
from ...model.plain_text import title_text
from ...sessions.registry import Entry
from ...sessions.transcript import Transcript
from .entries import entry_json, versions_json
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
