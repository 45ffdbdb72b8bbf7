"""One view for a page and its JSON twin, as Datasette's views are: one handler finds a resource's data once
and serves it at both of its addresses, `/path` as the page and `/api/path` as the twin.

`page_and_twin` registers the handler at both addresses, so its parameters are declared once (as the OpenAPI
document shows the twin's: a page takes exactly what its twin takes). The handler ends in `page_or_twin`: on
the twin's address the twin model itself (FastAPI writes it as JSON, as the route's response model); on the
page's, the template rendered with the model's fields by their Python names, or with what else the page makes
of the model, worked out for the page alone. A handler whose template reads the objects the twin is made from
(row views, rendered forms, a step's model calls) asks `wants_twin` and renders those itself.

A page whose parameters differ from its twin's (a `direction` for the script that pages rows, a page size
with another default) keeps a handler of its own, sharing the data function and the aliases below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeAlias, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel

from ..history.transcript import ROW_KINDS
from ..sessions.search_index import MAX_QUERY
from .state import web

T = TypeVar("T", bound=BaseModel)
Handler = TypeVar("Handler", bound=Callable[..., Any])

Served: TypeAlias = T | HTMLResponse  # what a handler `page_and_twin` registers returns: the twin, or its page

# The parameters several resources take, declared once.
# `from`: the index of a window's first row (of a run row's rows, of a model call's messages, of the steps)
From = Annotated[int, Query(alias="from", ge=0)]
MaybeFrom = Annotated[int | None, Query(alias="from", ge=0)]  # None: where the resource starts without one
# `to`: where a window ends (not included)
To = Annotated[int | None, Query(alias="to", ge=0)]
# which way a page's script pages a window: the loader it swaps in for the window's neighbours
Direction = Annotated[str, Query(pattern="^(earlier|later|)$")]
# `?kind=`: a row kind, as the transcript names it
RowKind = Annotated[str, Query(description=f"a row kind: {', '.join(ROW_KINDS)}")]
ANCHOR_LENGTH = 1000  # the longest anchor a query takes: past any row's, short of any costly to look up
# `?q=`: a phrase to find, at most `MAX_QUERY` characters (what one search may cost, issue 33)
SearchText = Annotated[
    str, Query(max_length=MAX_QUERY, description="a phrase, matched anywhere in a row's words, any case; no operators")
]
# `?at=`: an anchor (`msg-…`, a row's key) or `end`; the page opens at the window that shows it
At = Annotated[
    str, Query(max_length=ANCHOR_LENGTH, description="open at this row anchor (`msg-…`, a row key) or `end`")
]


def page_and_twin(
    router: APIRouter, path: str, *, twin: type[BaseModel], summary: str, name: str
) -> Callable[[Handler], Handler]:
    """Register a handler at `path` (its page, left out of the OpenAPI document) and at `/api{path}` (its twin,
    answered with `twin`, described by `summary`; `name` keeps the twin's operation id). The handler's
    docstring describes the twin in the OpenAPI document, as FastAPI takes it: what only the page does is
    said in comments."""

    def register(handler: Handler) -> Handler:
        router.add_api_route(path, handler, response_class=HTMLResponse, response_model=None, include_in_schema=False)
        router.add_api_route(f"/api{path}", handler, response_model=twin, summary=summary, name=name)
        return handler

    return register


def wants_twin(request: Request) -> bool:
    """Whether the request came by the twin's route (`/api/…`) rather than the page's."""
    route = request.scope.get("route")
    return isinstance(route, APIRoute) and route.path.startswith("/api/")


def fields(data: BaseModel) -> dict[str, Any]:
    """A twin's fields by their Python names, as a template reads them."""
    return dict(data)


def page_or_twin(
    request: Request, data: T, template: str, page: Callable[[T], Mapping[str, Any]] = fields
) -> Served[T]:
    """`data` itself for the twin; for the page, `template` rendered with what `page(data)` makes of it (asked
    for the page alone): by default `data`'s fields by their Python names."""
    if wants_twin(request):
        return data
    return web(request).page(request, template, **page(data))
