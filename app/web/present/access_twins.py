"""The JSON twins of the administration pages: tokens (never a secret's hash) and the audit trail."""

from __future__ import annotations

from ...access import Role
from ...sessions.wire import Twin


class TokenJson(Twin):
    name: str
    role: Role
    projects: list[str]  # empty: every project
    created_at: int  # ms since the epoch
    created_by: str
    expires_at: int | None
    revoked_at: int | None
    last_used_at: int | None
    usable: bool


class TokensJson(Twin):
    tokens: list[TokenJson]


class CreatedTokenJson(Twin):
    token: TokenJson
    secret: str  # shown this once: only its hash is kept


class AuditEntryJson(Twin):
    id: int
    at: int  # ms since the epoch
    actor: str
    action: str
    target: str
    client: str
    outcome: str  # `ok`, `denied`, `failed`
    status: int


class AuditJson(Twin):
    entries: list[AuditEntryJson]
    keep_days: int
    next: str | None  # the page of older entries
