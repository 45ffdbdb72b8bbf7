"""The session list and the session page: windows of rows, events, search; JSON twins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from app.history.session import SessionLog
from app.history.transcript import Row, build_rows, context_row_at
from app.model.frozen import thaw
from app.web.registry import Entry
from app.web.rows import RowView, context_json, row_json, row_view
from app.web.search import RowFacts, row_facts, search
from app.web.state import WebState, session_url, web

router = APIRouter()


def entry_json(entry: Entry) -> dict[str, Any]:
    header = entry.header or {}
    return {
        "key": entry.key,
        "id": entry.session_id,
        "path": entry.source.label,
        "carrier": entry.source.kind,
        "url": session_url(entry.key),
        "cwd": header.get("cwd") if isinstance(header.get("cwd"), str) else None,
        "createdAt": header.get("createdAt"),
        "parentSession": header.get("parentSession"),
    }


def sessions_json(state: WebState) -> dict[str, Any]:
    state.registry.refresh()
    return {"sessions": [entry_json(e) for e in state.registry.entries()],
            "refused": [{"path": r.path, "reason": r.reason} for r in state.registry.refused()]}


def session_json(entry: Entry, log: SessionLog) -> dict[str, Any]:
    verdict = log.verdict
    return {
        **entry_json(entry),
        "header": log.header.to_json() if log.header else None,
        "title": log.title,
        "verdict": {"category": verdict.category, "accepted": verdict.accepted, "reason": verdict.reason,
                    "location": verdict.location.describe() if verdict.location else None,
                    "repairs": list(verdict.repairs)},
        "events": log.event_count,
        "messages": log.message_count,
        "turns": log.turns,
        "steps": log.steps,
        "diagnostics": [d.to_json() for d in log.diagnostics],
    }


@dataclass(frozen=True, slots=True)
class Transcript:
    """A session's rows and their anchors, built once per file version."""

    rows: list[Row]
    anchors: list[str]


def _transcript(log: SessionLog) -> Transcript:
    rows = build_rows(log)
    seen: dict[str, int] = {}
    anchors = []
    for row in rows:
        mid = log.message_ids.get(row.seq) if row.kind in _MESSAGE_ROWS else None
        if mid is None:
            anchors.append(row.key)
            continue
        n = seen.get(mid, 0) + 1
        seen[mid] = n
        anchors.append(f"msg-{mid}" + (f"~{n}" if n > 1 else ""))
    return Transcript(rows, anchors)


_MESSAGE_ROWS = frozenset({"user", "steering", "context", "assistant-step", "compaction"})


def transcript(state: WebState, key: str) -> tuple[Entry, SessionLog, Transcript]:
    entry, log = state.session(key)
    return entry, log, state.registry.derived(entry.key, "transcript", _transcript)


def window(state: WebState, key: str, start: int) -> tuple[Entry, SessionLog, Transcript, list[RowView], int]:
    entry, log, t = transcript(state, key)
    size = state.settings.window_rows
    start = max(0, min(start, max(len(t.rows) - 1, 0)))
    cwd = log.header.cwd if log.header else None
    views = [row_view(log, row, cwd, t.anchors[i]) for i, row in enumerate(t.rows[start : start + size], start)]
    return entry, log, t, views, start


def window_json(t: Transcript, views: list[RowView], start: int, size: int) -> dict[str, Any]:
    end = start + len(views)
    return {"from": start, "to": end, "totalRows": len(t.rows),
            "previousFrom": max(0, start - size) if start > 0 else None,
            "nextFrom": end if end < len(t.rows) else None,
            "rows": [row_json(v) for v in views]}


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def index(request: Request) -> HTMLResponse:
    state = web(request)
    return state.page(request, "index.html", **sessions_json(state))


@router.get("/api/sessions", summary="The loaded sessions")
def api_sessions(request: Request) -> dict[str, Any]:
    return sessions_json(web(request))


@router.get("/sessions/{key}", response_class=HTMLResponse, include_in_schema=False)
def session_page(request: Request, key: str, start: int = Query(0, alias="from", ge=0)) -> HTMLResponse:
    state = web(request)
    entry, log, t, views, start = window(state, key, start)
    return state.page(request, "session.html", session=session_json(entry, log), rows=views,
                      base_url=session_url(entry.key),
                      paging=window_json(t, views, start, state.settings.window_rows))


@router.get("/api/sessions/{key}", summary="One session: verdict, counts, diagnostics and a window of rows")
def api_session(request: Request, key: str, start: int = Query(0, alias="from", ge=0)) -> dict[str, Any]:
    state = web(request)
    entry, log, t, views, start = window(state, key, start)
    return {**session_json(entry, log), **window_json(t, views, start, state.settings.window_rows)}


@router.get("/sessions/{key}/rows", response_class=HTMLResponse, include_in_schema=False)
def rows_partial(request: Request, key: str, start: int = Query(0, alias="from", ge=0),
                 direction: str = Query("", pattern="^(earlier|later|)$")) -> HTMLResponse:
    state = web(request)
    entry, _, t, views, start = window(state, key, start)
    return state.page(request, "rows/window.html", rows=views, base_url=session_url(entry.key),
                      paging=window_json(t, views, start, state.settings.window_rows), direction=direction)


@router.get("/api/sessions/{key}/rows", summary="A window of rows")
def api_rows(request: Request, key: str, start: int = Query(0, alias="from", ge=0)) -> dict[str, Any]:
    state = web(request)
    _, _, t, views, start = window(state, key, start)
    return window_json(t, views, start, state.settings.window_rows)


def _facts(state: WebState, key: str) -> list[RowFacts]:
    entry, _, t = transcript(state, key)
    return state.registry.derived(entry.key, "search", lambda log: [row_facts(log, r) for r in t.rows])


@router.get("/api/sessions/{key}/search", summary="Rows matching a text and facets, in order")
def api_search(request: Request, key: str, q: str = "", kind: str = "", form: str = "", tool: str = "",
               errors: bool = False) -> dict[str, Any]:
    state = web(request)
    _, _, t = transcript(state, key)
    hits = search(_facts(state, key), q=q, kind=kind, form=form, tool=tool, errors=errors)
    return {"query": {"q": q, "kind": kind, "form": form, "tool": tool, "errors": errors},
            "matches": [{"index": i, "anchor": t.anchors[i], "kind": t.rows[i].kind, "seq": t.rows[i].seq}
                        for i in hits]}


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
    if not 0 <= seq < log.event_count:
        raise HTTPException(404, f"no event {seq}")
    event = log.event(seq)
    return entry, {"seq": seq, "type": event.type, "synthetic": event.synthetic, "event": thaw(event.raw)}


def _pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


@router.get("/sessions/{key}/events/{seq}", response_class=HTMLResponse, include_in_schema=False)
def event_page(request: Request, key: str, seq: int) -> HTMLResponse:
    state = web(request)
    entry, event = _event(state, key, seq)
    return state.page(request, "event.html", session_key=entry.key, base_url=session_url(entry.key),
                      event_json=_pretty(event["event"]), **event)


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
