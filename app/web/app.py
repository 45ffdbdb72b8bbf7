"""The FastAPI application: HTML pages, their JSON twins, htmx partials.

Every page at `/path` has a JSON twin at `/api/path` carrying the same data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint

from app.history.session import SessionLog
from app.history.transcript import build_rows, context_row_at
from app.log.records import NotASessionLog
from app.web.registry import Entry, Registry
from app.web.rows import RowView, context_json, row_json, row_view
from app.web.settings import Settings
from app.web.strings import strings_for

PROJECT = Path(__file__).resolve().parents[2]
TEMPLATES = PROJECT / "templates"
STATIC = PROJECT / "static"
HTMX = "htmx-2.0.11.min.js"
CSP = "default-src 'self'; script-src 'self'; style-src 'self'"


class SafetyHeaders(BaseHTTPMiddleware):
    """CSP on every response; a Host header that names another site is refused (DNS rebinding)."""

    def __init__(self, app: Any, settings: Settings) -> None:
        super().__init__(app)
        self.settings = settings

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if not self.settings.host_allowed(request.headers.get("host")):
            return PlainTextResponse("This server answers only to its own address (Host header refused).",
                                     status_code=421)
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response


def session_url(key: str) -> str:
    return f"/sessions/{quote(key, safe='')}"


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


def create_app(paths: list[str], settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    registry = Registry(paths)
    templates = Jinja2Templates(directory=str(TEMPLATES))
    env = templates.env
    env.trim_blocks = True
    env.lstrip_blocks = True
    env.globals["htmx_js"] = HTMX
    app = FastAPI(title="dsh-inspect")
    app.add_middleware(SafetyHeaders, settings=settings)
    app.state.registry = registry
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    def page(request: Request, name: str, **context: Any) -> HTMLResponse:
        t = strings_for(request.headers.get("accept-language"))
        return templates.TemplateResponse(request, name, {"t": t, "lang": t.lang, **context})

    def load(key: str) -> tuple[Entry, SessionLog]:
        entry = registry.entry(key)
        if entry is None:
            registry.refresh()
            entry = registry.entry(key)
        if entry is None:
            raise HTTPException(404, f"no session {key!r}")
        try:
            log = registry.log(key)
        except NotASessionLog as exc:
            raise HTTPException(422, f"{exc.reason} ({exc.location.describe()})") from None
        assert log is not None
        return entry, log

    def sessions_json() -> dict[str, Any]:
        registry.refresh()
        return {"sessions": [entry_json(e) for e in registry.entries()],
                "refused": [{"path": r.path, "reason": r.reason} for r in registry.refused()]}

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

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index(request: Request) -> HTMLResponse:
        return page(request, "index.html", **sessions_json())

    @app.get("/api/sessions", summary="The loaded sessions")
    def api_sessions() -> dict[str, Any]:
        return sessions_json()

    @app.get("/sessions/{key}", response_class=HTMLResponse, include_in_schema=False)
    def session_page(request: Request, key: str) -> HTMLResponse:
        entry, log = load(key)
        views = [row_view(log, row) for row in build_rows(log)]
        return page(request, "session.html", session=session_json(entry, log), rows=views,
                    base_url=session_url(entry.key))

    @app.get("/api/sessions/{key}", summary="One session: verdict, counts, diagnostics and rows")
    def api_session(key: str) -> dict[str, Any]:
        entry, log = load(key)
        return {**session_json(entry, log), "rows": [row_json(row_view(log, r)) for r in build_rows(log)]}

    def context_of(key: str, seq: int) -> RowView:
        _, log = load(key)
        row = context_row_at(log, seq)
        if row is None:
            raise HTTPException(404, f"event {seq} is not a context row")
        return row_view(log, row)

    @app.get("/sessions/{key}/contexts/{seq}", response_class=HTMLResponse, include_in_schema=False)
    def context_body(request: Request, key: str, seq: int) -> HTMLResponse:
        return page(request, "forms/body.html", view=context_of(key, seq).context)

    @app.get("/api/sessions/{key}/contexts/{seq}", summary="One context row with its rendered body")
    def api_context_body(key: str, seq: int) -> dict[str, Any]:
        return context_json(context_of(key, seq))

    return app
