"""Who may do what, decided for every route in one place (docs/decisions/0020-access-control.md).

`ROUTES` names each route's permission; `authorize`, the one dependency every route runs (the app declares
it), finds the request's identity and refuses what its role does not grant: 401 for no identity (a page is
sent to sign in, an htmx partial gets `HX-Redirect` instead of a sign-in page swapped into it, the API gets
`WWW-Authenticate`), 403 for an identity without the permission. A test walks the app's routes and fails on
any this table does not name.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from urllib.parse import quote

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from ..access import ANONYMOUS, OPEN, Identity, Permission
from ..access.tokens import actor_of, identity_of
from ..store.unavailable import Unavailable
from .state import WebState

# Every route, by method and path template, and the permission it needs. HEAD is GET's.
ROUTES: Mapping[tuple[str, str], Permission] = {
    # signing in and out, and the server's own description
    ("GET", "/auth/sign-in"): "public",
    ("POST", "/auth/sign-in"): "public",
    ("GET", "/auth/login"): "public",
    ("GET", "/auth/callback"): "public",
    ("POST", "/auth/logout"): "public",
    ("GET", "/openapi.json"): "identified",
    # probes of load balancers and orchestrators: they carry no token
    ("GET", "/healthz"): "public",
    ("GET", "/readyz"): "public",
    # the session list: what a `metrics` token sees too, without titles or prompts
    ("GET", "/"): "list",
    ("GET", "/api/sessions"): "list",
    ("POST", "/sessions-summaries"): "list",
    # one session's content
    ("GET", "/sessions/{key}"): "read",
    ("GET", "/api/sessions/{key}"): "read",
    ("GET", "/sessions/{key}/facts"): "read",
    ("GET", "/sessions/{key}/rows"): "read",
    ("GET", "/api/sessions/{key}/rows"): "read",
    ("GET", "/api/sessions/{key}/locate"): "read",
    ("GET", "/sessions/{key}/events/{seq}"): "read",
    ("GET", "/api/sessions/{key}/events/{seq}"): "read",
    ("GET", "/sessions/{key}/contexts/{seq}"): "read",
    ("GET", "/api/sessions/{key}/contexts/{seq}"): "read",
    ("GET", "/sessions/{key}/bodies/{seq}"): "read",
    ("GET", "/api/sessions/{key}/bodies/{seq}"): "read",
    ("GET", "/sessions/{key}/row-bodies/{seq}"): "read",
    ("GET", "/api/sessions/{key}/row-bodies/{seq}"): "read",
    ("GET", "/sessions/{key}/live"): "read",
    ("GET", "/sessions/{key}/media/{attachment_id}"): "read",
    ("GET", "/sessions/{key}/steps"): "read",
    ("GET", "/api/sessions/{key}/steps"): "read",
    ("GET", "/sessions/{key}/steps/{ref}"): "read",
    ("GET", "/api/sessions/{key}/steps/{ref}"): "read",
    ("GET", "/sessions/{key}/steps/{ref}/messages"): "read",
    ("GET", "/api/sessions/{key}/steps/{ref}/messages"): "read",
    ("GET", "/sessions/{key}/timeline"): "read",
    ("GET", "/api/sessions/{key}/timeline"): "read",
    ("GET", "/api/sessions/{key}/outline"): "read",
    ("GET", "/sessions/{key}/message-bodies/{seq}"): "read",
    ("GET", "/api/sessions/{key}/message-bodies/{seq}"): "read",
    ("GET", "/sessions/{key}/messages/{message_id:path}"): "read",
    ("GET", "/api/sessions/{key}/messages/{message_id:path}"): "read",
    ("GET", "/sessions/{key}/generations"): "read",
    ("GET", "/compare"): "read",
    ("GET", "/compare/rows"): "read",
    ("GET", "/api/compare"): "read",
    # search, in one session or across them
    ("GET", "/api/sessions/{key}/search"): "search",
    ("GET", "/search"): "search",
    ("GET", "/api/search"): "search",
    # uploads: their pages list sessions by title; their bytes are downloads
    ("GET", "/uploads"): "read",
    ("GET", "/api/uploads"): "read",
    ("GET", "/uploads/{digest}"): "read",
    ("GET", "/api/uploads/{digest}"): "read",
    ("POST", "/api/uploads"): "upload",
    ("DELETE", "/api/uploads/{digest}"): "delete",
    (
        "GET",
        "/api/pushes/{session_id:path}",
    ): "upload",  # what a push asks before it sends (docs/decisions/0024-push.md)
    ("POST", "/api/pushes/{session_id:path}"): "upload",
    ("GET", "/uploads/{digest}/raw"): "download",
    ("GET", "/sessions/{key}/raw"): "download",
    # administration
    ("GET", "/tokens"): "admin",
    ("GET", "/api/tokens"): "admin",
    ("POST", "/api/tokens"): "admin",
    ("DELETE", "/api/tokens/{name}"): "admin",
    ("GET", "/audit"): "admin",
    ("GET", "/api/audit"): "admin",
}
# Mounted apps, which no dependency runs for, and what they need.
MOUNTS: Mapping[str, Permission] = {"/static": "public"}

TOKEN_COOKIE = "dsh_inspect_token"
PERSON = "person"  # what the session cookie keeps of a person signed in (web/sign_in.py `SignIn.person`)
SIGN_IN = "/auth/sign-in"


class Refused(Exception):
    """A request refused before its route ran: answered by `refusal`."""

    def __init__(
        self, status: int, detail: str, identity: Identity, *, retry_after: int | None = None, bad_token: bool = False
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.identity = identity
        self.retry_after = retry_after
        self.bad_token = bad_token  # a token that is none: every one recorded (the attempt limit bounds them)


def permission(method: str, path: str) -> Permission | None:
    """What the route at `path` (its template) needs, or None for a route the table does not name."""
    return ROUTES.get(("GET" if method == "HEAD" else method, path))


def client_of(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def secret_of(request: Request) -> tuple[str, str] | None:
    """The token a request carries, and where: `Authorization: Bearer …`, else the sign-in cookie."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip(), "header"
    cookie = request.cookies.get(TOKEN_COOKIE)
    return (cookie, "cookie") if cookie else None


async def identify(request: Request) -> Identity:
    """Who the request acts as, found once per request: OPEN without access control, a token's identity, or
    ANONYMOUS. Raises Refused (401) for a token sent in the header that is no usable token, and (429) for a
    client past its failed attempts."""
    found: Identity | None = getattr(request.state, "identity", None)
    if found is not None:
        return found
    web: WebState = request.app.state.web
    identity = OPEN
    if web.settings.access_control:
        identity = await run_in_threadpool(_identity, web, request)
    request.state.identity = identity
    return identity


def _identity(web: WebState, request: Request) -> Identity:
    carried = secret_of(request)
    if carried is None:
        person = request.session.get(PERSON) if web.sign_in is not None and "session" in request.scope else None
        return web.sign_in.identity(person) if web.sign_in is not None and person else ANONYMOUS
    secret, where = carried
    client = client_of(request)
    access = web.access
    assert access is not None  # access control needs a catalog: `create_app` made one
    if access.attempts.blocked(client):
        raise Refused(
            429,
            "too many failed token attempts from this client: wait a minute",
            ANONYMOUS,
            retry_after=access.attempts.retry_after(client),
        )
    token = access.tokens.find(secret)
    if token is None:
        access.attempts.failed(client)
        if where == "cookie":  # a sign-in that ended (revoked, expired): signed out, not refused
            request.state.stale_cookie = True  # `refusal` drops it, so the browser stops sending it
            return ANONYMOUS
        raise Refused(401, "the token is not valid: unknown, revoked or expired", ANONYMOUS, bad_token=True)
    access.auditor.token_used(token.name, actor_of(token), request.url.path, client)
    return identity_of(token)


def still_valid(request: Request) -> bool:
    """Whether the token a long request (a live stream) came with is still usable: revoked or expired, the
    stream ends, as every other request of that token is refused."""
    web: WebState = request.app.state.web
    carried = secret_of(request)
    if not web.settings.access_control or carried is None or web.access is None:
        return True
    return web.access.tokens.find(carried[0]) is not None


async def authorize(request: Request) -> Identity:
    """The one dependency deciding every route (the app declares it for all): the request's identity, when
    the route's permission (`ROUTES`) is among its role's; else Refused."""
    route = request.scope.get("route")
    path = getattr(route, "path", request.url.path)
    needed = permission(request.method, path)
    if needed is None:  # a route the table forgot: refused, never open (the route-table test fails first)
        raise Refused(403, f"no access rule names {request.method} {path}", ANONYMOUS)
    if needed == "public":
        try:
            return await identify(request)
        except (Refused, Unavailable):  # a bad token on a public page (signing in), or no catalog to ask: nobody
            request.state.identity = ANONYMOUS
            return ANONYMOUS
    identity = await identify(request)
    if identity.can(needed):
        # what the route reaches below is what this permission reaches: only the grants that allow it
        request.state.identity = identity.narrowed(needed)
        return identity
    if not identity.known:
        raise Refused(401, "sign in, or send an API token as Authorization: Bearer …", identity)
    if not identity.grants:
        raise Refused(403, f"{identity.actor} is signed in, but no group of theirs is granted anything here", identity)
    raise Refused(403, f"{identity.actor} ({identity.role}) may not {needed} here", identity)


def wants_json(request: Request) -> bool:
    path = request.url.path
    return (
        path.startswith("/api/") or path == "/openapi.json" or "application/json" in request.headers.get("accept", "")
    )


async def refusal(request: Request, exc: Exception) -> Response:
    """A refused request, answered as its asker can use it, and recorded in the audit trail."""
    assert isinstance(exc, Refused)
    web: WebState = request.app.state.web
    if web.access is not None:
        await run_in_threadpool(
            partial(web.access.auditor.denied, every=exc.status != 429 and (exc.identity.known or exc.bad_token)),
            exc.identity.actor,
            f"{request.method} {getattr(request.scope.get('route'), 'path', request.url.path)}",
            request.url.path,
            client_of(request),
            exc.status,
        )
    headers: dict[str, str] = {}
    if exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    if exc.status == 401:
        # a page asked for by navigating goes to sign in; anything a page's script or htmx asks for gets 401
        # with `HX-Redirect`, which htmx and static/request.js follow with the whole page, never inside a fragment
        back = sign_in_url(request)
        headers.update({"WWW-Authenticate": 'Bearer realm="dsh-inspect"', "HX-Redirect": back})
        if navigation(request):
            return forget_stale(request, RedirectResponse(back, status_code=303))
        if not wants_json(request):
            return forget_stale(request, PlainTextResponse(exc.detail, status_code=401, headers=headers))
    if wants_json(request) or exc.status == 429:
        return forget_stale(request, JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=headers))
    response = web.page(request, "refused.html", status=exc.status, detail=exc.detail)
    response.status_code = exc.status
    response.headers.update(headers)
    return forget_stale(request, response)


def forget_stale(request: Request, response: Response) -> Response:
    """The answer, dropping a sign-in cookie whose token is no more: each request carrying it would count as a
    failed attempt, and a browser soon be held back from signing in again."""
    if getattr(request.state, "stale_cookie", False):
        response.delete_cookie(TOKEN_COOKIE, httponly=True, samesite="strict")
    return response


def navigation(request: Request) -> bool:
    """A page a browser navigates to (or a client that says nothing of how it fetches): not the API, not a live
    stream, not htmx or a page's script (`Sec-Fetch-Mode` other than `navigate`)."""
    if request.method != "GET" or wants_json(request) or request.url.path.endswith("/live"):
        return False
    if request.headers.get("hx-request"):
        return False
    return request.headers.get("sec-fetch-mode", "navigate") == "navigate"


def sign_in_url(request: Request) -> str:
    """Sign-in, then back to the page asked for (an htmx partial: the page it was part of)."""
    current = request.headers.get("hx-current-url") or str(request.url)
    own = f"{request.url.scheme}://{request.url.netloc}"
    back = current.removeprefix(own) if current.startswith(own) else "/"
    return f"{SIGN_IN}?next={quote(back or '/', safe='/')}"
