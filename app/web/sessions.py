"""The session list and the session page, with their JSON twins and context bodies."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from app.history.session import SessionLog
from app.history.transcript import build_rows, context_row_at
from app.web.registry import Entry
from app.web.rows import RowView, context_json, row_json, row_view
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


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def index(request: Request) -> HTMLResponse:
    state = web(request)
    return state.page(request, "index.html", **sessions_json(state))


@router.get("/api/sessions", summary="The loaded sessions")
def api_sessions(request: Request) -> dict[str, Any]:
    return sessions_json(web(request))


@router.get("/sessions/{key}", response_class=HTMLResponse, include_in_schema=False)
def session_page(request: Request, key: str) -> HTMLResponse:
    state = web(request)
    entry, log = state.session(key)
    views = [row_view(log, row) for row in build_rows(log)]
    return state.page(request, "session.html", session=session_json(entry, log), rows=views,
                      base_url=session_url(entry.key))


@router.get("/api/sessions/{key}", summary="One session: verdict, counts, diagnostics and rows")
def api_session(request: Request, key: str) -> dict[str, Any]:
    entry, log = web(request).session(key)
    return {**session_json(entry, log), "rows": [row_json(row_view(log, r)) for r in build_rows(log)]}


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
