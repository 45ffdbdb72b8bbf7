"""A row body whole: what "Show all" swaps in where a page showed only its head (`capped` in rows/_parts.html)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query, Request

from ...forms.jsformat import utf16_len
from ..present.rows import AnyBody
from ..present.twins import WholeBodyJson
from ..present.windows import transcript, views_at
from ..state import ReadSession, State, WebState
from ..views import Served, page_and_twin, wants_twin

router = APIRouter()


def _body(state: WebState, session: ReadSession, seq: int, part: str) -> AnyBody:
    t = transcript(state, session.entry)
    # one row per seq, but for the diagnostic rows placed just before the row anchored there (or a run's row)
    for view in views_at(t, seq):
        body = view.body(part)
        if body is not None:
            return body
    raise HTTPException(404, f"no row at {seq} has a body {part!r}")


@page_and_twin(
    router,
    "/sessions/{key}/bodies/{seq}",
    twin=WholeBodyJson,
    summary="One body of a row (its text, Markdown or JSON), whole",
    name="api_body",
)
def whole_body(
    request: Request, state: State, session: ReadSession, seq: int, part: str = Query(...)
) -> Served[WholeBodyJson]:
    # the page swaps in the body rendered (its Markdown as HTML); the twin carries its text
    body = _body(state, session, seq, part)
    if not wants_twin(request):
        return state.page(request, "rows/body.html", body=body)
    whole = body.whole
    return WholeBodyJson(seq=seq, part=body.part, markdown=body.markdown, length=utf16_len(whole), text=whole)
