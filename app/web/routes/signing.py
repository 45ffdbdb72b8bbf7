"""Signing in and out (`/auth/*`). A browser signs in with an API token, kept in an HttpOnly cookie that every
request is checked by afresh (so a revoked token signs its browser out at once;
docs/decisions/0020-access-control.md), or, where the server has an identity provider, as a person
(`/auth/login`, `/auth/callback`; docs/decisions/0021-sign-in.md). `/auth/logout` ends either."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..access import PERSON, SIGN_IN, TOKEN_COOKIE, client_of
from ..sign_in import SignIn, rejections, unreachable
from ..state import State, WebState

router = APIRouter()
COOKIE_DAYS = 30
NEXT = "next"  # where a person signing in goes afterwards, kept in the session across the provider's pages


# a path of this server as a URL spells one: no scheme, no host, no backslash, space or control character (a
# browser drops a tab inside a URL, so `/\t/evil.example` would be `//evil.example`)
_LOCAL = re.compile(r"/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@/%?#]*")


def local_path(target: str) -> str:
    """Where to go after signing in: a path of this server, never another site."""
    return target if _LOCAL.fullmatch(target) else "/"


Next = Annotated[str, Query(max_length=2000)]


@router.get(SIGN_IN, response_class=HTMLResponse, include_in_schema=False)
def sign_in_page(request: Request, state: State, next: Next = "/") -> HTMLResponse:
    return state.page(request, "sign_in.html", next=local_path(next), failed=False, refused=None)


@router.post(SIGN_IN, response_class=HTMLResponse, include_in_schema=False)
async def sign_in(
    request: Request,
    state: State,
    token: Annotated[str, Form(max_length=200)],
    next: Annotated[str, Form(max_length=2000)] = "/",
) -> Response:
    target = local_path(next)
    if state.access is None or not state.settings.access_control:
        return RedirectResponse(target, status_code=303)
    found = await run_in_threadpool(_check, state, token.strip(), client_of(request))
    if not found:
        refused = state.page(request, "sign_in.html", next=target, failed=True, refused=None)
        refused.status_code = 401
        return refused
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        TOKEN_COOKIE,
        token.strip(),
        max_age=COOKIE_DAYS * 86_400,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def _check(state: WebState, secret: str, client: str) -> bool:
    access = state.access
    assert access is not None
    if access.attempts.blocked(client):
        return False
    token = access.tokens.find(secret)
    if token is None:
        access.attempts.failed(client)
        access.auditor.record("anonymous", "sign-in", SIGN_IN, client, "denied", 401)
        return False
    access.auditor.record(f"token:{token.name}", "sign-in", SIGN_IN, client, "ok", 303)
    return True


@router.get("/auth/login", include_in_schema=False)
async def login(request: Request, state: State, next: Next = "/") -> Response:
    """Off to the identity provider (PKCE, a state and a nonce kept in the session cookie), and back to `next`."""
    sign_in = _sign_in(state)
    if state.access is not None and state.access.attempts.blocked(client_of(request)):
        return _failed(request, state, 429, "too many failed sign-ins from this client: wait a minute")
    request.session[NEXT] = local_path(next)
    try:
        redirect: Response = await sign_in.oauth.authorize_redirect(request, sign_in.redirect_uri(request))
    except unreachable() as exc:
        return _provider_down(request, state, sign_in, exc)
    return redirect


@router.get("/auth/callback", include_in_schema=False)
async def callback(request: Request, state: State) -> Response:
    """The provider's answer: the code exchanged, the ID token verified (signature, issuer, audience, expiry,
    nonce), the person and their groups kept in the session cookie; a failure said, counted and audited."""
    sign_in = _sign_in(state)
    client = client_of(request)
    access = state.access
    assert access is not None
    if access.attempts.blocked(client):
        return _failed(request, state, 429, "too many failed sign-ins from this client: wait a minute")
    try:
        token = await sign_in.oauth.authorize_access_token(request)
    except unreachable() as exc:
        return _provider_down(request, state, sign_in, exc)
    except rejections() as exc:
        access.attempts.failed(client)
        await run_in_threadpool(access.auditor.record, "anonymous", "sign-in", "/auth/callback", client, "denied", 401)
        return _failed(request, state, 401, f"the sign-in was not accepted: {exc}")
    person = sign_in.person(token.get("userinfo") or {})
    target = local_path(str(request.session.get(NEXT, "/")))
    request.session.clear()
    request.session[PERSON] = person
    actor = sign_in.identity(person).actor
    await run_in_threadpool(access.auditor.record, actor, "sign-in", "/auth/callback", client, "ok", 303)
    return RedirectResponse(target, status_code=303)


def _sign_in(state: WebState) -> SignIn:
    if state.sign_in is None:
        raise HTTPException(404, "this server signs nobody in through an identity provider")
    return state.sign_in


def _failed(request: Request, state: WebState, status: int, detail: str) -> Response:
    response = state.page(request, "sign_in.html", next="/", failed=False, refused=detail)
    response.status_code = status
    return response


def _provider_down(request: Request, state: WebState, sign_in: SignIn, exc: Exception) -> Response:
    """The identity provider did not answer: 503 naming it (tokens still work)."""
    detail = f"the identity provider at {sign_in.issuer} did not answer ({type(exc).__name__}); try again later"
    return _failed(request, state, 503, detail)


@router.post("/auth/logout", include_in_schema=False)
async def logout(request: Request, state: State) -> Response:
    """Signed out: the session cookie emptied and the token cookie dropped."""
    person = request.session.get(PERSON) if "session" in request.scope else None
    if person is not None and state.sign_in is not None and state.access is not None:
        actor = state.sign_in.identity(person).actor
        await run_in_threadpool(
            state.access.auditor.record, actor, "sign-out", "/auth/logout", client_of(request), "ok", 303
        )
    if "session" in request.scope:
        request.session.clear()
    response = RedirectResponse(SIGN_IN, status_code=303)
    response.delete_cookie(TOKEN_COOKIE, httponly=True, samesite="strict")
    return response
