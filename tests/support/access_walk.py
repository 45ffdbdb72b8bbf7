"""Every route of the access table (app/web/access.py `ROUTES`), asked for as an identity would ask: a real
address for each template, a body for each post, a live stream read only to its status. `check` says what the
gate must answer: through it (any status but 401, 403, 429 and a server error), 401 (a page: a redirect to sign
in; an htmx partial: 401 with `HX-Redirect`), or 403."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import httpx
from dsh_inspect.access import PERMISSIONS, Permission, Role
from dsh_inspect.web.access import ROUTES

from tests.support.uploads import jsonl_bytes

_PARAM = re.compile(r"\{(\w+)(?::path)?\}")
REFUSED = (401, 403, 429)


@dataclass(frozen=True, slots=True)
class Asked:
    method: str
    template: str
    url: str
    permission: Permission

    @property
    def page(self) -> bool:
        """An HTML page or partial (not the JSON API, not the API's description)."""
        return not self.template.startswith("/api/") and self.template != "/openapi.json"


def values_for(key: str, digest: str) -> dict[str, str]:
    """What fills each template: a real session's `key` and upload's `digest`; names of nothing for the rest
    (a step, a message, an image, a token), which answer 404 once through the gate."""
    return {
        "key": key,
        "digest": digest,
        "seq": "0",
        "ref": "1.1",
        "message_id": "no-such-message",
        "attachment_id": "no-such-image",
        "name": "no-such-token",
        "session_id": "no-such-session",
    }


def asks(values: Mapping[str, str]) -> list[Asked]:
    """Each route of the table, its template filled from `values` (a session's `key`, an upload's `digest`, …)."""
    return [
        Asked(method, template, _PARAM.sub(lambda m: values[m.group(1)], template), permission)
        for (method, template), permission in ROUTES.items()
    ]


def ask(client: httpx.Client, asked: Asked, headers: Mapping[str, str]) -> httpx.Response:
    """The route asked for once, with a body a real client would send; a live stream only to its headers."""
    if asked.template.endswith("/live"):
        with client.stream("GET", asked.url, headers=headers) as response:
            return response
    if asked.method == "POST" and asked.template == "/api/uploads":
        body = jsonl_bytes(f"walked-{abs(hash(tuple(headers.items())))}", cwd="/work/walked")
        return client.post(asked.url, params={"name": "session.jsonl"}, content=body, headers=headers)
    if asked.method == "POST" and asked.template == "/api/tokens":
        return client.post(asked.url, json={"name": "", "role": "viewer"}, headers=headers)  # refused as empty
    if asked.method == "POST" and asked.template == "/sessions-summaries":
        return client.post(asked.url, content=b"key=none", headers=headers)
    if asked.method == "POST" and asked.template == "/auth/sign-in":
        return client.post(asked.url, data={"next": "/"}, headers=headers)  # no token: refused as incomplete (422)
    return client.request(asked.method, asked.url, headers=headers)


def allowed(role: Role | None, permission: Permission) -> bool:
    if permission == "public":
        return True
    return role is not None and permission in PERMISSIONS[role]


def check(response: httpx.Response, asked: Asked, role: Role | None, *, htmx: bool = False) -> str | None:
    """What is wrong with `response` for `role` asking `asked` (None: nothing)."""
    said = f"{asked.method} {asked.url} as {role or 'anonymous'}{' (htmx)' if htmx else ''}"
    status = response.status_code
    if allowed(role, asked.permission):
        if status in REFUSED or status >= 500:
            return f"{said}: {'refused with' if status in REFUSED else 'failed with'} {status}"
        return None
    if role is not None:
        return None if status == 403 else f"{said}: {status}, not 403"
    if htmx:
        if status != 401 or not response.headers.get("hx-redirect", "").startswith("/auth/sign-in"):
            return f"{said}: {status}, not 401 with HX-Redirect"
        return None
    if asked.page and asked.method == "GET" and not asked.template.endswith("/live"):
        location = response.headers.get("location", "")
        return None if status == 303 and location.startswith("/auth/sign-in?next=") else f"{said}: {status}"
    if status != 401 or "bearer" not in response.headers.get("www-authenticate", "").lower():
        return f"{said}: {status}, not 401 with WWW-Authenticate"
    return None


def walk(client: httpx.Client, values: Mapping[str, str], secrets: Mapping[Role | None, str | None]) -> Iterator[str]:
    """Every route under every identity in `secrets` (role → its token's secret; None → anonymous), and every
    page and partial once more as htmx asks anonymously: each thing wrong, said in a line."""
    for asked in asks(values):
        for role, secret in secrets.items():
            headers = {"Authorization": f"Bearer {secret}"} if secret else {}
            problem = check(ask(client, asked, headers), asked, role)
            if problem:
                yield problem
        if asked.page and asked.permission != "public" and None in secrets:
            problem = check(ask(client, asked, {"HX-Request": "true"}), asked, None, htmx=True)
            if problem:
                yield problem
