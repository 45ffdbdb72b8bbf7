"""Health, for load balancers and orchestrators, open without sign-in (docs/decisions/0022-failing-dependencies.md):
`/healthz` says the process answers and asks nothing else; `/readyz` asks each dependency once, naming it by
role alone (catalog, blobs, index: never a URL, host or bucket), with the search index's pending count, and
answers 503 while any does not answer, so a balancer sends requests to a process that can serve them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sized
from typing import Any, Protocol

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from ...store.unavailable import Unavailable
from ..state import State, WebState

router = APIRouter()

ASK_SECONDS = 3.0  # the longest one dependency's answer is waited for: a probe's own timeout is a few seconds
RETRY_SECONDS = 5


class Indexes(Protocol):
    def pending(self, state: WebState) -> Sized: ...


@router.get("/healthz", summary="Whether the process answers (it asks no dependency)")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="Whether each dependency answers: catalog, blobs, search index")
async def readyz(request: Request, state: State) -> JSONResponse:
    checks: dict[str, Callable[[], Any]] = {}
    if state.store is not None:
        checks["catalog"] = state.store.catalog.ping
        checks["blobs"] = state.store.blobs.ping
    indexes: Indexes | None = getattr(request.app.state, "finder", None)
    if indexes is not None:
        checks["index"] = lambda: {"pending": len(indexes.pending(state))}
    answers = await asyncio.gather(*(_ask(ask) for ask in checks.values()))
    found = dict(zip(checks, answers, strict=True))
    ready = all(a["ok"] for a in found.values())
    headers = {} if ready else {"Retry-After": str(RETRY_SECONDS)}
    return JSONResponse({"ready": ready, "checks": found}, status_code=200 if ready else 503, headers=headers)


async def _ask(ask: Callable[[], Any]) -> dict[str, Any]:
    """One dependency's answer: `ok`, how long it took, and what it said (or why it did not), never where it
    lives. A thread still waiting past ASK_SECONDS ends at its own bound (every call to a dependency has one)."""
    began = time.monotonic()
    try:
        said = await asyncio.wait_for(run_in_threadpool(ask), ASK_SECONDS)
    except TimeoutError:
        return {"ok": False, "error": f"no answer within {ASK_SECONDS:g} s"}
    except Unavailable:
        return {"ok": False, "error": "does not answer"}
    except OSError as exc:  # an embedded store's folder
        return {"ok": False, "error": exc.strerror or "cannot be read"}
    except Exception as exc:  # an embedded catalog's SQLite error, say: a probe is answered, never a 500
        return {"ok": False, "error": type(exc).__name__}
    answer: dict[str, Any] = {"ok": True, "ms": round((time.monotonic() - began) * 1000, 1)}
    return answer | (said if isinstance(said, dict) else {})
