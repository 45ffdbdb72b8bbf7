"""The session page: windows of rows, its facts, events, context bodies, search; JSON twins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from ...forms import pretty_json
from ...history.session import SessionLog
from ...history.tokens import session_usage
from ...history.transcript import ROW_KINDS
from ...model.frozen import thaw
from ...sessions.keys import session_url
from ...sessions.registry import Entry
from ...sessions.session_search import search
from ...sessions.transcript import END, Paging, Transcript
from ..present.entries import entry_json, related_sessions, versions_json
from ..present.facts import session_json
from ..present.generation_facts import generation_json, generation_of, newer_format_json
from ..present.rows import RowView
from ..present.twins import ContextRowJson, RowJson, WindowJson, context_json, row_json
from ..present.windows import (
    file_size,
    first_screen,
    first_window_paging,
    rendered_run,
    rendered_window,
    run_window,
    searchables,
    transcript,
    view,
    window,
)
from ..state import Lang, ReadSession, SessionEntry, State, WebState

router = APIRouter()


def window_json(t: Transcript, start: int, size: int, stop: int | None = None, at: str = "") -> WindowJson:
    """A window of rows; when anchor `at` names a row inside a run row, with the page of the run's rows
    that shows it (`openedRun`)."""
    views, paging = window(t, start, size, stop)
    inside = t.run_at(at) if at else None
    opened = run_json(t, inside.index, inside.opening(size), size) if inside is not None else None
    return WindowJson.model_validate({**paging, "rows": [row_json(v) for v in views], "openedRun": opened})


def run_json(t: Transcript, index: int, start: int, size: int, stop: int | None = None) -> WindowJson:
    """A page of run row `index`'s rows from its row `start`, ending before `stop` if given (`from`, `to` and
    the rest count its rows)."""
    views, paging = run_window(t, index, start, size, stop)
    return WindowJson.model_validate({**paging, "rows": [row_json(v) for v in views], "run": t.rows[index].key})


def page_context(state: WebState, entry: Entry, log: SessionLog, t: Transcript, paging: Paging) -> dict[str, Any]:
    """What `session.html` is rendered with besides its rows (the page, and the one-file export)."""
    return {
        "session": session_json(entry, log, t),
        "related": related_sessions(state, entry, log),
        "usage": state.registry.derived(entry.key, "usage", session_usage),
        "base_url": session_url(entry.key),
        "paging": paging,
        "generation": generation_json(state, entry, log),  # which of its folder's generations
        "newer_format": newer_format_json(entry.header),
    }


ANCHOR_LENGTH = 1000  # the longest anchor a query takes: past any row's, short of any costly to look up
# `?at=`: an anchor (`msg-…`, a row's key) or `end`; the page opens at the window that shows it
At = Annotated[
    str, Query(max_length=ANCHOR_LENGTH, description="open at this row anchor (`msg-…`, a row key) or `end`")
]
# `/locate?anchor=`: the row anchor to find (`msg-…`, a row key)
Anchor = Annotated[str, Query(max_length=ANCHOR_LENGTH, description="a row anchor (`msg-…`, a row key)")]

# `?run=`: a run row's key (`seq-1000-999999`); its rows are paged like a window's, `from` counting them
RunKey = Annotated[str, Query(max_length=100, description="page the rows of the run row with this key")]


@router.get("/sessions/{key}", response_class=HTMLResponse, include_in_schema=False)
def session_page(
    request: Request,
    state: State,
    entry: SessionEntry,
    t: Lang,
    start: int = Query(0, alias="from", ge=0),
    at: At = "",
) -> HTMLResponse:
    early = first_screen(state, entry, t) if start == 0 and not at else None
    if early is not None:
        prefix, html = early
        return state.page(
            request,
            "session.html",
            session={**entry_json(entry), **versions_json(entry), "title": prefix.title, "size": file_size(entry)},
            provisional=True,
            rows_html=html,
            base_url=session_url(entry.key),
            paging=first_window_paging(state.settings.window_rows),
            newer_format=newer_format_json(entry.header),
            generation_lazy=generation_of(state, entry) is not None,  # its part reads the other files: asked later
        )
    entry, log = state.session(entry.key)
    script = transcript(state, entry)
    # An anchor no row has (a permalink into a log rewritten since) still opens the session, at its start,
    # saying so: the reader came for this session, and a 404 would hide it.
    opened = script.opening(at, state.settings.window_rows) if at else None
    rows_html, paging = rendered_window(state, entry, script, t, start if opened is None else opened, at=at)
    return state.page(
        request,
        "session.html",
        rows_html=rows_html,
        opened_at=at if opened is not None else None,
        missing_at=at if at and opened is None else None,
        **page_context(state, entry, log, script, paging),
    )


@router.get("/sessions/{key}/facts", response_class=HTMLResponse, include_in_schema=False)
def session_facts(request: Request, state: State, session: ReadSession) -> HTMLResponse:
    """The session's verdict, counts and relatives, read from the whole log (its JSON twin: /api/sessions/{key})."""
    entry, log = session.entry, session.log
    return state.page(
        request,
        "sessions/facts.html",
        session=session_json(entry, log, transcript(state, entry)),
        base_url=session_url(entry.key),
        related=related_sessions(state, entry, log),
        usage=state.registry.derived(entry.key, "usage", session_usage),
    )


class SessionJson(WindowJson):
    """A session's facts, verdict, relatives and token totals, with a window of its rows."""

    key: str
    unique: str
    id: str | None
    path: str
    carrier: str
    url: str
    download: str
    upload: str | None
    cwd: str | None
    created_at: Any
    parent_session: Any
    header: dict[str, Any] | None
    title: str | None
    verdict: dict[str, Any]
    events: int
    messages: int
    turns: int
    steps: int
    diagnostics: list[dict[str, Any]]
    size: int | None
    related: dict[str, list[dict[str, Any]]]
    versions: list[dict[str, Any]]  # an uploaded session's, oldest first (empty on disk)
    as_of: dict[str, Any] | None  # the upload shown, when the page shows an earlier one than the newest
    newest: str | None  # an uploaded session's own URL, which shows its newest upload
    usage: dict[str, int | None] | None
    # `?at=`: the anchor the window was opened at, and the row index it names (null when no row has it:
    # the window is then the first, as on the page)
    at: str | None = None
    at_index: int | None = None
    # which format generation of its session folder this file is (null when the folder holds one),
    # and the format newer than the pinned release reads (null when it is not)
    generation: dict[str, Any] | None = None
    newer_format: dict[str, Any] | None = None


@router.get("/api/sessions/{key}", summary="One session: verdict, counts, diagnostics and a window of rows")
def api_session(
    state: State, session: ReadSession, start: int = Query(0, alias="from", ge=0), at: At = ""
) -> SessionJson:
    entry, log = session.entry, session.log
    t, size = transcript(state, entry), state.settings.window_rows
    opened = t.opening(at, size) if at else None
    window = window_json(t, start if opened is None else opened, size, at=at)
    usage = state.registry.derived(entry.key, "usage", session_usage)
    return SessionJson.model_validate(
        {
            **session_json(entry, log, t),
            "related": related_sessions(state, entry, log),
            "usage": usage.to_json() if usage else None,
            **window.model_dump(),
            "at": at or None,
            "atIndex": t.index_at(at) if at else None,
            "generation": generation_json(state, entry, log),
            "newerFormat": newer_format_json(entry.header),
        }
    )


def _window_from(start: int | None, stop: int | None, size: int) -> int:
    """Where a window asked for by `from` and `to` starts: `to` alone asks for the window that ends there."""
    if start is not None:
        return start
    return 0 if stop is None else max(0, stop - size)


def _rows_start(t: Transcript, start: int, at: str, size: int) -> int:
    """Where the rows asked for start: at `start`, or at the window anchor `at` opens; 404 when no row has `at`."""
    if not at:
        return start
    opened = t.opening(at, size)
    if opened is None:
        raise HTTPException(404, f"no row {at!r}")
    return opened


@router.get("/sessions/{key}/rows", response_class=HTMLResponse, include_in_schema=False)
def rows_partial(
    state: State,
    session: ReadSession,
    t: Lang,
    start: int | None = Query(None, alias="from", ge=0),
    stop: int | None = Query(None, alias="to", ge=0),
    direction: str = Query("", pattern="^(earlier|later|)$"),
    at: At = "",
    run: RunKey = "",
) -> HTMLResponse:
    """A window of rows: from `from` (up to `to`; with `to` alone, the window that ends there), or the one
    `at` opens, with loaders for its neighbours; with `run`, a page of that run row's rows, `from` and `to`
    counting them."""
    entry = session.entry
    script, size = transcript(state, entry), state.settings.window_rows
    if run:
        index = _run_index(script, run)
        return HTMLResponse(
            rendered_run(state, entry, script, t, index, _window_from(start, stop, size), direction, stop)
        )
    first = _rows_start(script, _window_from(start, stop, size), at, size)
    html, _ = rendered_window(state, entry, script, t, first, direction, None if at else stop, at=at)
    return HTMLResponse(html)


def _run_index(t: Transcript, key: str) -> int:
    """The row index of run row `key`; 404 when no run row has it."""
    index = t.positions.get(key)
    if index is None or t.rows[index].count == 1:
        raise HTTPException(404, f"no run row {key!r}")
    return index


@router.get(
    "/api/sessions/{key}/rows",
    summary="A window of rows (from a row index, or opened at an anchor), or a page of a run row's rows (`run`)",
)
def api_rows(
    state: State,
    session: ReadSession,
    start: int | None = Query(None, alias="from", ge=0),
    stop: int | None = Query(None, alias="to", ge=0),
    at: At = "",
    run: RunKey = "",
) -> WindowJson:
    t, size = transcript(state, session.entry), state.settings.window_rows
    if run:
        return run_json(t, _run_index(t, run), _window_from(start, stop, size), size, stop)
    return window_json(t, _rows_start(t, _window_from(start, stop, size), at, size), size, None if at else stop, at)


@router.get("/api/sessions/{key}/search", summary="Rows matching a text and facets, in order")
def api_search(
    state: State,
    session: ReadSession,
    q: str = "",
    kind: str = Query("", description=f"a row kind: {', '.join(ROW_KINDS)}"),
    form: str = "",
    tool: str = "",
    errors: bool = False,
    raw: bool = Query(False, description="match the words in raw event JSON too, not only in what rows show"),
) -> dict[str, Any]:
    t = transcript(state, session.entry)
    found = searchables(state, session.entry, t)
    hits = search(found, q=q, kind=kind, form=form, tool=tool, errors=errors, raw=raw)
    return {
        "query": {"q": q, "kind": kind, "form": form, "tool": tool, "errors": errors, "raw": raw},
        "matches": [{"index": i, "anchor": t.anchors[i], "kind": t.rows[i].kind, "seq": t.rows[i].seq} for i in hits],
    }


@router.get("/api/sessions/{key}/locate", summary="The row index of an anchor, to open its window")
def api_locate(state: State, session: ReadSession, anchor: Anchor) -> dict[str, Any]:
    t = transcript(state, session.entry)
    index = None if anchor == END else t.index_at(anchor)  # a row inside a run: the run's
    if index is None:
        raise HTTPException(404, f"no row {anchor!r}")
    return {"anchor": anchor, "index": index, "seq": t.rows[index].seq}


def _event(state: WebState, session: ReadSession, seq: int) -> dict[str, Any]:
    """Event `seq` as stored; one past dsh's view (a record after a defect) is numbered after the log's events."""
    log = session.log
    readable = transcript(state, session.entry).readable if seq >= log.event_count else None
    count = readable.event_count if readable is not None else log.event_count
    if not 0 <= seq < count:
        raise HTTPException(404, f"no event {seq}")
    event = readable.event(seq) if readable is not None else log.event(seq)
    outside = readable.outside(seq) if readable is not None else None
    return {
        "seq": seq,
        "type": event.type,
        "synthetic": event.synthetic,
        "event": thaw(event.raw),
        **({"outside": outside} if outside is not None else {}),
    }


@router.get("/sessions/{key}/events/{seq}", response_class=HTMLResponse, include_in_schema=False)
def event_page(request: Request, state: State, session: ReadSession, seq: int) -> HTMLResponse:
    event = _event(state, session, seq)
    key = session.entry.key
    return state.page(
        request,
        "event.html",
        session_key=key,
        base_url=session_url(key),
        event_json=pretty_json(event["event"]),
        **event,
    )


@router.get("/api/sessions/{key}/events/{seq}", summary="One event as stored (after dsh's upgrades)")
def api_event(state: State, session: ReadSession, seq: int) -> dict[str, Any]:
    return _event(state, session, seq)


def _context(state: WebState, session: ReadSession, seq: int) -> RowView:
    t = transcript(state, session.entry)
    index = next((i for i in t.rows_at(seq) if t.rows[i].kind == "context"), None)
    if index is None:
        raise HTTPException(404, f"event {seq} is not a context row")
    return view(t, index)


@router.get("/sessions/{key}/contexts/{seq}", response_class=HTMLResponse, include_in_schema=False)
def context_body(request: Request, state: State, session: ReadSession, seq: int) -> HTMLResponse:
    return state.page(request, "forms/body.html", view=_context(state, session, seq).part)


@router.get("/api/sessions/{key}/contexts/{seq}", summary="One context row with its rendered body")
def api_context_body(state: State, session: ReadSession, seq: int) -> ContextRowJson:
    return context_json(_context(state, session, seq))


__all__ = ["RowJson", "page_context", "router", "session_json", "window_json"]
