"""Signing in and out (`/auth/*`): a browser signs in with an API token, kept in an HttpOnly cookie that every
request is checked by afresh (so a revoked token signs its browser out at once). Signing people in through a
company's identity provider builds on this (docs/decisions/0020-access-control.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..access import SIGN_IN, TOKEN_COOKIE, client_of
from ..state import State, WebState

router = APIRouter()
COOKIE_DAYS = 30


def local_path(target: str) -> str:
    """Where to go after signing in: a path of this server, never another site (`//host`, `/\\host`, a URL)."""
    if not target.startswith("/") or target.startswith(("//", "/\\")) or any(c in target for c in "\r\n"):
        return "/"
    return target


Next = Annotated[str, Query(max_length=2000)]


@router.get(SIGN_IN, response_class=HTMLResponse, include_in_schema=False)
def sign_in_page(request: Request, state: State, next: Next = "/") -> HTMLResponse:
    return state.page(request, "sign_in.html", next=local_path(next), failed=False)


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
        refused = state.page(request, "sign_in.html", next=target, failed=True)
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


@router.post("/auth/sign-out", include_in_schema=False)
def sign_out() -> Response:
    response = RedirectResponse(SIGN_IN, status_code=303)
    response.delete_cookie(TOKEN_COOKIE, httponly=True, samesite="strict")
    return response
