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

from ..store import UploadStore
from . import (
    bodies,
    listing,
    live,
    media,
    messages,
    sessions,
    steps,
    uploads,
)
from .registry import Registry
from .settings import Settings
from .state import STATIC, WebState

CSP = "default-src 'self'; script-src 'self'; style-src 'self'"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def cross_site(request: Request) -> bool:
    """A state-changing request sent by another site's page (a form post, a fetch).

    Browsers say so in `Origin` or `Sec-Fetch-Site`; a script sends neither and passes."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return True
    origin = request.headers.get("origin")
    if origin is None:
        return False
    own = f"{request.url.scheme}://{request.headers.get('host', '')}".lower()
    return origin.strip().lower() != own


class SafetyHeaders(BaseHTTPMiddleware):
    """CSP on every response; a Host header that names another site is refused (DNS rebinding)."""

    def __init__(self, app: Any, settings: Settings) -> None:
        super().__init__(app)
        self.settings = settings

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if not self.settings.host_allowed(request.headers.get("host")):
            return PlainTextResponse(
                "This server answers only to its own address (Host header refused).", status_code=421
            )
        if request.method not in SAFE_METHODS and cross_site(request):
            return PlainTextResponse(
                "Refused: uploads and deletes are accepted from this server's own pages "
                "and from scripts that send no Origin header, not from another site.",
                status_code=403,
            )
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response


def create_app(paths: list[str], settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    # The interactive docs pages load their scripts from a CDN, which the CSP (and no network) forbid;
    # the OpenAPI document itself is served at /openapi.json.
    app = FastAPI(title="dsh-inspect", summary="Read deepseek-harness session logs", docs_url=None, redoc_url=None)
    store = UploadStore(settings.data_dir, settings.limits()) if settings.data_dir else None
    app.state.web = WebState(settings=settings, registry=Registry(paths, store), store=store)
    app.state.web.templates.env.globals["uploads_enabled"] = store is not None
    app.add_middleware(SafetyHeaders, settings=settings)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.include_router(listing.router)
    app.include_router(sessions.router)
    app.include_router(bodies.router)
    app.include_router(live.router)
    app.include_router(media.router)
    app.include_router(uploads.router)
    app.include_router(steps.router)  # what the model read: model views and the context budget
    app.include_router(messages.router)  # message identities
    return app
