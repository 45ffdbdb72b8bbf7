"""The session list and the session page: windows of rows, events, search; JSON twins."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import orjson
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from ..history.session import SessionLog
from ..history.tokens import session_usage
from ..history.transcript import ReadableLog, Row, context_row_at, transcript_rows
from ..log.diagnostics import Diagnostic
from ..model.frozen import thaw
from .entries import entry_json, related_sessions
from .media import media_of
from .registry import Entry
from .rows import RowView, context_json, row_json, row_view
from .search import RowFacts, row_facts, search
from .state import WebState, session_url, web
from .strings import Strings, strings_for

router = APIRouter()


def session_json(entry: Entry, log: SessionLog, t: Transcript) -> dict[str, Any]:
    """The session's facts; its diagnostics are the page's diagnostic rows, in page order."""
    verdict = log.verdict
    return {
        **entry_json(entry),
        "header": log.header.to_json() if log.header else None,
        "title": log.title,
        "verdict": {
            "category": verdict.category,
            "accepted": verdict.accepted,
            "reason": verdict.reason,
            "location": verdict.location.describe() if verdict.location else None,
            "repairs": list(verdict.repairs),
        },
        "events": log.event_count,
        "messages": log.message_count,
        "turns": log.turns,
        "steps": log.steps,
        "diagnostics": [d.to_json() for d in t.diagnostics],
        "size": _size(entry),
    }


def _size(entry: Entry) -> int | None:
    """The file's size when it was read, so a live page can ask for what came after."""
    try:
        return os.stat(entry.source.path).st_size
    except OSError:
        return None


WINDOWS_KEPT = 4  # rendered windows kept per session version: the first screen and the latest scrolled to


class RenderedWindows:
    """Windows of one session version already rendered to HTML, with their paging; the latest few.

    Rendering a window decodes its events and runs every row template; keeping the
    result makes a long session's first screen cost what a one-turn session's does
    (PRODUCT.md Budgets, windowing; docs/decisions/0005-performance-budgets.md)."""

    def __init__(self, kept: int = WINDOWS_KEPT) -> None:
        self._kept = kept
        self._items: OrderedDict[tuple[str, int, str], tuple[Markup, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int, str]) -> tuple[Markup, dict[str, Any]] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, int, str], value: tuple[Markup, dict[str, Any]]) -> tuple[Markup, dict[str, Any]]:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._kept:
                self._items.popitem(last=False)
        return value


@dataclass(frozen=True, slots=True)
class Transcript:
    """A session's rows and their anchors, built once per file version."""

    # what the rows read their events from: the log, and the records after a defect dsh would not load
    log: SessionLog | ReadableLog
    rows: list[Row]
    anchors: list[str]
    # rendered windows of this very version, so they go when the transcript does
    windows: RenderedWindows = field(default_factory=RenderedWindows, compare=False, repr=False)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every finding about the log, one per diagnostic row, in page order (what the header counts)."""
        return [row.diagnostic for row in self.rows if row.diagnostic is not None]


def _transcript(log: SessionLog) -> Transcript:
    readable, rows = transcript_rows(log)
    return Transcript(readable, rows, [anchor_of(row) for row in rows])


def anchor_of(row: Row) -> str:
    """`msg-{id}` for a row that stands for a message (`~n` for a repeated id), else its key (PRODUCT.md Interfaces)."""
    if row.message is None:
        return row.key
    return f"msg-{row.message}" + (f"~{row.occurrence}" if row.occurrence > 1 else "")


def view_of(t: Transcript, i: int, cwd: str | None) -> RowView:
    """The view of row `i` at its anchor."""
    return row_view(t.log, t.rows[i], cwd, t.anchors[i])  # type: ignore[arg-type]  # a ReadableLog reads like its log


def transcript(state: WebState, key: str) -> tuple[Entry, SessionLog, Transcript]:
    entry, log = state.session(key)
    return entry, log, state.registry.derived(entry.key, "transcript", _transcript)


def window(state: WebState, key: str, start: int) -> tuple[Entry, SessionLog, Transcript, list[RowView], int]:
    entry, log, t = transcript(state, key)
    views, start = _window_views(state, log, t, start)
    return entry, log, t, views, start


def _window_views(state: WebState, log: SessionLog, t: Transcript, start: int) -> tuple[list[RowView], int]:
    size = state.settings.window_rows
    start = max(0, min(start, max(len(t.rows) - 1, 0)))
    cwd = log.header.cwd if log.header else None
    views = [view_of(t, i, cwd) for i in range(start, min(start + size, len(t.rows)))]
    return views, start


def rendered_window(
    state: WebState, request: Request, key: str, start: int, direction: str = ""
) -> tuple[Entry, SessionLog, Markup, dict[str, Any]]:
    """`rows/window.html` for the window at `start`, and its paging: rendered once per file version."""
    entry, log, t = transcript(state, key)
    strings = strings_for(request.headers.get("accept-language"))
    wanted = (strings.lang, start, direction)
    found = t.windows.get(wanted)
    if found is None:
        views, first = _window_views(state, log, t, start)
        paging = window_paging(t, first, len(views), state.settings.window_rows)  # the page shows no row JSON
        html = state.templates.env.get_template("rows/window.html").render(
            t=strings,
            lang=strings.lang,
            rows=views,
            base_url=session_url(entry.key),
            paging=paging,
            direction=direction,
            media=media_of(entry),
        )
        found = t.windows.put(wanted, (Markup(html), paging))
    return entry, log, found[0], found[1]


def window_json(t: Transcript, views: list[RowView], start: int, size: int) -> dict[str, Any]:
    return {**window_paging(t, start, len(views), size), "rows": [row_json(v) for v in views]}


def window_paging(t: Transcript, start: int, count: int, size: int) -> dict[str, Any]:
    """Where a window of `count` rows at `start` lies, and where its neighbours start."""
    end = start + count
    return {
        "from": start,
        "to": end,
        "totalRows": len(t.rows),
        "previousFrom": max(0, start - size) if start > 0 else None,
        "nextFrom": end if end < len(t.rows) else None,
    }


@router.get("/sessions/{key}", response_class=HTMLResponse, include_in_schema=False)
def session_page(request: Request, key: str, start: int = Query(0, alias="from", ge=0)) -> HTMLResponse:
    state = web(request)
    early = first_screen_context(state, key, request) if start == 0 else None
    return state.page(request, "session.html", **(early or session_page_context(state, key, start, request)))


def first_screen_context(state: WebState, key: str, request: Request) -> dict[str, Any] | None:
    """A long log's first screen from a prefix of it, while it has not been read whole.

    Only rows anchored before the prefix's last `turn/end` are shown: everything such a
    row draws on (a result, a hook, a step's end) lies inside its turn, so it renders as
    the whole log would. The verdict and counts follow once the log is read (`/facts`).
    None when the log is read already, or too short for this to matter."""
    entry = state.entry(key)
    log = state.registry.first_screen(entry.key, state.settings.first_screen_events)
    if log is None or not log.partial:
        return None
    strings = strings_for(request.headers.get("accept-language"))
    html = state.registry.derived_of(
        entry.key, f"first-screen:{strings.lang}", log, lambda prefix: _first_screen_html(state, entry, prefix, strings)
    )
    if html is None:
        return None
    paging = _first_window_paging(state.settings.window_rows)
    return {
        "session": {**entry_json(entry), "title": log.title, "size": _size(entry)},
        "provisional": True,
        "rows_html": html,
        "base_url": session_url(entry.key),
        "paging": paging,
    }


def _first_window_paging(size: int) -> dict[str, Any]:
    """The first window of a log not read whole: how many rows follow is not known yet."""
    return {"from": 0, "to": size, "totalRows": None, "previousFrom": None, "nextFrom": size}


def _first_screen_html(state: WebState, entry: Entry, log: SessionLog, strings: Strings) -> Markup | None:
    last_turn_end = next((seq for seq in range(len(log.types) - 1, -1, -1) if log.types[seq] == "turn/end"), None)
    size = state.settings.window_rows
    t = _transcript(log)
    settled = [row for row in t.rows if last_turn_end is not None and row.seq < last_turn_end]
    if len(settled) <= size:
        return None
    cwd = log.header.cwd if log.header else None
    views = [view_of(t, i, cwd) for i in range(size)]  # the settled rows lead the transcript
    paging = _first_window_paging(size)
    return Markup(
        state.templates.env.get_template("rows/window.html").render(
            t=strings,
            lang=strings.lang,
            rows=views,
            base_url=session_url(entry.key),
            paging=paging,
            direction="",
            media=media_of(entry),
        )
    )


@router.get("/sessions/{key}/facts", response_class=HTMLResponse, include_in_schema=False)
def session_facts(request: Request, key: str) -> HTMLResponse:
    """The session's verdict, counts and relatives, read from the whole log (its JSON twin: /api/sessions/{key})."""
    state = web(request)
    entry, log, t = transcript(state, key)
    return state.page(
        request,
        "sessions/facts.html",
        session=session_json(entry, log, t),
        base_url=session_url(entry.key),
        related=related_sessions(state, entry, log),
        usage=state.registry.derived(entry.key, "usage", session_usage),
    )


def session_page_context(state: WebState, key: str, start: int, request: Request | None = None) -> dict[str, Any]:
    """What `session.html` is rendered with (the page, and `dsh-inspect render`'s one-file export).

    With the page's `request`, the rows come already rendered (`rows_html`) from the
    transcript's per-version window cache; without, as views for the template to render."""
    if request is not None:
        entry, log, rows_html, paging = rendered_window(state, request, key, start)
        rows: dict[str, Any] = {"rows_html": rows_html}
        t = transcript(state, key)[2]
    else:
        entry, log, t, views, start = window(state, key, start)
        rows, paging = {"rows": views}, window_json(t, views, start, state.settings.window_rows)
    return {
        "session": session_json(entry, log, t),
        **rows,
        "related": related_sessions(state, entry, log),
        "usage": state.registry.derived(entry.key, "usage", session_usage),
        "base_url": session_url(entry.key),
        "paging": paging,
    }


@router.get("/api/sessions/{key}", summary="One session: verdict, counts, diagnostics and a window of rows")
def api_session(request: Request, key: str, start: int = Query(0, alias="from", ge=0)) -> dict[str, Any]:
    state = web(request)
    entry, log, t, views, start = window(state, key, start)
    usage = state.registry.derived(entry.key, "usage", session_usage)
    return {
        **session_json(entry, log, t),
        "related": related_sessions(state, entry, log),
        "usage": usage.to_json() if usage else None,
        **window_json(t, views, start, state.settings.window_rows),
    }


@router.get("/sessions/{key}/rows", response_class=HTMLResponse, include_in_schema=False)
def rows_partial(
    request: Request,
    key: str,
    start: int = Query(0, alias="from", ge=0),
    direction: str = Query("", pattern="^(earlier|later|)$"),
) -> HTMLResponse:
    _, _, html, _ = rendered_window(web(request), request, key, start, direction)
    return HTMLResponse(html)


@router.get("/api/sessions/{key}/rows", summary="A window of rows")
def api_rows(request: Request, key: str, start: int = Query(0, alias="from", ge=0)) -> dict[str, Any]:
    state = web(request)
    _, _, t, views, start = window(state, key, start)
    return window_json(t, views, start, state.settings.window_rows)


def _facts(state: WebState, key: str) -> list[RowFacts]:
    entry, _, t = transcript(state, key)
    return state.registry.derived(entry.key, "search", lambda _: [row_facts(t.log, r) for r in t.rows])  # type: ignore[arg-type]


@router.get("/api/sessions/{key}/search", summary="Rows matching a text and facets, in order")
def api_search(
    request: Request, key: str, q: str = "", kind: str = "", form: str = "", tool: str = "", errors: bool = False
) -> dict[str, Any]:
    state = web(request)
    _, _, t = transcript(state, key)
    hits = search(_facts(state, key), q=q, kind=kind, form=form, tool=tool, errors=errors)
    return {
        "query": {"q": q, "kind": kind, "form": form, "tool": tool, "errors": errors},
        "matches": [{"index": i, "anchor": t.anchors[i], "kind": t.rows[i].kind, "seq": t.rows[i].seq} for i in hits],
    }


@router.get("/api/sessions/{key}/locate", summary="The row index of an anchor, to open its window")
def api_locate(request: Request, key: str, anchor: str) -> dict[str, Any]:
    _, _, t = transcript(web(request), key)
    try:
        index = t.anchors.index(anchor)
    except ValueError:
        raise HTTPException(404, f"no row {anchor!r}") from None
    return {"anchor": anchor, "index": index, "seq": t.rows[index].seq}


def _event(state: WebState, key: str, seq: int) -> tuple[Entry, dict[str, Any]]:
    entry, log = state.session(key)
    source: SessionLog | ReadableLog = log
    if seq >= log.event_count:  # past dsh's view: a record after a defect, numbered after the log's events
        source = transcript(state, key)[2].log
    if not 0 <= seq < source.event_count:
        raise HTTPException(404, f"no event {seq}")
    event = source.event(seq)
    outside = source.outside(seq) if isinstance(source, ReadableLog) else None
    return entry, {
        "seq": seq,
        "type": event.type,
        "synthetic": event.synthetic,
        "event": thaw(event.raw),
        **({"outside": outside} if outside is not None else {}),
    }


def _pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


@router.get("/sessions/{key}/events/{seq}", response_class=HTMLResponse, include_in_schema=False)
def event_page(request: Request, key: str, seq: int) -> HTMLResponse:
    state = web(request)
    entry, event = _event(state, key, seq)
    return state.page(
        request,
        "event.html",
        session_key=entry.key,
        base_url=session_url(entry.key),
        event_json=_pretty(event["event"]),
        **event,
    )


@router.get("/api/sessions/{key}/events/{seq}", summary="One event as stored (after dsh's upgrades)")
def api_event(request: Request, key: str, seq: int) -> dict[str, Any]:
    return _event(web(request), key, seq)[1]


def _context(request: Request, key: str, seq: int) -> RowView:
    _, log = web(request).session(key)
    row = context_row_at(log, seq)
    if row is None:
        raise HTTPException(404, f"event {seq} is not a context row")
    return row_view(log, row)


@router.get("/sessions/{key}/contexts/{seq}", response_class=HTMLResponse, include_in_schema=False)
def context_body(request: Request, key: str, seq: int) -> HTMLResponse:
    return web(request).page(request, "forms/body.html", view=_context(request, key, seq).context)


@router.get("/api/sessions/{key}/contexts/{seq}", summary="One context row with its rendered body")
def api_context_body(request: Request, key: str, seq: int) -> dict[str, Any]:
    return context_json(_context(request, key, seq))
