"""`dsh-inspect token create|list|revoke`: API tokens in the catalog a server names (`--data-dir`, `--store`),
so every process of that server knows them (docs/decisions/0020-access-control.md)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import orjson

from ..access import TokenError, Tokens
from ..store.access_records import Token
from ..store.store import access_records, open_catalog
from ..store.unavailable import Unavailable
from ..store.urls import masked


def open_tokens(data_dir: str, store: str | None) -> Tokens:
    root = Path(data_dir)
    if store is None:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return Tokens(access_records(open_catalog(store, root)))


def when(ms: int | None) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC") if ms is not None else "-"


def token_json(token: Token) -> dict[str, object]:
    """A token as `token list --json` and `/api/tokens` give it: never its secret, nor the secret's hash."""
    return {
        "name": token.name,
        "role": token.role,
        "projects": list(token.projects),
        "createdAt": token.created_at,
        "createdBy": token.created_by,
        "expiresAt": token.expires_at,
        "revokedAt": token.revoked_at,
        "lastUsedAt": token.last_used_at,
    }


def run_token(
    action: str,
    *,
    data_dir: str,
    store: str | None,
    name: str | None = None,
    role: str = "viewer",
    projects: Sequence[str] = (),
    expires: int | None = None,
    as_json: bool = False,
    out: TextIO,
    err: TextIO,
) -> int:
    # An error's text may quote the URL or connection string the catalog was given: its password is masked.
    try:
        tokens = open_tokens(data_dir, store)
    except Exception as exc:  # a refused connection, a bad URL, a folder that cannot be made
        err.write(masked(f"dsh-inspect token: cannot open the catalog: {type(exc).__name__}: {_why(exc)}\n"))
        return 2
    try:
        return _run(tokens, action, name, role, projects, expires, as_json, out, err)
    except Unavailable as exc:  # the catalog stopped answering since it was opened
        err.write(masked(f"dsh-inspect token {action}: {_why(exc)}\n"))
        return 2


def _why(exc: Exception) -> str:
    """What went wrong, and where for a store that does not answer (its detail names the server)."""
    return f"{exc} ({exc.detail})" if isinstance(exc, Unavailable) and exc.detail else str(exc)


def _run(
    tokens: Tokens,
    action: str,
    name: str | None,
    role: str,
    projects: Sequence[str],
    expires: int | None,
    as_json: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    if action == "create":
        assert name is not None
        try:
            token, secret = tokens.create(name, role, projects, expires, by="cli")
        except TokenError as exc:
            err.write(f"dsh-inspect token create: {exc}\n")
            return 2
        scope = ", ".join(token.projects) or "every project"
        out.write(f"created token {token.name}: role {token.role}, {scope}, expires {when(token.expires_at)}\n")
        out.write("the secret follows; it is shown this once and kept nowhere (send it as Authorization: Bearer …)\n")
        out.write(secret + "\n")
        return 0
    if action == "revoke":
        assert name is not None
        if not tokens.revoke(name):
            err.write(f"dsh-inspect token revoke: no usable token named {name!r}\n")
            return 1
        out.write(f"revoked token {name}: every process of the server refuses it from now on\n")
        return 0
    listed = tokens.list()
    if as_json:
        out.write(orjson.dumps([token_json(t) for t in listed], option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    for t in listed:
        state = "revoked " + when(t.revoked_at) if t.revoked_at else "expires " + when(t.expires_at)
        scope = ", ".join(t.projects) or "every project"
        out.write(f"{t.name:<20} {t.role:<8} {state:<30} last used {when(t.last_used_at):<22} {scope}\n")
    if not listed:
        out.write("no tokens\n")
    return 0
