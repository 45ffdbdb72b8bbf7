"""Search across every loaded session: `/search` and its JSON twin `/api/search`.

A search first brings the index up to date with the sessions loaded now (reading only those whose
file changed since they were indexed), then asks it; each hit links to its row (`?at=`), so the
session page opens there (docs/decisions/0008-cross-session-search.md). It searches only the sessions the
request's identity sees (docs/decisions/0020-access-control.md): no hidden session's row is shown or counted.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import groupby
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request
from markupsafe import Markup

from ...access import Identity
from ...log.sources import SessionSource
from ...sessions.hits import SearchHitJson, hit_json
from ...sessions.priority import lower_this_thread
from ...sessions.registry import Entry, Mark
from ...sessions.search_index import (
    COUNTED,
    HITS,
    INDEX_FILE,
    CorpusIndex,
    FanOut,
    Found,
    Reader,
    Versions,
    bring_up_to_date,
    identity,
    read_afresh,
    read_mark,
)
from ...sessions.search_index import Query as Search
from ...sessions.team_search_index import PgCorpusIndex, upload_identity
from ...sessions.transcript import Transcript
from ...sessions.wire import Twin
from ...store.pg_catalog import PostgresCatalog
from ..present.clock import WallClock
from ..state import State, WebState, Who
from ..views import RowKind, SearchText, Served, fields, page_and_twin, page_or_twin

router = APIRouter()
_log = logging.getLogger(__name__)


# How long sessions found on disk stay good enough for a search: finding a thousand again costs more than a
# query (W1: ~25 ms), and a reader refining a search sends one after another. The list finds them every 4 s.
FIND_EVERY = 2.0
# bytes of log a pass indexes in a second on a busy machine, an estimate erring low: a search waits for the
# sessions pending only when they are few enough bytes for its wait (one that does not says what is pending)
INDEXED_PER_SECOND = 4 * 1024 * 1024


class Finder:
    """The app's search indexes, and when the sessions it searches were last found again on disk: `index` for
    sessions on this machine's disk, `uploads` for a team store's uploads (None: they are on disk too).

    Indexing is never a search's own work (issue 33: twenty fresh uploads made the next search take minutes,
    and anyone who may upload could do that to everyone): one worker thread brings both indexes up to date, a
    pass at a time; a search asks for a pass and waits for it at most `search_wait_ms`, then answers from the
    indexes as they stand and says how many sessions are still pending
    (docs/decisions/0023-indexing-in-the-background.md)."""

    def __init__(self, index: CorpusIndex, uploads: PgCorpusIndex | None = None) -> None:
        self.index = index
        self.uploads = uploads
        self._found_at = -math.inf
        # its thread goes when the app does: an idle worker holds only a weak reference to its pool
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="dsh-inspect-index", initializer=lower_this_thread)
        self._asking = threading.Lock()
        self._queued: Future[int] | None = None

    def pass_after_now(self, state: WebState) -> Future[int]:
        """A pass that starts after this call (the one queued and not started yet, else a new one): its
        result is how many sessions it indexed, or what stopped it (Unavailable)."""
        with self._asking:
            queued = self._queued
            if queued is not None and not queued.running() and not queued.done():
                return queued
            self._queued = self._worker.submit(self.bring_up_to_date, state)
            return self._queued

    def forget_later(self, sources: list[SessionSource]) -> None:
        """Have the worker drop these sources' rows, after any pass under way. A delete never waits for the
        index's write lock, which another process's pass may hold a while; searches ask only for the sources
        listed, so rows not dropped yet are found by none."""
        self._worker.submit(self.index.forget, sources).add_done_callback(_told)

    def bring_up_to_date(self, state: WebState) -> int:
        """One pass: the sessions found again, then every one new or changed indexed (the local ones in
        `index_workers` processes when many); how many it indexed."""
        self.find_sessions(state)
        entries = state.registry.entries()
        local = [e for e in entries if e.upload is None] if self.uploads is not None else entries
        workers = FanOut(state.settings.index_workers, state.registry.limits, state.elsewhere)
        indexed = bring_up_to_date(self.index, local, _reader(state), fan_out=workers, versions=_versions(state))
        if self.uploads is not None:
            # every upload, whoever asks: the team index keeps itself to the whole list (what it leaves out of
            # its counts)
            indexed += self.uploads.bring_up_to_date(
                [e for e in entries if e.upload is not None], _upload_reader(state)
            )
        return indexed

    def find_sessions(self, state: WebState) -> None:
        """Find the sessions on disk again (new files, vanished ones) unless that was done a moment ago; and
        the uploads whenever any process added or deleted one (one catalog version read), so a search finds
        an upload the moment its answer was sent."""
        now = time.monotonic()
        if now - self._found_at >= FIND_EVERY or (state.store is not None and state.store.changed()):
            state.registry.refresh()
            self._found_at = now

    def pending(self, state: WebState, entries: list[Entry] | None = None) -> list[Entry]:
        """Those of `entries` (every listed session) a pass has yet to index (an upload's sessions once, on
        the team index); raises Unavailable when an index that must be asked does not answer."""
        entries = state.registry.entries() if entries is None else entries
        if self.uploads is None:
            return self.index.pending(entries, _versions(state))
        local = [e for e in entries if e.upload is None]
        return self.index.pending(local, _versions(state)) + self.uploads.pending(
            [e for e in entries if e.upload is not None]
        )


def _versions(state: WebState) -> Versions:
    """The sessions' file versions as the registry keeps them: an upload's file is looked at once, not by every
    search and pass (issue 33: a thousand looks a search, each a wait for the GIL again, made searches the
    slowest requests under load)."""
    return Versions(state.registry.known_version, state.registry.look_again)


def indexed_soon(state: WebState, pending: list[Entry], seconds: float) -> bool:
    """Whether a pass could index `pending` within `seconds`, by their size: a search waits for no more (a
    client uploading large logs one after another would make every search wait its whole bound). A size not
    known is taken for too large."""
    sizes = [state.size_of(entry) for entry in pending]
    return None not in sizes and sum(s for s in sizes if s is not None) <= seconds * INDEXED_PER_SECOND


def _told(done: Future[int]) -> None:
    """A failed forget, logged: its rows stay in the file (found by no search) until the source is indexed again."""
    failed = done.exception()
    if failed is not None:
        _log.warning("the search index kept a gone session's rows: %s", failed)


def keep_index(app: FastAPI) -> None:
    """Open the app's search index (in its data dir; in memory for a server that keeps no data) and have it
    follow the registry: the rows of a session that goes (a deleted upload, a vanished file) go too."""
    state: WebState = app.state.web
    data_dir = state.settings.data_dir
    index = CorpusIndex(os.path.join(data_dir, INDEX_FILE) if data_dir else None)
    finder = Finder(index, team_index(state))
    state.registry.on_forget(finder.forget_later)
    app.state.finder = finder


def team_index(state: WebState) -> PgCorpusIndex | None:
    """On the team store, the index every process shares, in the catalog's database: an upload accepted by
    another process is found here at once (the local index would know only uploads read on this machine).
    Roots on local disk stay in the local index: they are this process's alone."""
    catalog = state.store.catalog if state.store is not None else None
    if not isinstance(catalog, PostgresCatalog):
        return None
    return PgCorpusIndex(catalog.url, catalog.waits)


def finder_of(request: Request) -> Finder:
    found: Finder = request.app.state.finder
    return found


def _reader(state: WebState) -> Reader:
    def read(entry: Entry) -> tuple[Transcript | None, Mark] | None:
        """The transcript a page built already for this version, else one read afresh and not kept (indexing
        a thousand sessions must not push the ones being read out of the registry's cache)."""
        built: Transcript | None = state.registry.peek(entry.key, "transcript")
        if built is None:
            return read_afresh(entry, state.registry.limits)
        try:
            return built, read_mark(entry.source)
        except OSError:
            return None

    return read


def _upload_reader(state: WebState) -> Reader:
    """`_reader`, the upload's bytes first brought to this machine (the team store's read cache)."""
    read = _reader(state)

    def read_upload(entry: Entry) -> tuple[Transcript | None, Mark] | None:
        if state.store is None or entry.upload is None:
            return None
        try:
            state.store.fetch(entry.upload)
        except OSError:
            return None  # the object store cannot be read now: tried again on the next search
        return read(entry)

    return read_upload


def joined(local: Found, uploads: Found, limit: int = HITS) -> Found:
    """Both indexes' hits, the local sessions' first, the first `limit` in all; counted whole when both were."""
    return Found(
        (local.hits + uploads.hits)[:limit],
        local.total + uploads.total,
        local.sessions + uploads.sessions,
        local.counted_all and uploads.counted_all,
    )


class SearchAskedJson(Twin):
    q: str
    kind: str
    form: str
    tool: str
    errors: bool


class SearchJson(Twin):
    """The hits across every loaded session in session and row order: the first `shown` of `total`."""

    query: SearchAskedJson
    total: int
    sessions: int
    # false when counting stopped at `COUNTED` matching rows (of each index: a team store's uploads have their
    # own): `total` and `sessions` are then at least these, and the hits are the first in session and row order
    # of the rows counted
    counted_all: bool
    shown: int
    indexed: int  # sessions indexed by the pass this search waited for (new, or changed since)
    # sessions it may see not indexed yet when it answered: their hits are not among these; ask again
    pending: int
    hits: list[SearchHitJson]


def search_results(state: WebState, finder: Finder, search: Search, who: Identity) -> SearchJson:
    """The hits of `search` over every loaded session `who` sees, each with its session and a link to its row:
    from the indexes once the pass asked for now is done, or `search_wait_ms` has passed (then some sessions
    are pending, and the answer says how many)."""
    indexed = 0
    finder.find_sessions(state)  # files that appeared are listed, and counted pending until indexed
    wait = state.settings.search_wait_ms / 1000
    entries = state.entries(who)
    # counted before the query: a session indexed in between is found, never counted pending and missed alike
    pending = 0
    if not search.empty:
        indexing = finder.pass_after_now(state)
        waiting = finder.pending(state, entries)  # every session's known and indexed version, compared once
        pending = len(waiting)
        if waiting and indexed_soon(state, waiting, wait):
            with contextlib.suppress(TimeoutError):  # answered from what is indexed; the pass goes on
                # a scoped identity is not told how many sessions a pass indexed: it indexes every one
                counted = indexing.result(timeout=wait)
                indexed = 0 if who.scoped else counted
            entries = state.entries(who)
            pending = len(finder.pending(state, entries))
    local = [e for e in entries if e.upload is None] if finder.uploads is not None else entries
    result: Found = finder.index.query(search, [e.source for e in local])
    by_identity = {identity(e.source): e for e in local}
    if finder.uploads is not None:
        uploaded = {upload_identity(e): e for e in entries if e.upload is not None}
        # a scoped identity's search asks the index for the uploads it sees alone: hits and counts both
        result = joined(result, finder.uploads.query(search, only=list(uploaded.values()) if who.scoped else None))
        by_identity |= uploaded
    hits = [hit_json(by_identity[h.identity], h, search) for h in result.hits if h.identity in by_identity]
    asked = SearchAskedJson(q=search.q, kind=search.kind, form=search.form, tool=search.tool, errors=search.errors)
    return SearchJson(
        query=asked,
        total=result.total,
        sessions=result.sessions,
        counted_all=result.counted_all,
        shown=len(hits),
        indexed=indexed,
        pending=pending,
        hits=hits,
    )


def _grouped(data: SearchJson) -> dict[str, Any]:
    """What the page shows of the hits: grouped by session, each snippet's HTML as markup."""
    # the snippet's HTML is Snippet.html(): every character of the log's text escaped, then the marks put in
    hits = [{**h.model_dump(), "html": Markup(h.html), "clock": WallClock.of(h.time)} for h in data.hits]
    groups = [list(group) for _, group in groupby(hits, key=lambda h: h["key"])]
    return {**fields(data), "groups": groups, "counted_bound": COUNTED}


@page_and_twin(
    router,
    "/search",
    twin=SearchJson,
    summary="Rows of every loaded session matching a text and facets",
    name="api_search",
)
def search_page(
    request: Request,
    state: State,
    who: Who,
    q: SearchText = "",
    kind: RowKind = "",
    form: str = Query("", description="a context row's rendered form"),
    tool: str = "",
    errors: bool = False,
) -> Served[SearchJson]:
    search = Search(q=q, kind=kind, form=form, tool=tool.strip(), errors=errors)
    return page_or_twin(request, search_results(state, finder_of(request), search, who), "search.html", _grouped)
