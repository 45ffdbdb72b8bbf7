"""The session page: windows of rows, its facts, events, context bodies, search; JSON twins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from ...access import OPEN, Identity
from ...forms import pretty_json
from ...history.session import SessionLog
from ...history.spend.tokens import session_usage
from ...model.frozen import thaw
from ...model.plain_text import title_text
from ...sessions.keys import session_url
from ...sessions.registry import Entry
from ...sessions.session_search import search
from ...sessions.transcript import END, Paging, Transcript
from ..present.entries import entry_json, related_sessions, versions_json
from ..present.facts import facts_context, session_json
from ..present.generation_facts import generation_json, generation_of, newer_format_json
from ..present.rows import RowView
from ..present.spend.timeline import cost_of, timing_of
from ..present.twins import (
    ContextRowJson,
    EventJson,
    LocatedJson,
    RowJson,
    RowSearchJson,
    SessionJson,
    WindowJson,
    context_json,
    row_json,
)
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
from ..state import Lang, ReadSession, SessionEntry, State, WebState, Who
from ..views import (
    ANCHOR_LENGTH,
    At,
    Direction,
    From,
    MaybeFrom,
    RowKind,
    SearchText,
    Served,
    To,
    fields,
    page_and_twin,
    page_or_twin,
    wants_twin,
)

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


def page_context(
    state: WebState, entry: Entry, log: SessionLog, t: Transcript, paging: Paging, who: Identity = OPEN
) -> dict[str, Any]:
    """What `session.html` is rendered with besides its rows (the page, and the one-file export)."""
    return {
        **facts_context(state, entry, log, t, who),
        "paging": paging,
        "generation": generation_json(state, entry, log),  # which of its folder's generations
        "newer_format": newer_format_json(entry.header),
    }


# `/locate?anchor=`: the row anchor to find (`msg-…`, a row key)
Anchor = Annotated[str, Query(max_length=ANCHOR_LENGTH, description="a row anchor (`msg-…`, a row key)")]

# `?run=`: a run row's key (`seq-1000-999999`); its rows are paged like a window's, `from` counting them
RunKey = Annotated[str, Query(max_length=100, description="page the rows of the run row with this key")]


# The page and its twin (`api_session`) keep a handler each: the page's first screen answers from the log's
# first bytes before the whole log is read (`first_screen`), and its rows are rendered windows of HTML; the twin
# reads the whole log and carries its rows as JSON.
@router.get("/sessions/{key}", response_class=HTMLResponse, include_in_schema=False)
def session_page(
    request: Request, state: State, entry: SessionEntry, who: Who, t: Lang, start: From = 0, at: At = ""
) -> HTMLResponse:
    early = first_screen(state, entry, t) if start == 0 and not at else None
    if early is not None:
        prefix, html = early
        return state.page(
            request,
            "session.html",
            session={
                **entry_json(entry),
                **versions_json(entry),
                "plainTitle": title_text(prefix.title),
                "size": file_size(entry),
            },
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
    rows_html, paging = rendered_window(state, entry, script, t, _opened_at(start, opened), at=at)
    return state.page(
        request,
        "session.html",
        rows_html=rows_html,
        opened_at=at if opened is not None else None,
        missing_at=at if at and opened is None else None,
        **page_context(state, entry, log, script, paging, who),
    )


@router.get("/sessions/{key}/facts", response_class=HTMLResponse, include_in_schema=False)
def session_facts(request: Request, state: State, session: ReadSession, who: Who) -> HTMLResponse:
    """The session's verdict, counts and relatives, read from the whole log (its JSON twin: /api/sessions/{key})."""
    entry = session.entry
    return state.page(
        request, "sessions/facts.html", **facts_context(state, entry, session.log, transcript(state, entry), who)
    )


@router.get("/api/sessions/{key}", summary="One session: verdict, counts, diagnostics and a window of rows")
def api_session(state: State, session: ReadSession, who: Who, start: From = 0, at: At = "") -> SessionJson:
    entry, log = session.entry, session.log
    t, size = transcript(state, entry), state.settings.window_rows
    window = window_json(t, _opened_at(start, t.opening(at, size) if at else None), size, at=at)
    usage = state.registry.derived(entry.key, "usage", session_usage)
    timing = timing_of(state, entry)
    return SessionJson.model_validate(
        {
            **session_json(entry, log, t),
            "related": related_sessions(state, entry, log, who),
            "usage": usage.to_json() if usage else None,
            "durations": timing.durations_json() if timing.wall_ms is not None else None,
            "cost": cost_of(state, entry).detail_json(),
            **window.model_dump(),
            "at": at or None,
            "atIndex": t.index_at(at) if at else None,
            "generation": generation_json(state, entry, log),
            "newerFormat": newer_format_json(entry.header),
        }
    )


def _opened_at(start: int, opened: int | None) -> int:
    """Where a page or its twin opens: at the window `?at=` opens, else at `from`."""
    return start if opened is None else opened


@dataclass(frozen=True, slots=True)
class RowsAsked:
    """What `/rows` asks for, in the URL: `from` (up to `to`; with `to` alone, the window that ends there), or
    the window `at` opens; with `run`, a page of that run row's rows, `from` and `to` counting them."""

    start: int | None
    stop: int | None
    at: str
    run: str


def rows_asked(start: MaybeFrom = None, stop: To = None, at: At = "", run: RunKey = "") -> RowsAsked:
    return RowsAsked(start, stop, at, run)


@dataclass(frozen=True, slots=True)
class Rows:
    """The rows `RowsAsked` names: of run row `run` (None: of the transcript), from `start`, before `stop`."""

    run: int | None
    start: int
    stop: int | None


def rows_of(t: Transcript, asked: RowsAsked, size: int) -> Rows:
    """Where the rows asked for lie; 404 when no row has `at`, or no run row is `run`."""
    start = asked.start
    if start is None:
        start = 0 if asked.stop is None else max(0, asked.stop - size)
    if asked.run:
        index = t.positions.get(asked.run)
        if index is None or t.rows[index].count == 1:
            raise HTTPException(404, f"no run row {asked.run!r}")
        return Rows(index, start, asked.stop)
    if not asked.at:
        return Rows(None, start, asked.stop)
    opened = t.opening(asked.at, size)
    if opened is None:
        raise HTTPException(404, f"no row {asked.at!r}")
    return Rows(None, opened, None)


AskedRows = Annotated[RowsAsked, Depends(rows_asked)]


# The page's script asks for rows in HTML, saying which way it pages (the loader it swaps in); the twin pages by
# `from` and `to` alone: the two keep a handler each, and share what they are asked (`AskedRows`).
@router.get("/sessions/{key}/rows", response_class=HTMLResponse, include_in_schema=False)
def rows_partial(
    state: State, session: ReadSession, t: Lang, asked: AskedRows, direction: Direction = ""
) -> HTMLResponse:
    """A window of rows (`RowsAsked`), with loaders for its neighbours."""
    entry = session.entry
    script = transcript(state, entry)
    rows = rows_of(script, asked, state.settings.window_rows)
    if rows.run is not None:
        return HTMLResponse(rendered_run(state, entry, script, t, rows.run, rows.start, direction, rows.stop))
    html, _ = rendered_window(state, entry, script, t, rows.start, direction, rows.stop, at=asked.at)
    return HTMLResponse(html)


@router.get(
    "/api/sessions/{key}/rows",
    summary="A window of rows (from a row index, or opened at an anchor), or a page of a run row's rows (`run`)",
)
def api_rows(state: State, session: ReadSession, asked: AskedRows) -> WindowJson:
    t, size = transcript(state, session.entry), state.settings.window_rows
    rows = rows_of(t, asked, size)
    if rows.run is not None:
        return run_json(t, rows.run, rows.start, size, rows.stop)
    return window_json(t, rows.start, size, rows.stop, asked.at)


@router.get("/api/sessions/{key}/search", summary="Rows matching a text and facets, in order")
def api_search(
    state: State,
    session: ReadSession,
    q: SearchText = "",
    kind: RowKind = "",
    form: str = "",
    tool: str = "",
    errors: bool = False,
    raw: bool = Query(False, description="match the words in raw event JSON too, not only in what rows show"),
) -> RowSearchJson:
    t = transcript(state, session.entry)
    found = searchables(state, session.entry, t)
    hits = search(found, q=q, kind=kind, form=form, tool=tool, errors=errors, raw=raw)
    return RowSearchJson.model_validate(
        {
            "query": {"q": q, "kind": kind, "form": form, "tool": tool, "errors": errors, "raw": raw},
            "matches": [
                {"index": i, "anchor": t.anchors[i], "kind": t.rows[i].kind, "seq": t.rows[i].seq} for i in hits
            ],
        }
    )


@router.get("/api/sessions/{key}/locate", summary="The row index of an anchor, to open its window")
def api_locate(state: State, session: ReadSession, anchor: Anchor) -> LocatedJson:
    t = transcript(state, session.entry)
    index = None if anchor == END else t.index_at(anchor)  # a row inside a run: the run's
    if index is None:
        raise HTTPException(404, f"no row {anchor!r}")
    return LocatedJson(anchor=anchor, index=index, seq=t.rows[index].seq)


def event_json(state: WebState, session: ReadSession, seq: int) -> EventJson:
    """Event `seq` as stored; one past dsh's view (a record after a defect) is numbered after the log's events."""
    log = session.log
    readable = transcript(state, session.entry).readable if seq >= log.event_count else None
    count = readable.event_count if readable is not None else log.event_count
    if not 0 <= seq < count:
        raise HTTPException(404, f"no event {seq}")
    event = readable.event(seq) if readable is not None else log.event(seq)
    outside = readable.outside(seq) if readable is not None else None
    return EventJson(seq=seq, type=event.type, synthetic=event.synthetic, event=thaw(event.raw), outside=outside)


@page_and_twin(
    router,
    "/sessions/{key}/events/{seq}",
    twin=EventJson,
    summary="One event as stored (after dsh's upgrades)",
    name="api_event",
)
def event(request: Request, state: State, session: ReadSession, seq: int) -> Served[EventJson]:
    key = session.entry.key
    return page_or_twin(
        request,
        event_json(state, session, seq),
        "event.html",
        lambda found: {
            **fields(found),
            "session_key": key,
            "base_url": session_url(key),
            "event_json": pretty_json(found.event),
        },
    )


def _context(state: WebState, session: ReadSession, seq: int) -> RowView:
    t = transcript(state, session.entry)
    index = next((i for i in t.rows_at(seq) if t.rows[i].kind == "context"), None)
    if index is None:
        raise HTTPException(404, f"event {seq} is not a context row")
    return view(t, index)


@page_and_twin(
    router,
    "/sessions/{key}/contexts/{seq}",
    twin=ContextRowJson,
    summary="One context row with its rendered body",
    name="api_context_body",
)
def context_body(request: Request, state: State, session: ReadSession, seq: int) -> Served[ContextRowJson]:
    # the page renders the row's form from its view (`forms/body.html`); the twin carries the body as JSON
    row = _context(state, session, seq)
    return context_json(row) if wants_twin(request) else state.page(request, "forms/body.html", view=row.part)


__all__ = ["RowJson", "page_context", "router", "session_json", "window_json"]
