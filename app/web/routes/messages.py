"""Message identity pages: every event that carries one id, and the requests that included it.

Ids are opaque and may hold any character, so the route takes the rest of
the path; links percent-encode the id whole, or name a long id by its handle.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, HTTPException, Request

from ...forms import ContextView, project_context
from ...forms.message_body import BodyPart, body_parts
from ...history.identity import InboxCarrier, MessageCarrier, MessageIdentity, message_identity
from ...history.message_handles import handles_of
from ...model.values import Message
from ..present.model_views import identity_json, role_key
from ..present.request_index import page_head, requests_of, transcript_anchors, transcript_link
from ..present.twins import IdentityJson
from ..state import ReadSession, State, WebState
from ..views import Served, page_and_twin, wants_twin

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


@page_and_twin(
    router,
    "/sessions/{key}/messages/{message_id:path}",
    twin=IdentityJson,
    summary="Every event carrying one message id, and the model requests that included it",
    name="api_identity",
)
def identity_view(request: Request, state: State, session: ReadSession, message_id: str) -> Served[IdentityJson]:
    identity = _identity(state, session, message_id)
    if wants_twin(request):
        return IdentityJson.model_validate(identity_json(identity))
    # the page links each carrier to its row in the transcript, and shows each copy of the message
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
