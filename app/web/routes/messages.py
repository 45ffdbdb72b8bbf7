"""Message identity pages: every event that carries one id, and the requests that included it.

Ids are opaque and may hold any character, so the route takes the rest of
the path; links percent-encode the id whole, or name a long id by its handle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from ...forms import ContextView, project_context
from ...forms.message_body import BodyPart, body_parts
from ...history.identity import InboxCarrier, MessageCarrier, MessageIdentity, message_identity
from ...history.message_handles import handles_of
from ...model.values import Message
from ..present.model_views import identity_json, role_key
from ..present.request_index import page_head, requests_of, transcript_anchors, transcript_link
from ..state import ReadSession, State, WebState

router = APIRouter()


@dataclass(frozen=True, slots=True)
class Content:
    """A carried copy of the message, ready for the body partials."""

    label_key: str
    kind: str
    context: ContextView | None
    parts: tuple[BodyPart, ...]


def content_of(message: Message | None) -> Content | None:
    if message is None:
        return None
    if message.is_context:
        return Content(role_key(message), message.source.kind, project_context(message), ())
    return Content(role_key(message), message.source.kind, None, body_parts(message))


def _identity(state: WebState, session: ReadSession, message_id: str) -> MessageIdentity:
    """The identity of the message `message_id` names: its handle (`message_url`), or the id itself."""
    log, index = requests_of(state, session.entry)
    handles = state.registry.derived_of(session.entry.key, "message-handles", log, handles_of)
    identity = message_identity(log, index, handles.get(message_id, message_id))
    if identity is None:
        raise HTTPException(404, f"no event of this session carries message id {message_id!r}")
    return identity


@router.get("/sessions/{key}/messages/{message_id:path}", response_class=HTMLResponse, include_in_schema=False)
def identity_page(request: Request, state: State, session: ReadSession, message_id: str) -> HTMLResponse:
    identity = _identity(state, session, message_id)
    head = page_head(session.entry, session.log)
    base = head["base_url"]
    anchors = transcript_anchors(state, session.entry)
    links = {c.seq: transcript_link(base, anchors, c.seq) for c in identity.carriers if c.seq in anchors}
    taken = {
        c.taken_at: transcript_link(base, anchors, c.taken_at)
        for c in identity.carriers
        if isinstance(c, InboxCarrier) and c.taken_at is not None
    }
    back = next(iter(links.values()), base)
    contents = {c.seq: content_of(c.message) for c in identity.carriers}
    shadowed = {
        c.seq: list(zip(c.replacement.shadowed, c.replacement.shadowed_ids, strict=True))
        for c in identity.carriers
        if isinstance(c, MessageCarrier) and c.replacement
    }
    return state.page(
        request,
        "messages/identity.html",
        **head,
        identity=identity,
        links=links,
        taken_links=taken,
        back_url=back,
        contents=contents,
        shadowed=shadowed,
    )


@router.get(
    "/api/sessions/{key}/messages/{message_id:path}",
    summary="Every event carrying one message id, and the model requests that included it",
)
def api_identity(state: State, session: ReadSession, message_id: str) -> dict[str, Any]:
    return identity_json(_identity(state, session, message_id))
