"""The per-file-version indexes the model-view and identity routers share."""

from __future__ import annotations

from urllib.parse import quote

from ..history.requests import RequestIndex, request_index
from ..history.session import SessionLog
from .model_views import anchor_index
from .registry import Entry
from .sessions import transcript
from .state import WebState


def requests_of(state: WebState, key: str) -> tuple[Entry, SessionLog, RequestIndex]:
    """The session's log with its request index, both for the current file version."""
    entry, _ = state.session(key)
    log, index = state.registry.derived(entry.key, "requests", lambda log: (log, request_index(log)))
    return entry, log, index


def transcript_anchors(state: WebState, key: str) -> dict[int, str]:
    """Event seq → the transcript row that shows it, for links back to the session page."""
    entry, _, t = transcript(state, key)
    return state.registry.derived(entry.key, "anchors-by-seq", lambda log: anchor_index(t.rows, t.anchors, log))


def transcript_link(base_url: str, anchors: dict[int, str], seq: int) -> str:
    anchor = anchors.get(seq)
    return f"{base_url}#{quote(anchor, safe='')}" if anchor else base_url
