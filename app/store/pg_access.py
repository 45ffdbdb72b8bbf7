"""Tokens and the audit trail in the team catalog's PostgreSQL database (access_records.py says what each keeps)."""

from __future__ import annotations

from .access_records import (
    AUDIT_COLUMNS,
    TOKEN_COLUMNS,
    AuditEntry,
    AuditQuery,
    Token,
    add_token_in,
    audit_row,
    audit_where,
    token_of,
    usable,
)
from .catalog import placeholders
from .pg_catalog import PostgresCatalog


class PostgresAccess:
    def __init__(self, catalog: PostgresCatalog) -> None:
        self._connection = catalog.connection

    def add_token(self, token: Token) -> bool:
        with self._connection() as conn, conn.transaction():
            # one name at a time: two creations of one name never both win
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (token.name,))
            return add_token_in(conn, token, "%s")

    def tokens(self) -> list[Token]:
        with self._connection() as conn:
            rows = conn.execute(f"SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at DESC, name").fetchall()
        return [token_of(tuple(r)) for r in rows]

    def token(self, digest: str) -> Token | None:
        with self._connection() as conn:
            row = conn.execute(f"SELECT {TOKEN_COLUMNS} FROM tokens WHERE digest = %s", (digest,)).fetchone()
        return token_of(tuple(row)) if row else None

    def revoke(self, name: str, at: int) -> bool:
        with self._connection() as conn:
            done = conn.execute(
                f"UPDATE tokens SET revoked_at = %s WHERE name = %s AND {usable('%s')}", (at, name, at)
            ).rowcount
        return done > 0

    def used(self, name: str, at: int) -> None:
        with self._connection() as conn:
            conn.execute("UPDATE tokens SET last_used_at = %s WHERE name = %s", (at, name))

    def record(self, entries: list[AuditEntry]) -> None:
        if not entries:
            return
        with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO audit ({AUDIT_COLUMNS}) VALUES ({placeholders('%s', AUDIT_COLUMNS)})",
                [audit_row(e) for e in entries],
            )

    def audit(self, query: AuditQuery) -> list[AuditEntry]:
        where, args = audit_where(query, "%s")
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {AUDIT_COLUMNS}, id FROM audit{where} ORDER BY id DESC LIMIT %s", (*args, query.limit)
            ).fetchall()
        return [AuditEntry(*r) for r in rows]

    def forget(self, before: int) -> int:
        with self._connection() as conn:
            return conn.execute("DELETE FROM audit WHERE at < %s", (before,)).rowcount
