"""`dsh-inspect search`: rows of the sessions under some paths matching a phrase, from the command line's own
index (docs/decisions/0008-cross-session-search.md). It needs no web layer, and an import contract keeps it so.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Any, TextIO

import orjson

from ..log.sources import UnreadablePath
from ..sessions.hits import hit_json
from ..sessions.registry import Registry
from ..sessions.search_index import (
    COUNTED,
    INDEX_FILE,
    CorpusIndex,
    FanOut,
    Query,
    bring_up_to_date,
    identity,
    read_afresh,
    visible,
)
from ..settings import Settings, default_cache_dir
from .progress import Progress


def run_search(
    query: str,
    paths: Sequence[str],
    *,
    kind: str,
    form: str,
    tool: str,
    errors: bool,
    index_path: str | None,
    as_json: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    """Rows of the sessions under `paths` matching `query`: 0 when some do, 1 when none, 2 for a bad path."""
    search = Query(q=query, kind=kind, form=form, tool=tool, errors=errors)
    if search.empty:
        err.write("dsh-inspect search: give a QUERY, or a filter (--kind, --form, --tool, --errors)\n")
        return 2
    path = index_path or os.path.join(default_cache_dir(), INDEX_FILE)
    try:
        index = CorpusIndex(path)
    except (OSError, sqlite3.Error) as exc:
        err.write(f"dsh-inspect search: cannot use the index {path}: {exc}\n")
        return 2
    try:
        entries = Registry(list(paths)).entries()
    except UnreadablePath as exc:
        index.close()
        err.write(f"dsh-inspect search: {exc}\n")
        return 2
    progress: Progress | None = None

    def step(n: int, total: int, entry: Any) -> None:
        nonlocal progress
        progress = progress or Progress(err, total, "indexing")
        progress.step(entry.source.label)

    try:
        bring_up_to_date(index, entries, read_afresh, step, FanOut(Settings().index_workers))
        if progress is not None:
            progress.close()
        found = index.query(search, [e.source for e in entries])
    finally:
        index.close()
    by_identity = {identity(e.source): e for e in entries}
    if as_json:
        # each hit as /api/search gives it, its page's URLs included
        hits = [hit_json(by_identity[h.identity], h, search).model_dump(mode="json", by_alias=True) for h in found.hits]
        doc = {
            "query": query,
            "total": found.total,
            "sessions": found.sessions,
            "countedAll": found.counted_all,
            "hits": hits,
        }
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        # a match in reverse video on a terminal, between [[ ]] elsewhere; a log's control characters never raw
        before, after = ("\x1b[7m", "\x1b[0m") if out.isatty() else ("[[", "]]")
        for h in found.hits:
            label = by_identity[h.identity].source.label
            out.write(f"{visible(label)}  {visible(h.anchor)}  {h.snippet.bracketed(before, after)}\n")
        if not found.counted_all:
            err.write(
                f"dsh-inspect search: the first {len(found.hits):,} of over {found.total:,} matching rows shown "
                f"(counting stops at {COUNTED:,}: a longer phrase, --kind or --tool narrows it)\n"
            )
        elif found.total > len(found.hits):
            err.write(f"dsh-inspect search: the first {len(found.hits):,} of {found.total:,} matching rows shown\n")
    return 0 if found.total else 1
