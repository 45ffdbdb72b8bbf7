"""Live tail: open session pages follow their log over Server-Sent Events.

Each connection remembers what its page shows (row keys, links, crash closers, the header's
verdict, counts and title) and the mark of the file it was read from. When the file only
grew, the registry reads the new bytes; the page gets the new rows appended, the rows
that changed swapped in place, and its header again when that changed (a corrupt line
appended makes an accepted log repaired or refused). A file rewritten (shrunk, replaced,
or its read bytes changed) is read afresh and the page's rows are replaced, with a notice;
a log gone (deleted, emptied, or holding another session) is said to be gone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from functools import partial
from itertools import takewhile
from typing import Any, NamedTuple

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from ...access import Identity
from ...history.session import SessionLog
from ...log.records import NotASessionLog
from ...log.sources import RecordChanged, SessionSource
from ...sessions.archive import media_of
from ...sessions.keys import session_url
from ...sessions.registry import (
    Entry,
    FileVersion,
    Mark,
    SessionGone,
    appended,
    file_version,
    fingerprint,
    mark_at,
    moved_on,
)
from ...sessions.transcript import Transcript
from ..access import client_of, still_valid
from ..fair_share import charged, over_share
from ..present.facts import facts_context
from ..present.folds import Fold
from ..present.rows import RowView
from ..present.strings import Strings
from ..present.windows import rendered_window, row_macro, transcript
from ..present.windows import view as row_view_of
from ..state import Lang, SessionEntry, State, WebState, Who
from ..views import From

router = APIRouter()
POLL_SECONDS = 0.25
ASK_ANYWAY_SECONDS = 5.0  # an uploaded session's live page asks the catalog this often without a notice
RECHECK_SECONDS = 5.0  # how often an open stream asks whether its token is still usable
# Rows sent again to a page whose log moved on before it connected (or that connects again): those of
# the turn its last row is in, at least RESENT and at most RESENT_AT_MOST, and none before its first
RESENT, RESENT_AT_MOST = 5, 500


class Signature(NamedTuple):
    """What a page shows of one row, as far as telling whether it must be sent again."""

    key: str
    links: tuple[tuple[str, tuple[int, ...]], ...]
    # The row's events that are in-memory crash closers. While the final turn is open the
    # closers sit at the seqs the next real events take, so a real result appended in place
    # of its closer leaves key and links unchanged: only this tells the two rows apart.
    closers: tuple[int, ...]
    anchor: str


Shown = tuple[Signature, ...]  # what a page shows of its rows, in order


def signatures(t: Transcript) -> Shown:
    """Every row's signature, made once per transcript (file version) and kept with it: each tail's start
    compares them all, and the abuser's forty tails on a long session had each walked its thousands of rows."""

    def make() -> Shown:
        closers = t.log.closers
        return tuple(
            Signature(row.key, row.links, tuple(s for s in (row.seq, *row.related) if s in closers), anchor)
            for row, anchor in zip(t.rows, t.anchors, strict=True)
        )

    made: Shown = t.kept.get("signatures", make)
    return made


def resent_from(t: Transcript, rows: int, first: int) -> int:
    """The first of the rows `first`…`rows` a page holds to send it again when what it has of its last rows
    is not known: the first row of the turn its last rows are in, where a row can still change (a tool row
    gains its result, a crash closer gives way to what came), though at least RESENT rows back, at most
    RESENT_AT_MOST, and never before the page's first row."""
    first = min(first, rows)
    i, floor = max(first, rows - RESENT), max(first, rows - RESENT_AT_MOST)
    while i > floor and t.rows[i].kind != "turn":
        i -= 1
    return i


def sse(event: str, html: str) -> str:
    data = "\n".join(f"data: {line}" for line in html.split("\n"))
    return f"event: {event}\n{data}\n\n"


def update(
    state: WebState, entry: Entry, t: Strings, shown: Sequence[Signature], first: int = 0, taken_back: bool = False
) -> tuple[str, Shown]:
    """HTML for what changed since `shown`: replaced rows (out of band) and appended ones, bookkeeping rows
    folded as the page's windows fold them (`present.folds`). `first` is the page's first row, where its
    folds begin at the latest; `taken_back`: the page dropped the rows after `shown` itself (a `resend`)."""
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

    def view(i: int) -> RowView:
        return row_view_of(script, i)

    removed = [old.anchor for old in shown[first_new:]]
    appended = [view(i) for i in range(first_new, len(now))]
    # the fold the page's last kept row is in, when rows after it come or went (a long run is walked only then)
    kept = kept_fold(script, first_new, first) if appended or removed or taken_back else ()
    joining = list(takewhile(lambda v: v.bookkeeping, appended)) if kept else []
    context = {"t": t, "base_url": session_url(entry.key), "media": media_of(entry)}
    html = (
        state.templates.get_template("rows/live.html")
        .render(
            **context,
            replaced=[view(i) for i in replaced],
            removed=removed,
            joined=Fold((*kept, *joining)) if kept and (joining or removed or taken_back) else None,
            last_kept=kept[-1].row.key if kept else "",
            joining=joining,
            appended=appended[len(joining) :],
        )
        .strip()
    )
    # A renamed row is swapped in place too, found by its key: its id is not the one the page has.
    # Keys are `seq-`, `outside-` and `diag-` with digits, safe in a quoted selector.
    moved = ""
    if renamed:  # the row module builds every kind's module: only when a row is to be drawn with it
        row = row_macro(state.templates.env, "rows/_row.html", "row", context)
        moved = "".join(row(view(i), oob=f'outerHTML:[data-chat-flow-key="{now[i].key}"]') for i in renamed).strip()
    return html + moved, now


def kept_fold(script: Transcript, end: int, first: int) -> tuple[RowView, ...]:
    """The rows of the fold the page's row `end - 1` is in, when it is a bookkeeping row: its run back to its
    start, though not before the page's first row `first` (a window begins a fold there); else none."""
    rows: list[RowView] = []
    i = end - 1
    while i >= max(first, 0) and (view := row_view_of(script, i)).bookkeeping:
        rows.append(view)
        i -= 1
    return tuple(reversed(rows))


def head_html(state: WebState, entry: Entry, log: SessionLog, script: Transcript, t: Strings, who: Identity) -> str:
    """The page's title and facts as the log reads now, each to be swapped in out of band: what the page's header
    shows (relatives: those `who` may see), times and cost included. Rendered once per transcript, language,
    identity and registry version (relatives are other sessions): every tail's start and update sends it."""

    def render() -> str:
        facts = facts_context(state, entry, log, script, who)
        return state.templates.get_template("rows/live_head.html").render(t=t, lang=t.lang, **facts)

    return script.heads.get((t.lang, who, state.registry.version), render)


def page_mark(state: WebState, key: str, size: int | None) -> str:
    """The fingerprint of the bytes a page is rendered from (the first `size` of its file), so that its
    live tail can tell whether they are still there when it connects, or were rewritten meanwhile."""
    entry = state.registry.entry(key)
    if entry is None or size is None:
        return ""
    try:
        return fingerprint(entry.source, size).hex()
    except OSError:
        return ""


Seen = tuple[SessionSource, FileVersion | None]  # the file a key names, and its version (None: no such file)


class Tail:
    """What one open page shows, as far as telling what to send it next; one per connection."""

    def __init__(self, state: WebState, entry: Entry, strings: Strings, who: Identity) -> None:
        self.state = state
        self.who = who
        self.key = entry.key
        self.strings = strings
        self.source = entry.source  # the file the shown rows were read from
        self.mark: Mark | None = None  # what was read of it; None while nothing was
        self.shown: Shown = ()
        self.first = 0  # the page's first row: its last window's folds begin there at the latest
        self.head = ""  # the title and facts the page has, as `head_html` renders them
        self.showing = True  # the page shows a log that is there (no "gone" notice)
        self.seen: Seen | None = None
        self.uploaded = entry.upload is not None
        self.heard: int | None = None  # the catalog's notices counted at the last look that asked it
        self.asked = 0.0  # (monotonic) when that was

    def quiet(self) -> bool:
        """Whether the log cannot have changed since the last look, asked without blocking: an uploaded
        session's changes come through the catalog, which tells of any (PostgreSQL's notices, SQLite's version
        row), so it is looked at again only after one (or every ASK_ANYWAY_SECONDS)."""
        if not self.uploaded or self.seen is None:
            return False
        heard = self.state.registry.heard()
        return heard is not None and heard == self.heard and time.monotonic() - self.asked < ASK_ANYWAY_SECONDS

    def look(self) -> Seen:
        """The file the key names now (the one last followed while it names none) and its version; it may
        read the catalog again (a refresh), so a stream asks it in a worker thread."""
        self.heard, self.asked = (self.state.registry.heard() if self.uploaded else None), time.monotonic()
        entry = self.state.registry.entry(self.key)
        source = entry.source if entry is not None else self.source
        try:
            return source, file_version(source)
        except OSError:
            return source, None

    def start(self, rows: int, size: int, mark: str, first: int = 0) -> list[str]:
        """The first messages, for a page that shows rows `first`…`rows` of the first `size` bytes of its
        file, whose fingerprint was `mark` (`page_mark`)."""
        read = self.read()
        if read is None:
            return self.gone()
        entry, log, script, now = read
        self.source, self.mark, self.first = entry.source, now, first
        try:
            kept = 0 <= size <= now.version[0] and fingerprint(entry.source, size).hex() == mark
        except OSError:
            kept = False
        if not kept:  # rewritten since the page was rendered: its rows cannot be read on
            if self.look() != self.seen:  # and while it was read: what was read may be the page's old rows
                self.mark = None  # so the next poll replaces them with what it reads
                return []
            return self.replace(entry, log, script)
        self.shown = signatures(script)[:rows]
        # moved on before we connected, or while we read it (then what we read may be past what we marked)
        moved = size != now.version[0] or self.look() != self.seen
        if moved:
            # What the page has of its last rows is not known (a pending line's row, a tool row without its
            # result, or, on a reconnect, every row sent since): it drops the first row sent again and all
            # after it, so that those are there once.
            cut = resent_from(script, len(self.shown), first)
            resend = [sse("resend", self.shown[cut].key)] if cut < len(self.shown) else []
            self.shown = self.shown[:cut]
            return [*resend, *self.extend(entry, log, taken_back=bool(resend))]
        self.head = head_html(self.state, entry, log, script, self.strings, self.who)
        return [] if len(self.shown) == rows else self.extend(entry, log)

    def follow(self) -> list[str]:
        """What brings the page to what its log holds now."""
        registry = self.state.registry
        if not self.showing and registry.entry(self.key) is None:
            registry.refresh()  # its file changed while it answered no more: it may be back
        appended_to = self.mark if self.showing else None
        read = self.read()
        if read is None:
            return self.gone()
        entry, log, script, now = read
        try:
            grew = appended_to is not None and (
                appended(entry.source, appended_to, now.version)
                if entry.source == self.source
                else moved_on(entry.source, appended_to, now.version)
            )
        except OSError:
            grew = False
        self.source, self.mark = entry.source, now
        return self.extend(entry, log) if grew else self.replace(entry, log, script)

    def safely(self, move: Callable[[], list[str]]) -> list[str]:
        """`move`'s messages; none when the log changed under it while it was read: the next poll looks
        again, and replaces the page's rows, as what was sent of them is not known."""
        try:
            return move()
        except RecordChanged as exc:  # a record read again is another now: the log is read afresh
            self.state.registry.drop(exc)
            self.seen, self.mark = None, None
            return []
        except (OSError, NotASessionLog, SessionGone):
            self.seen, self.mark = None, None
            return []

    def read(self) -> tuple[Entry, SessionLog, Transcript, Mark] | None:
        """The key's entry, log and transcript as they are now, and the mark of the file they were read
        from; None when the key answers no more."""
        registry = self.state.registry
        source, version = self.seen = self.look()
        try:
            if version is None:
                return None
            now = mark_at(source, version)  # before reading: a rewrite while reading shows at the next look
            log = registry.log(self.key)
            entry = registry.entry(self.key)
            # what the key names now, as the identity may see it: a key that came to name a hidden session
            # answers as gone
            if log is None or entry is None or not self.who.sees_header(entry.header):
                return None
            if not self.who.sees_header(log.header.raw if log.header else None):
                return None
            if entry.source != source:  # the key was found to name another file while it was read
                now = mark_at(entry.source, file_version(entry.source))
                self.seen = (entry.source, now.version)
            return entry, log, transcript(self.state, entry), now
        except (OSError, NotASessionLog, SessionGone):
            return None

    def extend(self, entry: Entry, log: SessionLog, taken_back: bool = False) -> list[str]:
        """The rows appended and changed since, and the header when it changed."""
        html, self.shown = update(self.state, entry, self.strings, self.shown, self.first, taken_back)
        return ([sse("rows", html)] if html else []) + self.header(entry, log)

    def replace(self, entry: Entry, log: SessionLog, script: Transcript) -> list[str]:
        """The page's rows replaced by the first window of the log as it reads now, with a notice."""
        flow, _ = rendered_window(self.state, entry, script, self.strings, 0)
        self.shown = signatures(script)
        self.showing, self.first = True, 0
        notice = self.state.templates.get_template("rows/live_notice.html").render(t=self.strings, flow=flow)
        return [sse("notice", notice), *self.header(entry, log)]

    def header(self, entry: Entry, log: SessionLog) -> list[str]:
        head = head_html(self.state, entry, log, transcript(self.state, entry), self.strings, self.who)
        if head == self.head:
            return []
        self.head = head
        return [sse("facts", head)]

    def gone(self) -> list[str]:
        """The notice that the log is gone, once, naming the session its file holds now if any; the page
        keeps the rows it has."""
        if not self.showing:
            return []
        self.showing = False
        now = next((e for e in self.state.entries(self.who) if e.source == self.source), None)
        notice = self.state.templates.get_template("rows/live_notice.html")
        return [sse("notice", notice.render(t=self.strings, now=now, url=session_url(now.key) if now else None))]


@router.get("/sessions/{key}/live", include_in_schema=False)
async def live(
    request: Request,
    state: State,
    entry: SessionEntry,
    who: Who,
    strings: Lang,
    rows: int = Query(0, ge=0),
    first: From = 0,
    size: int = Query(-1),
    mark: str = Query("", max_length=64),
) -> Response:
    """The page's rows as the log changes; `rows`, `from`, `size` and `mark` say what the page was rendered
    from (its rows `from`…`rows` of the file's first `size` bytes)."""
    client = client_of(request)
    if state.streams[client] >= state.settings.live_streams_per_client:
        raise HTTPException(
            429,
            f"{state.streams[client]} live tails are open from this client already "
            f"(setting live_streams_per_client); close a page, or raise it",
        )
    refused = await over_share(state.shares, client)
    if refused is not None:
        return refused
    tail = Tail(state, entry, strings, who)

    async def work(step: Callable[..., Any], *args: Any) -> Any:
        """`step` in a worker thread, charged to the client (the idle wait between looks is not: a page open
        for an hour costs what its updates cost)."""
        async with charged(state.shares, state.slots, client):
            return await run_in_threadpool(step, *args)

    async def stream() -> AsyncIterator[str]:
        state.streams[client] += 1  # counted while it runs (asyncio: one event loop, no lock needed)
        try:
            async for message in follow():
                yield message
        finally:
            state.streams[client] -= 1
            if state.streams[client] <= 0:
                del state.streams[client]

    async def follow() -> AsyncIterator[str]:
        yield ": connected\n\n"
        for message in await work(tail.safely, partial(tail.start, rows, size, mark, first)):
            yield message
        # the stream stays open when the log is gone, so the browser sees no error and does not reconnect;
        # it ends when its token is revoked (the browser's reconnect is then refused)
        checked = time.monotonic()
        while not await request.is_disconnected():
            await asyncio.sleep(POLL_SECONDS)
            if time.monotonic() - checked > RECHECK_SECONDS:
                if not await run_in_threadpool(still_valid, request):
                    return
                checked = time.monotonic()
            if tail.quiet() or await work(tail.look) == tail.seen:
                continue
            for message in await work(tail.safely, tail.follow):
                yield message

    headers: dict[str, Any] = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)
