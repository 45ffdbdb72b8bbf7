"""The FastAPI application factory: shared state, safety middleware, routers.

Every page at `/path` has a JSON twin at `/api/path` carrying the same data;
each router module keeps a page and its twin side by side.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint

from app.web import sessions
from app.web.registry import Registry
from app.web.settings import Settings
from app.web.state import STATIC, WebState

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


def create_app(paths: list[str], settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    app = FastAPI(title="dsh-inspect", summary="Read deepseek-harness session logs")
    app.state.web = WebState(settings=settings, registry=Registry(paths))
    app.add_middleware(SafetyHeaders, settings=settings)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.include_router(sessions.router)
    return app

