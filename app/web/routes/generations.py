"""The part of a first screen that names its session's format generations, asked for once the page
is shown: it reads the other generations' files for the seq each stands "as of" (`generation_facts`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ...sessions.keys import session_url
from ..present.generation_facts import generation_json
from ..state import ReadSession, State

router = APIRouter()


@router.get("/sessions/{key}/generations", response_class=HTMLResponse, include_in_schema=False)
def generations_part(request: Request, state: State, session: ReadSession) -> HTMLResponse:
    """A first screen's generations part, once the files it names are read (its JSON twin: the `generation` of
    `/api/sessions/{key}`)."""
    entry = session.entry
    return state.page(
        request,
        "sessions/generation.html",
        generation=generation_json(state, entry, session.log),
        base_url=session_url(entry.key),
    )


__all__ = ["router"]
