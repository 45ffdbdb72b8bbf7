"""A row's bodies: one sent when its row first opens (`row_body`), and one whole, what "Show all" swaps in where a
page showed only its head (`whole_body`; `capped` in rows/_parts.html)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query, Request
from jinja2.utils import Namespace

from ...forms.jsformat import utf16_len
from ...sessions.archive import media_of
from ...sessions.keys import session_url
from ..present.rows import AnyBody
from ..present.twins import RowJson, WholeBodyJson, row_json
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


# Which of a row's bodies (`n`): an assistant step has one per thought, any other row one
BodyNumber = Query(0, ge=0, le=10_000, description="which of the row's bodies: its thoughts count from 0")


@page_and_twin(
    router,
    "/sessions/{key}/row-bodies/{seq}",
    twin=RowJson,
    summary="The row at an event, whose body the page fetches when it opens",
    name="api_row_body",
)
def row_body(request: Request, state: State, session: ReadSession, seq: int, n: int = BodyNumber) -> Served[RowJson]:
    # the page: the row's `n`th body drawn as it shows opened (rows/row_body.html), which the page's rows leave
    # out until then (docs/decisions/0048-bodies-sent-when-opened.md)
    entry = session.entry
    found = views_at(transcript(state, entry), seq)
    if not found:
        raise HTTPException(404, f"no row at {seq}")
    if wants_twin(request):
        return row_json(found[-1])  # the diagnostic rows placed at `seq` come before the row anchored there
    wanted = Namespace(want=n, body=None)
    page = state.page(
        request,
        "rows/row_body.html",
        views=found,
        found=wanted,
        base_url=session_url(entry.key),
        media=media_of(entry),
    )
    if wanted.body is None:
        raise HTTPException(404, f"the row at {seq} has no body {n}")
    return page
