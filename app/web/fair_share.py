"""Each client's share of the process's time, kept at the door (issue 33; `app/access/shares.py` counts it).

A client past its share (`server_seconds_per_minute`) is answered 429 with `Retry-After` before any work is
done for it, after a pause (a tarpit: a client that asks again at once, as a script does, asks once a second
rather than keeping the event loop busy refusing it). What costs the process little is never counted or
refused: static files, the health probes, and a live tail's stream (held open, idle, and capped apart by
`live_streams_per_client`).
"""

from __future__ import annotations

import asyncio
import re

from fastapi import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from ..access.shares import ServerShares
from .access import client_of
from .uploading import refusal

UNCOUNTED = re.compile(r"/static/.*|/healthz|/readyz|/sessions/[^/]+/live")
TARPIT_SECONDS = 1.0


class FairShare:
    """Plain ASGI middleware: a request is counted from its start until its answer has been sent."""

    def __init__(self, app: ASGIApp, *, shares: ServerShares) -> None:
        self.app = app
        self.shares = shares

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or UNCOUNTED.fullmatch(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        client = client_of(Request(scope))
        wait = self.shares.retry_after(client)
        if wait is not None:
            await asyncio.sleep(TARPIT_SECONDS)
            message = (
                f"refused, this client has had its share of the server's time for now "
                f"({self.shares.seconds_per_minute:g} s of it a minute); try again in {wait} s"
            )
            hint = "wait, or raise it: setting server_seconds_per_minute"
            refused = refusal(429, "quota", message, setting="server_seconds_per_minute", hint=hint)
            refused.headers["Retry-After"] = str(wait)
            await refused(scope, receive, send)
            return
        began = self.shares.begin(client)
        try:
            await self.app(scope, receive, send)
        finally:
            self.shares.end(client, began)
