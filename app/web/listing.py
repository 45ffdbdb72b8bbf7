"""The session list: header facts at once, the rest from a per-version cache; search and paging."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from ..history.session import SessionLog
from .entries import entry_json
from .registry import Entry
from .state import State, WebState, session_url
from .wording import UNREADABLE

router = APIRouter()
PAGE_SIZE = 50
SUMMARIES_BODY = 4 << 20  # a page's keys: 50 of them, however long, but not without end


def summary_of(log: SessionLog) -> dict[str, Any]:
    return {
        "title": log.title,
        "turns": log.turns,
        "steps": log.steps,
        "events": log.stored_count,
        "verdict": log.verdict.category,
    }


def cached_summary(state: WebState, entry: Entry) -> dict[str, Any] | None:
    """The summary when this file version has been read; None when it has not."""
    found: dict[str, Any] | None = state.registry.peek(entry.key, "summary")
    return found


def summary(state: WebState, entry: Entry) -> dict[str, Any]:
    try:
        return state.registry.derived(entry.key, "summary", summary_of)
    except Exception as exc:
        return {"title": None, "turns": None, "steps": None, "events": None, "verdict": UNREADABLE, "error": str(exc)}


def created(entry: Entry) -> str | None:
    value = (entry.header or {}).get("createdAt")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        return None
    return datetime.fromtimestamp(value / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")


def _matches(state: WebState, entry: Entry, needle: str) -> bool:
    if not needle:
        return True
    facts = [entry.key, entry.session_id or "", entry.source.label, str((entry.header or {}).get("cwd", ""))]
    if any(needle in f.lower() for f in facts):
        return True  # header facts answer most searches without reading the log
    title = summary(state, entry).get("title")  # a title search reads each session once, then hits the cache
    return needle in (title or "").lower()


def listing(state: WebState, q: str, page: int, size: int | None = PAGE_SIZE) -> dict[str, Any]:
    """Sessions newest first, `size` a page (None: every session on one page)."""
    state.registry.refresh()
    needle = q.strip().lower()
    entries = sorted(
        state.registry.entries(),
        key=lambda e: (
            -(e.header or {}).get("createdAt", 0) if isinstance((e.header or {}).get("createdAt"), (int, float)) else 0,
            e.key,
        ),
    )
    entries = [e for e in entries if _matches(state, e, needle)]
    size = size or max(1, len(entries))
    pages = max(1, -(-len(entries) // size))
    page = min(max(page, 1), pages)
    shown = entries[(page - 1) * size : page * size]
    return {
        "query": q,
        "page": page,
        "pages": pages,
        "total": len(entries),
        "sessions": [{**entry_json(e), "created": created(e), "summary": cached_summary(state, e)} for e in shown],
        "refused": [{"path": r.path, "reason": r.reason} for r in state.registry.refused()],
    }


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def index(request: Request, state: State, q: str = "", page: int = Query(1, ge=1)) -> HTMLResponse:
    return state.page(request, "index.html", **listing(state, q, page))


@router.get("/api/sessions", summary="The loaded sessions (header facts; summaries once read)")
def api_sessions(
    state: State,
    q: str = "",
    page: int | None = Query(None, ge=1, description="a page of 50, as `/?page=N` shows; without it, every session"),
    summaries: bool = False,
) -> dict[str, Any]:
    data = listing(state, q, page or 1, PAGE_SIZE if page is not None else None)
    if summaries:
        for item in data["sessions"]:
            entry = state.registry.entry(item["key"])
            item["summary"] = summary(state, entry) if entry else None
    return data


@router.post("/sessions-summaries", response_class=HTMLResponse, include_in_schema=False)
async def summaries_partial(request: Request, state: State) -> HTMLResponse:
    """Fills a page's titles, counts and verdicts in place (htmx out-of-band swaps). The page's keys come
    in the body, as a form posts them (`key=…&key=…`): keys are log data, as long as a log makes them,
    and a URL is not (a page of long keys was a request line the server refuses)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > SUMMARIES_BODY:
            raise HTTPException(413, f"a summaries request carries at most {SUMMARIES_BODY} bytes of keys")
    keys = parse_qs(body.decode("utf-8", "replace")).get("key", [])[:PAGE_SIZE]
    items = await run_in_threadpool(summary_items, state, keys)
    return state.page(request, "sessions/summaries.html", items=items)


def summary_items(state: WebState, keys: list[str]) -> list[dict[str, Any]]:
    items = []
    for key in keys:
        entry = state.registry.entry(key)
        if entry is not None:
            items.append({"key": key, "url": session_url(key), "summary": summary(state, entry)})
    return items
