"""API tokens (docs/decisions/0020-access-control.md): minted here, shown once, kept as the SHA-256 of the secret.

A secret is 32 random bytes, so its SHA-256 needs no salt or stretching: nobody can guess a secret from its
hash, and a lookup by hash reveals nothing of a secret by its timing. The hash found is compared again in
constant time all the same. Each request asks the catalog, so a revocation in any process holds at once.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Iterable

from ..store.access_records import ROLES, AccessRecords, Token
from .roles import Identity, normal_project

PREFIX = "dshi_"  # says what a leaked secret is, to a reader and to secret scanners
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_SECRET = re.compile(r"dshi_[A-Za-z0-9_-]{43}")
DAY_MS = 86_400_000


class TokenError(ValueError):
    """A token that cannot be made or revoked as asked; the message says why."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def actor_of(token: Token) -> str:
    return f"token:{token.name}"


class Tokens:
    def __init__(self, records: AccessRecords) -> None:
        self.records = records

    def create(
        self, name: str, role: str, projects: Iterable[str] = (), expires_days: int | None = None, by: str = "cli"
    ) -> tuple[Token, str]:
        """A new token and its secret, which is kept nowhere: show it once."""
        if not _NAME.fullmatch(name):
            raise TokenError(f"token name {name!r}: use 1 to 64 letters, digits, '.', '_' or '-'")
        if role not in ROLES:
            raise TokenError(f"role {role!r}: use one of {', '.join(ROLES)}")
        if expires_days is not None and expires_days < 1:
            raise TokenError("--expires: a whole number of days, at least 1")
        scoped = tuple(sorted({normal_project(p) for p in projects if p.strip()}))
        secret = PREFIX + secrets.token_urlsafe(32)
        at = now_ms()
        token = Token(
            name,
            digest_of(secret),
            role,
            scoped,
            at,
            by,
            at + expires_days * DAY_MS if expires_days is not None else None,
        )
        if not self.records.add_token(token):
            raise TokenError(f"a token named {name!r} exists or existed (a name is given once): choose another name")
        return token, secret

    def list(self) -> list[Token]:
        return self.records.tokens()

    def revoke(self, name: str) -> bool:
        return self.records.revoke(name, now_ms())

    def find(self, secret: str) -> Token | None:
        """The usable token this secret is, or None (malformed, unknown, revoked or expired)."""
        if not _SECRET.fullmatch(secret):
            return None
        digest = digest_of(secret)
        token = self.records.token(digest)
        if token is None or not hmac.compare_digest(token.digest, digest) or not token.usable(now_ms()):
            return None
        return token


def identity_of(token: Token) -> Identity:
    return Identity.of(actor_of(token), token.role, frozenset(token.projects))
