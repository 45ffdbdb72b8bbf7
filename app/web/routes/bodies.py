"""A row body whole: what "Show all" swaps in where a page showed only its head (rows/_body.html)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from ...forms.jsformat import utf16_len
from ..present.rows import AnyBody
from ..present.windows import transcript, views_at
from ..state import ReadSession, State, WebState

router = APIRouter()


def _body(state: WebState, session: ReadSession, seq: int, part: str) -> AnyBody:
    t = transcript(state, session.entry)
    # one row per seq, but for the diagnostic rows placed just before the row anchored there (or a run's row)
    for view in views_at(t, seq):
        body = view.body(part)
        if body is not None:
            return body
    raise HTTPException(404, f"no row at {seq} has a body {part!r}")


@router.get("/sessions/{key}/bodies/{seq}", response_class=HTMLResponse, include_in_schema=False)
def body_fragment(
    request: Request, state: State, session: ReadSession, seq: int, part: str = Query(...)
) -> HTMLResponse:
    return state.page(request, "rows/body.html", body=_body(state, session, seq, part))


@router.get("/api/sessions/{key}/bodies/{seq}", summary="One body of a row (its text, Markdown or JSON), whole")
def api_body(state: State, session: ReadSession, seq: int, part: str = Query(...)) -> dict[str, Any]:
    body = _body(state, session, seq, part)
    whole = body.whole
    return {"seq": seq, "part": body.part, "markdown": body.markdown, "length": utf16_len(whole), "text": whole}
