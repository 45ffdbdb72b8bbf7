"""Search across every loaded session: `/search` and its JSON twin `/api/search`.

A search first brings the index up to date with the sessions loaded now (reading only those whose
file changed since they were indexed), then asks it; each hit links to its row (`?at=`), so the
session page opens there (docs/decisions/0008-cross-session-search.md). It searches only the sessions the
request's identity sees (docs/decisions/0020-access-control.md): no hidden session's row is shown or counted.
"""

from __future__ import annotations

import math
import os
import time
from itertools import groupby
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request
from markupsafe import Markup

from ...access import Identity
from ...sessions.hits import SearchHitJson, hit_json
from ...sessions.registry import Entry, Mark
from ...sessions.search_index import (
    HITS,
    INDEX_FILE,
    CorpusIndex,
    FanOut,
    Found,
    Reader,
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
from ..state import State, WebState, Who
from ..views import RowKind, SearchText, Served, fields, page_and_twin, page_or_twin

router = APIRouter()


# How long sessions found on disk stay good enough for a search: finding a thousand again costs more than a
# query (W1: ~25 ms), and a reader refining a search sends one after another. The list finds them every 4 s.
FIND_EVERY = 2.0


class Finder:
    """The app's search indexes, and when the sessions it searches were last found again on disk: `index` for
    sessions on this machine's disk, `uploads` for a team store's uploads (None: they are on disk too)."""

    def __init__(self, index: CorpusIndex, uploads: PgCorpusIndex | None = None) -> None:
        self.index = index
        self.uploads = uploads
        self._found_at = -math.inf

    def find_sessions(self, state: WebState) -> None:
        """Find the sessions on disk again (new files, vanished ones) unless that was done a moment ago; and
        the uploads whenever any process added or deleted one (one catalog version read), so a search finds
        an upload the moment its answer was sent."""
        now = time.monotonic()
        if now - self._found_at >= FIND_EVERY or (state.store is not None and state.store.changed()):
            state.registry.refresh()
            self._found_at = now

    def pending(self, state: WebState) -> int:
        """How many listed sessions the next search indexes first; raises Unavailable when an index that
        must be asked does not answer."""
        entries = state.registry.entries()
        if self.uploads is None:
            return self.index.pending(entries)
        local = [e for e in entries if e.upload is None]
        return self.index.pending(local) + self.uploads.pending([e for e in entries if e.upload is not None])


def keep_index(app: FastAPI) -> None:
    """Open the app's search index (in its data dir; in memory for a server that keeps no data) and have it
    follow the registry: the rows of a session that goes (a deleted upload, a vanished file) go too."""
    state: WebState = app.state.web
    data_dir = state.settings.data_dir
    index = CorpusIndex(os.path.join(data_dir, INDEX_FILE) if data_dir else None)
    state.registry.on_forget(index.forget)
    app.state.finder = Finder(index, team_index(state))


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
    """Both indexes' hits, the local sessions' first, the first `limit` in all."""
    return Found((local.hits + uploads.hits)[:limit], local.total + uploads.total, local.sessions + uploads.sessions)


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
    shown: int
    indexed: int  # sessions this search indexed first (new, or changed since they were indexed)
    hits: list[SearchHitJson]


def search_results(state: WebState, finder: Finder, search: Search, who: Identity) -> SearchJson:
    """The hits of `search` over every loaded session `who` sees, each with its session and a link to its row."""
    finder.find_sessions(state)
    entries = state.entries(who)
    local = [e for e in entries if e.upload is None] if finder.uploads is not None else entries
    workers = FanOut(state.settings.index_workers, state.registry.limits)
    indexed = bring_up_to_date(finder.index, local, _reader(state), fan_out=workers) if not search.empty else 0
    result: Found = finder.index.query(search, [e.source for e in local])
    by_identity = {identity(e.source): e for e in local}
    if finder.uploads is not None:
        uploaded = {upload_identity(e): e for e in entries if e.upload is not None}
        if not search.empty:
            # every upload, whoever asks: the team index keeps itself to the whole list (what it leaves out of
            # its counts), so a scoped identity is not told how many of them this search indexed
            every = [e for e in state.registry.entries() if e.upload is not None]
            fresh = finder.uploads.bring_up_to_date(every, _upload_reader(state))
            if not who.scoped:
                indexed += fresh
        # a scoped identity's search asks the index for the uploads it sees alone: hits and counts both
        result = joined(result, finder.uploads.query(search, only=list(uploaded.values()) if who.scoped else None))
        by_identity |= uploaded
    hits = [hit_json(by_identity[h.identity], h) for h in result.hits]  # the query asked these sources alone
    asked = SearchAskedJson(q=search.q, kind=search.kind, form=search.form, tool=search.tool, errors=search.errors)
    return SearchJson(
        query=asked, total=result.total, sessions=result.sessions, shown=len(hits), indexed=indexed, hits=hits
    )


def _grouped(data: SearchJson) -> dict[str, Any]:
    """What the page shows of the hits: grouped by session, each snippet's HTML as markup."""
    # the snippet's HTML is Snippet.html(): every character of the log's text escaped, then the marks put in
    hits = [{**h.model_dump(), "html": Markup(h.html)} for h in data.hits]
    return {**fields(data), "groups": [list(group) for _, group in groupby(hits, key=lambda h: h["key"])]}


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
