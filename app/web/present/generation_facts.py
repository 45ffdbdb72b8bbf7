"""A session's format generations on the server: never an older file shown silently as the session.

A session folder may hold `session.v<N>.jsonl[.zstd]` beside the frozen version-0 `session.jsonl[.zstd]`
(`log.generations`). Each file is listed and answers at a key of its own; the session's short key (its id)
is its newest generation's, and an earlier generation's page says it shows the session "as of seq K" (its
last), linking the current state, which links back. A log whose format is newer than the pinned release
reads is shown as far as its events read as this release's, under a banner that says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ...history.session import SessionLog
from ...log.generations import Generation, generation_number, session_generations
from ...log.records import NotASessionLog
from ...model.rules import DSH_RELEASE, SESSION_FORMAT_VERSION, newer_format
from ...sessions.generation_keys import on_disk
from ...sessions.keys import session_url
from ...sessions.registry import Entry
from ..state import WebState


def _generations(state: WebState) -> dict[str, Generation]:
    """Every loaded file's generation, by path: worked out once per registry version."""
    registry = state.registry
    found: dict[str, Generation] = state.lists.get(
        (registry.version, "generations"),
        lambda: session_generations((e.source.path, e.session_id) for e in registry.entries() if on_disk(e.source)),
    )
    return found


def generation_of(state: WebState, entry: Entry) -> Generation | None:
    """The generation of `entry`'s file when its folder holds another of its session; else None."""
    return _generations(state).get(entry.source.path) if on_disk(entry.source) else None


def current_generations(state: WebState) -> list[Entry]:
    """The loaded sessions but earlier generations: what a relative's link may name (the current state,
    whose page links its earlier generations)."""
    found = _generations(state)
    return [
        e
        for e in state.registry.entries()
        if not (on_disk(e.source) and e.source.path in found and not found[e.source.path].is_current)
    ]


def generation_mark(state: WebState, entry: Entry) -> dict[str, Any] | None:
    """What the session list says of `entry`'s generation, from the names alone (no file is read for it):
    its number, whether it is the current state, the current state's key and URL, and how many files."""
    generation = generation_of(state, entry)
    if generation is None:
        return None
    keys = {e.source.path: e.key for e in state.registry.entries() if on_disk(e.source)}
    current = next((keys[p] for p in reversed(generation.current) if p in keys), None)
    return {
        "number": generation.number,
        "current": generation.is_current,
        "currentKey": current,
        "currentUrl": session_url(current) if current is not None else None,
        "files": len(generation.current) + len(generation.earlier),
    }


def last_seq(log: SessionLog | None) -> int | None:
    """The seq an earlier generation stands "as of": its last stored event's (seqs count from 0)."""
    return log.stored_count - 1 if log is not None and log.stored_count > 0 else None


def _as_of(state: WebState, key: str) -> int | None:
    try:
        return last_seq(state.registry.log(key))
    except (OSError, ValueError, NotASessionLog):
        return None  # unreadable now: its own page says why


def generation_json(state: WebState, entry: Entry, log: SessionLog | None) -> dict[str, Any] | None:
    """What the page and its twin say of `entry`'s generation: its number, whether it is the session's
    current state (else the seq it stands as of), and every file of the session's folder, oldest first,
    each with its key, URL and generation. `log` is `entry`'s own, read already (None: read it here)."""
    generation = generation_of(state, entry)
    if generation is None:
        return None
    by_path = {e.source.path: e for e in state.registry.entries() if on_disk(e.source)}
    files = []
    for path in (*generation.earlier, *generation.current):
        other = by_path.get(path)
        if other is None:
            continue  # gone since the generations were worked out
        current = path in generation.current
        as_of = None
        if not current:
            as_of = last_seq(log) if other.key == entry.key and log is not None else _as_of(state, other.key)
        files.append(
            {
                "key": other.key,
                "url": session_url(other.key),
                "path": other.source.label,
                "name": os.path.basename(path),
                "number": generation_number(path),
                "current": current,
                "asOfSeq": as_of,
                "self": other.key == entry.key,
            }
        )
    own = next((f for f in files if f["self"]), None)
    current_file = next((f for f in reversed(files) if f["current"]), None)
    return {
        "number": generation.number,
        "current": generation.is_current,
        "asOfSeq": own["asOfSeq"] if own is not None else None,
        "currentKey": current_file["key"] if current_file is not None else None,
        "currentUrl": current_file["url"] if current_file is not None else None,
        "files": files,
    }


def newer_format_json(header: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The banner's facts when the header's format is newer than the pinned release reads; else None."""
    version = newer_format(dict(header) if header is not None else None)
    if version is None:
        return None
    return {"version": version, "reads": SESSION_FORMAT_VERSION, "release": DSH_RELEASE}


__all__ = ["current_generations", "generation_json", "generation_mark", "generation_of", "newer_format_json"]
