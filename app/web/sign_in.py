"""Signing people in through the company's OpenID Connect provider (docs/decisions/0021-sign-in.md), with
Authlib's Starlette client: the authorization-code flow with PKCE (S256), the ID token checked against the
issuer's keys (issuer, audience, expiry, nonce), and a signed session cookie holding who signed in and their
groups. What the groups grant is read from the access file at each request (access/groups.py).
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import os
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import Request

from ..access import GroupMap, Identity
from ..settings import Settings

SECRET_ENV = "DSH_INSPECT_OIDC_CLIENT_SECRET"
SESSION_COOKIE = "dsh_inspect_session"
SCOPES = "openid email profile groups"


@contextmanager
def quiet_authlib() -> Iterator[None]:
    """Authlib's imports warn that its httpx integration moves to httpx2: nothing a user can act on. Its
    `deprecate` module turns those warnings on when imported, so it is imported first, then they are ignored."""
    with warnings.catch_warnings():
        import authlib.deprecate  # noqa: F401

        warnings.simplefilter("ignore")
        yield


def rejections() -> tuple[type[Exception], ...]:
    """What Authlib raises for a sign-in the provider or its ID token does not vouch for (a state that does not
    match, an error the provider sent back, a bad signature, a wrong issuer, audience or nonce, an expired token)."""
    with quiet_authlib():
        from authlib.integrations.base_client.errors import OAuthError
        from authlib.jose.errors import JoseError
    return (OAuthError, JoseError, ValueError, KeyError)


def unreachable() -> tuple[type[Exception], ...]:
    """What the HTTP client Authlib talks to the provider with raises when the provider cannot be reached: httpx2's
    where it is installed (Authlib prefers it, and `genai-prices` brings it), else httpx's."""
    errors: list[type[Exception]] = [httpx.HTTPError]
    with suppress(ImportError):
        errors.append(importlib.import_module("httpx2").HTTPError)
    return tuple(errors)


class SignInUnset(ValueError):
    """Sign-in asked for without what it needs; the message says what to give."""


def session_key(client_secret: str) -> str:
    """The key signing session cookies, the same in every process of a server (each has the client secret) and
    never the secret itself: rotating the secret signs everyone out."""
    return hmac.new(client_secret.encode(), b"dsh-inspect session cookie", hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class SignIn:
    """A server's sign-in: its provider client, its group map and where the provider sends people back."""

    oauth: Any  # Authlib's registered client (untyped)
    groups: GroupMap
    roles_claim: str
    public_url: str | None
    issuer: str
    cookie_key: str
    secure: bool  # the session cookie only over HTTPS

    @classmethod
    def configured(cls, settings: Settings, groups: GroupMap) -> SignIn | None:
        """The sign-in `settings` ask for (None without an issuer); raises SignInUnset for one half-given."""
        issuer = settings.oidc_issuer
        if issuer is None:
            if settings.access_file is not None:
                raise SignInUnset("--access maps the groups of people signed in through --oidc-issuer: give both")
            return None
        if not settings.oidc_client_id:
            raise SignInUnset("--oidc-issuer needs --oidc-client-id (or DSH_INSPECT_OIDC_CLIENT_ID)")
        secret = os.environ.get(SECRET_ENV, "")
        if not secret:
            raise SignInUnset(f"--oidc-issuer needs the client secret in {SECRET_ENV}")
        with quiet_authlib():
            import authlib.integrations.httpx_client  # noqa: F401  (imported by the client at its first request)
            from authlib.integrations.starlette_client import OAuth  # only a server that signs people in
        oauth = OAuth()
        oauth.register(
            "provider",
            client_id=settings.oidc_client_id,
            client_secret=secret,
            server_metadata_url=f"{issuer.rstrip('/')}/.well-known/openid-configuration",
            client_kwargs={"scope": SCOPES, "code_challenge_method": "S256", "timeout": 10},
        )
        public = settings.public_url
        return cls(
            oauth.provider,
            groups,
            settings.oidc_roles_claim,
            public,
            issuer.rstrip("/"),
            session_key(secret),
            public is not None and public.startswith("https://"),
        )

    def redirect_uri(self, request: Request) -> str:
        base = self.public_url or str(request.base_url).rstrip("/")
        return f"{base}/auth/callback"

    def person(self, claims: Mapping[str, Any]) -> dict[str, Any]:
        """What the session keeps of a verified ID token: who it is, their groups, when they signed in."""
        groups = claims.get(self.roles_claim, [])
        if isinstance(groups, str):
            groups = [groups]
        return {
            "sub": str(claims.get("sub", "")),
            "email": claims.get("email") if isinstance(claims.get("email"), str) else None,
            "email_verified": claims.get("email_verified") is True,
            "name": claims.get("name") if isinstance(claims.get("name"), str) else None,
            "groups": [g for g in groups if isinstance(g, str)] if isinstance(groups, list) else [],
            "at": int(time.time()),
        }

    def identity(self, person: Mapping[str, Any]) -> Identity:
        """The identity of a person the session names: their grants as the access file maps their groups now."""
        # the email names the person only when the provider vouches for it; else its subject, which is unique
        who = (person.get("email") if person.get("email_verified") else None) or person.get("sub") or "unknown"
        return Identity(f"user:{who}", self.groups.grants_for(person.get("groups") or ()), signed_in=True)
