"""The per-file-version indexes the model-view and identity pages share, and their links back."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ...history.requests import RequestIndex, request_index
from ...history.session import SessionLog
from ...model.plain_text import title_text
from ...sessions.keys import session_url
from ...sessions.registry import Entry
from ..state import WebState
from .model_views import anchor_index
from .windows import transcript


def requests_of(state: WebState, entry: Entry) -> tuple[SessionLog, RequestIndex]:
    """The session's log with its request index, both for the current file version."""
    return state.registry.derived(entry.key, "requests", lambda log: (log, request_index(log)))


def transcript_anchors(state: WebState, entry: Entry) -> dict[int, str]:
    """Event seq → the transcript row that shows it, for links back to the session page."""
    t = transcript(state, entry)
    return state.registry.derived(entry.key, "anchors-by-seq", lambda log: anchor_index(t.rows, t.anchors, log))


def transcript_link(base_url: str, anchors: dict[int, str], seq: int) -> str:
    anchor = anchors.get(seq)
    return f"{base_url}#{quote(anchor, safe='')}" if anchor else base_url


def page_head(entry: Entry, log: SessionLog) -> dict[str, Any]:
    """What every page about one session names in its head: the session's key, title and page."""
    return {
        "session_key": entry.key,
        "session_title": title_text(log.title) or entry.key,
        "base_url": session_url(entry.key),
    }
