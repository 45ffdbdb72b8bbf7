"""Live tail: open session pages receive rows appended to a growing log over Server-Sent Events.

Each connection remembers what its page shows (row keys, links, crash closers); when the
file grows, the registry reads only the new bytes, and the page gets the new
rows appended and the rows that changed (a tool row whose result arrived, a
pending line now complete) swapped in place. A file that shrank or was
replaced cannot be read on: the page is told to reload.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, NamedTuple

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from .archive import media_of
from .registry import Entry, file_version, grew_in_place
from .state import Lang, SessionEntry, State, WebState, session_url
from .strings import Strings
from .transcripts import Transcript, transcript

router = APIRouter()
POLL_SECONDS = 0.25


class Signature(NamedTuple):
    """What a page shows of one row, as far as telling whether it must be sent again."""

    key: str
    links: tuple[tuple[str, tuple[int, ...]], ...]
    # The row's events that are in-memory crash closers. While the final turn is open the
    # closers sit at the seqs the next real events take, so a real result appended in place
    # of its closer leaves key and links unchanged: only this tells the two rows apart.
    closers: tuple[int, ...]
    anchor: str


def signatures(t: Transcript) -> list[Signature]:
    closers = t.log.closers
    return [
        Signature(row.key, row.links, tuple(s for s in (row.seq, *row.related) if s in closers), anchor)
        for row, anchor in zip(t.rows, t.anchors, strict=True)
    ]


def sse(event: str, html: str) -> str:
    data = "\n".join(f"data: {line}" for line in html.split("\n"))
    return f"event: {event}\n{data}\n\n"


def update(state: WebState, entry: Entry, t: Strings, shown: list[Signature]) -> tuple[str, list[Signature]]:
    """HTML for what changed since `shown`: replaced rows (out of band) and appended ones."""
    script = transcript(state, entry)
    now = signatures(script)
    first_new = len(shown)
    replaced: list[int] = []
    renamed: list[int] = []
    for i, old in enumerate(shown):
        if i >= len(now) or now[i].key != old.key:
            first_new = i  # a row moved (a pending line became an event): redo from here
            break
        if now[i].anchor != old.anchor:
            renamed.append(i)  # the same row now stands for a message (a tool row whose result arrived)
        elif now[i] != old:
            replaced.append(i)
    view = script.view

    context = {"t": t, "base_url": session_url(entry.key), "media": media_of(entry)}
    html = (
        state.templates.get_template("rows/live.html")
        .render(
            **context,
            replaced=[view(i) for i in replaced],
            removed=[old.anchor for old in shown[first_new:]],
            appended=[view(i) for i in range(first_new, len(now))],
        )
        .strip()
    )
    # A renamed row is swapped in place too, found by its key: its id is not the one the page has.
    # Keys are `seq-`, `outside-` and `diag-` with digits, safe in a quoted selector.
    row = state.templates.get_template("rows/_row.html")
    moved = "".join(
        row.render(**context, view=view(i), oob=f'outerHTML:[data-chat-flow-key="{now[i].key}"]') for i in renamed
    ).strip()
    return html + moved, now


@router.get("/sessions/{key}/live", include_in_schema=False)
async def live(
    request: Request,
    state: State,
    entry: SessionEntry,
    strings: Lang,
    rows: int = Query(0, ge=0),
    size: int = Query(-1),
) -> StreamingResponse:
    """The page's rows as the log grows; `rows` and `size` say what the page was rendered from."""
    script = await run_in_threadpool(transcript, state, entry)
    shown = signatures(script)[:rows]
    version = file_version(entry.source)
    if size != version[0]:
        shown = shown[: max(0, len(shown) - 5)]  # the log moved on before we connected: resend the tail

    async def stream() -> AsyncIterator[str]:
        nonlocal shown, version
        yield ": connected\n\n"
        if size > version[0]:
            # the log shrank between the page's render and this connection: it cannot be read on
            yield sse("notice", state.templates.get_template("rows/live_notice.html").render(t=strings))
        elif len(shown) != rows or size != version[0]:
            html, shown = await run_in_threadpool(update, state, entry, strings, shown)
            if html:
                yield sse("rows", html)
        while not await request.is_disconnected():
            await asyncio.sleep(POLL_SECONDS)
            try:
                current = file_version(entry.source)
            except OSError:
                continue
            if current == version:
                continue
            if not grew_in_place(version, current):
                # the page reloads itself; the stream stays open so the browser sees no error
                yield sse("notice", state.templates.get_template("rows/live_notice.html").render(t=strings))
                version = current
                continue
            version = current
            html, shown = await run_in_threadpool(update, state, entry, strings, shown)
            if html:
                yield sse("rows", html)

    headers: dict[str, Any] = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)
