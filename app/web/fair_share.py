"""Each client's share of the process's time, kept at the door (issue 33; `app/access/shares.py` counts it).

A client past its share (`server_seconds_per_minute`) is answered 429 with `Retry-After` before any work is
done for it, after a pause (a tarpit: a client that asks again at once, as a script does, asks once a second
rather than keeping the event loop busy refusing it). What costs the process little is never counted or
refused: static files and the health probes. A live tail is held open and mostly idle: this door lets it
through, and the tail itself asks `over_share` before it starts and charges only its work
(`routes/live.py`; its count is capped apart by `live_streams_per_client`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Request, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..access.shares import ClientSlots, ServerShares
from .access import client_of
from .uploading import refusal

UNCOUNTED = re.compile(r"/static/.*|/healthz|/readyz|/sessions/[^/]+/live")
TARPIT_SECONDS = 1.0


async def over_share(shares: ServerShares, client: str) -> Response | None:
    """None while `client` is within its share; else, after the tarpit's pause, the 429 that says so."""
    wait = shares.retry_after(client)
    if wait is None:
        return None
    await asyncio.sleep(TARPIT_SECONDS)
    message = (
        f"refused, this client has had its share of the server's time for now "
        f"({shares.seconds_per_minute:g} s of it a minute); try again in {wait} s"
    )
    hint = "wait, or raise it: setting server_seconds_per_minute"
    refused = refusal(429, "quota", message, setting="server_seconds_per_minute", hint=hint)
    refused.headers["Retry-After"] = str(wait)
    return refused


@asynccontextmanager
async def charged(shares: ServerShares, slots: ClientSlots, client: str) -> AsyncIterator[None]:
    """Work done for `client`: begun once one of its slots is free (the wait is not charged), and charged to its
    share from then until it ends."""
    async with slots.slot(client):
        began = shares.begin(client)
        try:
            yield
        finally:
            shares.end(client, began)


class FairShare:
    """Plain ASGI middleware: a request waits for one of its client's slots, then is counted from then until
    its answer has been sent."""

    def __init__(self, app: ASGIApp, *, shares: ServerShares, slots: ClientSlots) -> None:
        self.app = app
        self.shares = shares
        self.slots = slots

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or UNCOUNTED.fullmatch(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        client = client_of(Request(scope))
        refused = await over_share(self.shares, client)
        if refused is not None:
            await refused(scope, receive, send)
            return
        async with charged(self.shares, self.slots, client):
            await self.app(scope, receive, send)
