"""The FastAPI application factory: shared state, safety middleware, routers.

Every page at `/path` has a JSON twin at `/api/path` carrying the same data;
each router module keeps a page and its twin side by side.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..access import AccessControl, group_map
from ..log.records import NotASessionLog
from ..log.sources import RecordChanged
from ..sessions.registry import Registry, SessionGone
from ..sessions.search_index import SearchTooCostly
from ..settings import Settings
from ..store import MIB, UploadStore
from ..store.unavailable import Unavailable
from .access import Refused, authorize, identify, refusal, wants_json
from .access_log import AccessLog, open_access_log
from .fair_share import FairShare
from .nearest import nearest
from .present.entries import child_session_url, entry_json
from .routes import (
    admin,
    bodies,
    compare,
    generations,
    health,
    listing,
    live,
    media,
    messages,
    outline,
    pushes,
    search_across,
    sessions,
    signing,
    steps,
    timeline,
    uploads,
)
from .sign_in import SESSION_COOKIE, SignIn
from .state import STATIC, AmbiguousKey, WebState, identity

# No page of this server may be framed by another one (clickjacking): `frame-ancestors` says so to
# browsers that read CSP, X-Frame-Options to those that do not.
FRAME_ANCESTORS = "frame-ancestors 'none'"
CSP = f"default-src 'self'; script-src 'self'; style-src 'self'; {FRAME_ANCESTORS}"
SAFETY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def cross_site(request: Request) -> bool:
    """A state-changing request sent by another site's page (a form post, a fetch).

    Browsers say so in `Sec-Fetch-Site`, or else in `Origin`; a script sends neither and passes. `Sec-Fetch-Site`
    decides when sent: under `Referrer-Policy: no-referrer` a browser posts this server's own forms with
    `Origin: null`."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return False
    own = f"{request.url.scheme}://{request.headers.get('host', '')}".lower()
    return origin.strip().lower() != own


def with_safety_headers(message: Message) -> Message:
    """A response start with the safety headers; a CSP the response brought keeps its rules and gains ours."""
    headers = MutableHeaders(scope=message)
    own = headers.get("content-security-policy")
    if own is None:
        headers["Content-Security-Policy"] = CSP
    elif "frame-ancestors" not in own:
        headers["Content-Security-Policy"] = f"{own.rstrip('; ')}; {FRAME_ANCESTORS}"
    for name, value in SAFETY_HEADERS.items():
        headers[name] = value
    return message


class SafetyHeaders:
    """The safety headers on every response, errors included; a Host header that names another site is
    refused (DNS rebinding), and so is a state-changing request from another site's page.

    Plain ASGI, not `BaseHTTPMiddleware`: it sees every response start, a 500 it sends itself included."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_safely(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = with_safety_headers(message)
            await send(message)

        refusal = self.refusal(Request(scope))
        if refusal is not None:
            await refusal(scope, receive, send_safely)
            return
        try:
            await self.app(scope, receive, send_safely)
        except Exception:
            if not started:  # the server's own 500 would go out without our headers
                await PlainTextResponse("Internal Server Error", status_code=500)(scope, receive, send_safely)
            raise

    def refusal(self, request: Request) -> Response | None:
        if not self.settings.host_allowed(request.headers.get("host")):
            return PlainTextResponse(
                "This server answers only to its own address (Host header refused); to answer to this name too, "
                "start it with --allow-host NAME.",
                status_code=421,
            )
        if request.method not in SAFE_METHODS and cross_site(request):
            return PlainTextResponse(
                "Refused: uploads, deletes and other posts are accepted from this server's own pages "
                "and from scripts that send no Origin header, not from another site.",
                status_code=403,
            )
        return None


def page_path(request: Request) -> bool:
    """A page or one of its partials, answered in HTML: not the JSON API, not a static file."""
    path = request.url.path
    return not path.startswith(("/api/", "/static/")) and path != "/openapi.json"


async def http_error(request: Request, exc: Exception) -> Response:
    """A page's 404 as a page a reader can read (a session whose log was deleted, emptied or rewritten
    with another session); every other error, and any under /api/, as FastAPI answers it (JSON).

    An address no route answers ran no access dependency: with access control on, it is refused as any route
    would refuse the request's identity; the page's suggestion is only of what that identity may read."""
    assert isinstance(exc, HTTPException)
    web: WebState = request.app.state.web
    if exc.status_code == 404 and getattr(request.state, "identity", None) is None and web.settings.access_control:
        try:
            who = await identify(request)
        except Refused as refused:
            return await refusal(request, refused)
        if not who.known:
            return await refusal(request, Refused(401, "sign in, or send an API token", who))
    if exc.status_code != 404 or not page_path(request):
        return await http_exception_handler(request, exc)
    who = identity(request)
    near = nearest(web.registry, request.url.path, who) if who.can("read") else None
    response = web.page(request, "missing.html", detail=exc.detail, nearest=near)
    response.status_code = 404
    return response


async def ambiguous_key(request: Request, exc: Exception) -> Response:
    """A short key several copies share: each copy with its source and its own key, never a guess."""
    assert isinstance(exc, AmbiguousKey)
    copies = [entry_json(e) for e in exc.copies]  # those the request's identity may see (WebState.entry)
    if not page_path(request):
        detail = f"{exc.key!r} names {len(copies)} loaded sessions: ask for one by its key"
        return JSONResponse({"detail": detail, "key": exc.key, "copies": copies}, status_code=300)
    # the rest of the address (a step, a message) goes with each copy's link
    suffix = request.url.path.partition(f"/sessions/{exc.key}")[2]
    web: WebState = request.app.state.web
    response = web.page(request, "chooser.html", key=exc.key, copies=copies, suffix=suffix)
    response.status_code = 300
    return response


ECHOED = 100  # the most of a refused parameter a 422 says back


def _shortened(value: Any) -> Any:
    """A refused value as a 422 says it back: a long text cut, so an answer never echoes what it refused."""
    if isinstance(value, str) and len(value) > ECHOED:
        return value[:ECHOED] + f"… ({len(value)} characters)"
    return value


async def invalid_request(request: Request, exc: Exception) -> Response:
    """FastAPI's 422 for a request its parameters refuse, each refused value cut short."""
    assert isinstance(exc, RequestValidationError)
    errors = [{**e, "input": _shortened(e.get("input"))} if "input" in e else e for e in exc.errors()]
    return JSONResponse({"detail": jsonable_encoder(errors)}, status_code=422)


async def search_too_costly(request: Request, exc: Exception) -> Response:
    """A search stopped at its time limit: 422 saying how to narrow it."""
    return await http_error(request, HTTPException(422, str(exc)))


async def session_gone(request: Request, exc: Exception) -> Response:
    """A session that went while a request read it: a 404, as for a key never known."""
    return await http_error(request, HTTPException(404, f"no session {exc.args[0]!r}"))


async def log_changed(request: Request, exc: Exception) -> Response:
    """A log whose records changed under a request reading them: its read copy is dropped, so the next look
    reads it afresh, and this request answers as for a session that went, never with another record's content."""
    assert isinstance(exc, RecordChanged)
    web: WebState = request.app.state.web
    web.registry.drop(exc)
    return await http_error(request, HTTPException(404, str(exc)))


async def not_a_log(request: Request, exc: Exception) -> Response:
    """A file found as a session that reads as none: 422 with where reading stopped, as `WebState.session` says."""
    assert isinstance(exc, NotASessionLog)
    return await http_error(request, HTTPException(422, f"{exc.reason} ({exc.location.describe()})"))


RETRY_SECONDS = 5  # what a 503 tells a client to wait before asking again

_log = logging.getLogger("dsh_inspect.dependencies")


async def unavailable(request: Request, exc: Exception) -> Response:
    """A dependency that does not answer (the catalog, the object store, the search index): 503 with
    `Retry-After`, naming it by role alone; where it lives goes to the server's log, never to the client."""
    assert isinstance(exc, Unavailable)
    _log.warning("%s %s: %s", request.method, request.url.path, exc.detail)
    headers = {"Retry-After": str(RETRY_SECONDS)}
    if not page_path(request) or wants_json(request):
        return JSONResponse({"detail": exc.public, "unavailable": exc.role}, status_code=503, headers=headers)
    web: WebState = request.app.state.web
    again = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    response = web.page(request, "unavailable.html", role=exc.role, again=again if request.method == "GET" else "/")
    response.status_code = 503
    response.headers.update(headers)
    return response


async def describe(app: FastAPI) -> JSONResponse:
    """The OpenAPI document, for any identity."""
    return JSONResponse(app.openapi())


def create_app(paths: list[str], settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    # The interactive docs pages load their scripts from a CDN, which the CSP (and no network) forbid;
    # the OpenAPI document itself is served at /openapi.json.
    # Every route runs the access dependency (web/access.py), the API's description included: it is served as
    # a route of ours (`describe`), not FastAPI's own, which no dependency guards.
    app = FastAPI(
        title="dsh-inspect",
        summary="Read deepseek-harness session logs",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(authorize)],
    )
    store = (
        UploadStore(
            settings.data_dir,
            settings.limits(),
            catalog_url=settings.store,
            blobs_url=settings.blobs,
            read_cache_bytes=settings.read_cache_mb * MIB,
            waits=settings.waits(),
        )
        if settings.data_dir
        else None
    )
    if settings.access_control and store is None:
        raise ValueError("access control keeps its tokens and audit trail in the upload catalog: give --data-dir")
    sign_in = SignIn.configured(settings, group_map(settings.access_file))
    registry = Registry(paths, store, limits=settings.read_limits(), cache_bytes=settings.cache_mb * MIB)
    access = (
        AccessControl.over(
            store.access,
            attempts_per_minute=settings.token_attempts,
            audit_days=settings.audit_days,
            upload_bytes_per_hour=settings.upload_mb_per_hour * MIB,
            largest_upload=settings.max_upload_mb * MIB,
        )
        if store is not None
        else None
    )
    app.state.web = WebState(settings=settings, registry=registry, store=store, access=access, sign_in=sign_in)
    app.state.web.templates.env.globals["sign_in_enabled"] = sign_in is not None
    app.state.web.templates.env.globals["access_control"] = settings.access_control
    app.state.web.templates.env.globals["open_beyond_loopback"] = settings.open_beyond_loopback
    app.state.web.templates.env.globals["uploads_enabled"] = store is not None
    app.state.web.templates.env.globals["live_mark"] = partial(live.page_mark, app.state.web)
    app.state.web.templates.env.globals["summaries_at_once"] = listing.SUMMARIES_AT_ONCE  # sessions/cells.html
    # a subagent tool row links the child session it names, when that is loaded too (templates/rows/tool-call.html)
    app.state.web.templates.env.globals["child_session_url"] = partial(child_session_url, app.state.web)
    if sign_in is not None:  # inside the safety headers: its cookie goes out on responses they vouch for
        app.add_middleware(
            SessionMiddleware,
            secret_key=sign_in.cookie_key,
            session_cookie=SESSION_COOKIE,
            max_age=settings.session_hours * 3600,
            same_site="lax",  # the provider's redirect back is a top-level navigation from its site
            https_only=sign_in.secure,
        )
    app.add_middleware(FairShare, shares=app.state.web.shares, slots=app.state.web.slots)
    app.add_middleware(SafetyHeaders, settings=settings)
    app.add_middleware(AccessLog, log=open_access_log(settings.access_log), identities=settings.access_control)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(SessionGone, session_gone)
    app.add_exception_handler(AmbiguousKey, ambiguous_key)
    app.add_exception_handler(NotASessionLog, not_a_log)
    app.add_exception_handler(RecordChanged, log_changed)
    app.add_exception_handler(Refused, refusal)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(SearchTooCostly, search_too_costly)
    app.add_exception_handler(Unavailable, unavailable)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.include_router(signing.router)  # /auth/*: sign in with a token, sign out
    app.include_router(health.router)  # /healthz, /readyz: probes, open to all
    app.include_router(admin.router)  # tokens and the audit trail
    app.add_api_route("/openapi.json", partial(describe, app), methods=["GET"], include_in_schema=False)
    app.include_router(listing.router)
    app.include_router(sessions.router)
    app.include_router(bodies.router)
    app.include_router(live.router)
    app.include_router(media.router)
    app.include_router(uploads.router)
    app.include_router(pushes.router)  # appends of a log's new bytes (dsh-inspect push)
    app.include_router(steps.router)  # what the model read: model views and the context budget
    app.include_router(timeline.router)  # where the time went
    app.include_router(outline.router)  # the outline in the session page's margin
    app.include_router(messages.router)  # message identities
    app.include_router(compare.router)  # two sessions side by side
    app.include_router(search_across.router)  # search across every loaded session
    app.include_router(generations.router)  # a session's format generations
    search_across.keep_index(app)  # its index, which follows the registry: a deleted upload's rows go with it
    return app
