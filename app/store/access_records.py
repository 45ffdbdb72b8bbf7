"""What access control keeps in the catalog (docs/decisions/0020-access-control.md): API tokens, known only by
the SHA-256 of their secret, and the audit trail. Kept beside the uploads, in the catalog every process of a
server shares, so a token revoked through one process is refused by every other at its next request.

The embedded records live in the SQLite catalog; the team's are `pg_access.py`. Both take the catalog's own
connections, and its migrations made their tables (`migrations/*/0004_access.sql`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import orjson

from .catalog import SqliteCatalog, placeholders

Role = Literal["admin", "member", "viewer", "metrics"]
ROLES: tuple[Role, ...] = ("admin", "member", "viewer", "metrics")


@dataclass(frozen=True, slots=True)
class Token:
    name: str
    digest: str  # SHA-256 of the secret, hex: the secret itself is shown once and kept nowhere
    role: Role
    projects: tuple[str, ...]  # the projects (header `cwd`s) it sees; () for every project
    created_at: int  # ms since the epoch
    created_by: str  # the actor that created it (`cli` for `dsh-inspect token create`)
    expires_at: int | None = None
    revoked_at: int | None = None
    last_used_at: int | None = None

    def usable(self, now: int) -> bool:
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: int  # ms since the epoch
    actor: str  # `token:NAME`, `anonymous`, `local` (no access control)
    action: str  # `upload`, `download`, `delete`, `token.use`, `token.create`, `token.revoke`, a route's name
    target: str  # what it acted on: a path, an upload's digest, a token's name
    client: str  # the client's address
    outcome: str  # `ok`, `denied`, `failed`
    status: int  # the HTTP status answered
    id: int = 0  # the catalog's number for it, once recorded


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """Which entries `/audit` shows: each field given narrows them; newest first, `before` an entry's id."""

    actor: str = ""
    action: str = ""
    outcome: str = ""
    since: int | None = None  # ms since the epoch
    before: int | None = None
    limit: int = 100


class AccessRecords(Protocol):
    def add_token(self, token: Token) -> bool:
        """Keep a new token; False when a token has or had that name: a name is never given twice, since what a
        token did (the uploads it may delete, the audit trail) is known by it."""
        ...

    def tokens(self) -> list[Token]:
        """Every token, newest first, revoked and expired ones too."""
        ...

    def token(self, digest: str) -> Token | None:
        """The token whose secret hashes to `digest`, usable or not."""
        ...

    def revoke(self, name: str, at: int) -> bool:
        """Revoke the named token; False when no usable token has that name."""
        ...

    def used(self, name: str, at: int) -> None:
        """Note when a token was last used."""
        ...

    def record(self, entries: list[AuditEntry]) -> None: ...

    def audit(self, query: AuditQuery) -> list[AuditEntry]: ...

    def forget(self, before: int) -> int:
        """Drop the audit entries older than `before`; how many went."""
        ...


TOKEN_COLUMNS = "name, digest, role, projects, created_at, created_by, expires_at, revoked_at, last_used_at"
AUDIT_COLUMNS = "at, actor, action, target, client, outcome, status"


def token_row(token: Token) -> tuple[Any, ...]:
    t = token
    projects = orjson.dumps(list(t.projects)).decode()
    return (t.name, t.digest, t.role, projects, t.created_at, t.created_by, t.expires_at, t.revoked_at, t.last_used_at)


def token_of(row: tuple[Any, ...]) -> Token:
    return Token(row[0], row[1], row[2], tuple(orjson.loads(row[3])), *row[4:])


def audit_row(entry: AuditEntry) -> tuple[Any, ...]:
    e = entry
    return (e.at, e.actor, e.action, e.target, e.client, e.outcome, e.status)


def audit_where(query: AuditQuery, mark: str) -> tuple[str, list[Any]]:
    """The WHERE clause (maybe empty) selecting `query`'s entries, in a driver's parameter mark."""
    clauses: list[str] = []
    args: list[Any] = []
    for column, value in (("actor", query.actor), ("action", query.action), ("outcome", query.outcome)):
        if value:
            clauses.append(f"{column} = {mark}")
            args.append(value)
    if query.since is not None:
        clauses.append(f"at >= {mark}")
        args.append(query.since)
    if query.before is not None:
        clauses.append(f"id < {mark}")
        args.append(query.before)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


def usable(mark: str) -> str:
    """The condition a usable token's row meets at a time given in a driver's parameter mark."""
    return f"revoked_at IS NULL AND (expires_at IS NULL OR expires_at > {mark})"


def add_token_in(conn: Any, token: Token, mark: str) -> bool:
    """`AccessRecords.add_token` inside a write transaction of either engine (`mark`: its parameter mark)."""
    if conn.execute(f"SELECT 1 FROM tokens WHERE name = {mark}", (token.name,)).fetchone():
        return False
    conn.execute(f"INSERT INTO tokens ({TOKEN_COLUMNS}) VALUES ({placeholders(mark, TOKEN_COLUMNS)})", token_row(token))
    return True


class SqliteAccess:
    """Tokens and the audit trail in the embedded catalog's SQLite file."""

    def __init__(self, catalog: SqliteCatalog) -> None:
        self.catalog = catalog

    def add_token(self, token: Token) -> bool:
        with self.catalog.connection() as conn, self.catalog.writing(conn):
            return add_token_in(conn, token, "?")

    def tokens(self) -> list[Token]:
        with self.catalog.connection() as conn:
            rows = conn.execute(f"SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at DESC, name").fetchall()
        return [token_of(r) for r in rows]

    def token(self, digest: str) -> Token | None:
        conn = self.catalog.thread_connection()
        row = conn.execute(f"SELECT {TOKEN_COLUMNS} FROM tokens WHERE digest = ?", (digest,)).fetchone()
        return token_of(row) if row else None

    def revoke(self, name: str, at: int) -> bool:
        with self.catalog.connection() as conn, self.catalog.writing(conn):
            done = conn.execute(
                f"UPDATE tokens SET revoked_at = ? WHERE name = ? AND {usable('?')}", (at, name, at)
            ).rowcount
        return done > 0

    def used(self, name: str, at: int) -> None:
        with self.catalog.connection() as conn:
            conn.execute("UPDATE tokens SET last_used_at = ? WHERE name = ?", (at, name))

    def record(self, entries: list[AuditEntry]) -> None:
        if not entries:
            return
        with self.catalog.connection() as conn, self.catalog.writing(conn):
            conn.executemany(
                f"INSERT INTO audit ({AUDIT_COLUMNS}) VALUES ({placeholders('?', AUDIT_COLUMNS)})",
                [audit_row(e) for e in entries],
            )

    def audit(self, query: AuditQuery) -> list[AuditEntry]:
        where, args = audit_where(query, "?")
        with self.catalog.connection() as conn:
            rows = conn.execute(
                f"SELECT {AUDIT_COLUMNS}, id FROM audit{where} ORDER BY id DESC LIMIT ?", (*args, query.limit)
            ).fetchall()
        return [AuditEntry(*r) for r in rows]

    def forget(self, before: int) -> int:
        with self.catalog.connection() as conn, self.catalog.writing(conn):
            gone: int = conn.execute("DELETE FROM audit WHERE at < ?", (before,)).rowcount
        return gone
