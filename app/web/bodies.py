"""A row body whole: what "Show all" swaps in where a page showed only its head (rows/_body.html)."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from ..forms.jsformat import utf16_len
from .rows import Body
from .sessions import transcript, view_of
from .state import web

router = APIRouter()


def _body(request: Request, key: str, seq: int, part: str) -> Body:
    _, log, t = transcript(web(request), key)
    i = bisect_left(t.rows, seq, key=lambda row: row.seq)  # rows are in seq order
    cwd = log.header.cwd if log.header else None
    # one row per seq, but for the diagnostic rows placed just before the row anchored there
    while i < len(t.rows) and t.rows[i].seq == seq:
        body = view_of(t, i, cwd).body(part)
        if body is not None:
            return body
        i += 1
    raise HTTPException(404, f"no row at {seq} has a body {part!r}")


@router.get("/sessions/{key}/bodies/{seq}", response_class=HTMLResponse, include_in_schema=False)
def body_fragment(request: Request, key: str, seq: int, part: str = Query(...)) -> HTMLResponse:
    return web(request).page(request, "rows/body.html", body=_body(request, key, seq, part))


@router.get("/api/sessions/{key}/bodies/{seq}", summary="One body of a row (its text, Markdown or JSON), whole")
def api_body(request: Request, key: str, seq: int, part: str = Query(...)) -> dict[str, Any]:
    body = _body(request, key, seq, part)
    return {
        "seq": seq,
        "part": body.part,
        "markdown": body.markdown,
        "length": utf16_len(body.whole),
        "text": body.whole,
    }
