"""Administration, for the `admin` role: API tokens (`/tokens`, created and revoked in the page too) and the
audit trail (`/audit`), each with its JSON twin (docs/decisions/0020-access-control.md)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from ...access import AccessControl, Role, TokenError
from ...access.tokens import now_ms
from ...store.access_records import AuditQuery, Token
from ..access import client_of
from ..present.access_twins import AuditEntryJson, AuditJson, CreatedTokenJson, TokenJson, TokensJson
from ..state import State, WebState, Who
from ..views import Served, page_and_twin, page_or_twin

router = APIRouter()
AUDIT_PAGE = 100


def _access(state: WebState) -> AccessControl:
    if state.access is None:
        raise HTTPException(404, "this server keeps no catalog (start it with --data-dir)")
    return state.access


def token_json(token: Token) -> TokenJson:
    return TokenJson(
        name=token.name,
        role=token.role,
        projects=list(token.projects),
        created_at=token.created_at,
        created_by=token.created_by,
        expires_at=token.expires_at,
        revoked_at=token.revoked_at,
        last_used_at=token.last_used_at,
        usable=token.usable(now_ms()),
    )


def tokens_json(state: WebState) -> TokensJson:
    return TokensJson(tokens=[token_json(t) for t in _access(state).tokens.list()])


@page_and_twin(router, "/tokens", twin=TokensJson, summary="Every API token: never its secret", name="api_tokens")
def tokens_page(request: Request, state: State) -> Served[TokensJson]:
    return page_or_twin(request, tokens_json(state), "tokens.html", lambda data: {"tokens": data.tokens})


class NewToken(BaseModel):
    name: str = Field(max_length=64)
    role: Role
    projects: list[str] = Field(default_factory=list, max_length=100)
    expires_days: int | None = Field(default=None, alias="expiresDays", ge=1, le=36_500)


@router.post("/api/tokens", status_code=201, summary="Create an API token; its secret is in the answer, once")
async def create_token(request: Request, state: State, who: Who) -> Response:
    # the page posts a form and is shown the secret in the page; a script posts JSON and gets it as JSON
    form = "application/json" not in request.headers.get("content-type", "")
    try:
        if form:
            fields = await request.form(max_files=0, max_fields=10)
            days = str(fields.get("expiresDays") or "").strip()
            asked = NewToken.model_validate(
                {
                    "name": str(fields.get("name") or "").strip(),
                    "role": fields.get("role"),
                    "projects": [p.strip() for p in str(fields.get("projects") or "").splitlines() if p.strip()],
                    "expiresDays": int(days) if days.isdigit() else None,
                }
            )
        else:
            asked = NewToken.model_validate_json(await request.body())
    except ValueError as exc:
        return _token_refused(request, state, 422, f"not a token to create: {exc}")
    access = _access(state)
    try:
        token, secret = await run_in_threadpool(
            access.tokens.create, asked.name, asked.role, asked.projects, asked.expires_days, who.actor
        )
    except TokenError as exc:
        return _token_refused(request, state, 409 if "exists" in str(exc) else 422, str(exc))
    await run_in_threadpool(access.auditor.record, who.actor, "token.create", token.name, client_of(request), "ok", 201)
    created = CreatedTokenJson(token=token_json(token), secret=secret)
    if not form:
        return JSONResponse(created.model_dump(by_alias=True), status_code=201)
    response = state.page(request, "tokens.html", tokens=tokens_json(state).tokens, created=created)
    response.status_code = 201
    return response


def _token_refused(request: Request, state: WebState, status: int, detail: str) -> Response:
    if "application/json" in request.headers.get("content-type", ""):
        return JSONResponse({"detail": detail}, status_code=status)
    response = state.page(request, "tokens.html", tokens=tokens_json(state).tokens, error=detail)
    response.status_code = status
    return response


@router.delete("/api/tokens/{name}", summary="Revoke an API token: every process refuses it at once")
def revoke_token(request: Request, state: State, who: Who, name: str) -> Response:
    access = _access(state)
    if not access.tokens.revoke(name):
        raise HTTPException(404, f"no usable token {name!r}")
    access.auditor.record(who.actor, "token.revoke", name, client_of(request), "ok", 200)
    if request.headers.get("hx-request"):  # the page's button: its row, as it now reads
        token = next(t for t in access.tokens.list() if t.name == name)
        return state.page(request, "admin/token_row.html", token=token_json(token))
    return JSONResponse({"revoked": name})


Filter = Annotated[str, Query(max_length=200)]


@page_and_twin(router, "/audit", twin=AuditJson, summary="The audit trail, newest first, filtered", name="api_audit")
def audit_page(
    request: Request,
    state: State,
    actor: Filter = "",
    action: Filter = "",
    outcome: Filter = "",
    since: Annotated[int | None, Query(ge=0, description="only entries at or after this time (ms)")] = None,
    before: Annotated[int | None, Query(ge=1, description="only entries older than this one (its id)")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = AUDIT_PAGE,
) -> Served[AuditJson]:
    access = _access(state)
    query = AuditQuery(actor, action, outcome, since, before, limit + 1)
    found = access.auditor.entries(query)
    entries = [AuditEntryJson(**asdict(e)) for e in found[:limit]]
    more = len(found) > limit
    asked: dict[str, Any] = {k: v for k, v in (("actor", actor), ("action", action), ("outcome", outcome)) if v}
    if since is not None:
        asked["since"] = since
    if limit != AUDIT_PAGE:
        asked["limit"] = limit
    path = "/api/audit" if request.url.path.startswith("/api/") else "/audit"
    older = f"{path}?{urlencode({**asked, 'before': entries[-1].id})}" if more and entries else None
    data = AuditJson(entries=entries, keep_days=access.auditor.keep_days, next=older)
    return page_or_twin(
        request, data, "audit.html", lambda d: {**dict(d), "actor": actor, "action": action, "outcome": outcome}
    )
