"""A session as a list shows it, from its header and its summary once read: the session list's rows, and the
candidates "Compare with…" offers (issue 41, item 7), alike. A reader that may not read the log (`metrics`)
is shown the facts without their text."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ...access import Identity
from ...sessions.registry import Entry
from ..state import WebState
from .clock import WallClock
from .entries import entry_json, project_name

# what a summary holds of the log's text, which only a reader that may `read` is shown (`error`, which may
# quote the log, is left out too)
TEXT_FACTS = ("title", "plainTitle", "firstPrompt")


def stamp(ms: Any) -> str | None:
    """Epoch milliseconds as the list's JSON twin words a time (minutes, UTC); None for no time."""
    clock = WallClock.of(ms)
    return clock.utc if clock else None


def kept_as(state: WebState, entry: Entry) -> tuple[str, Hashable] | None:
    """What the session's summary is kept under (`WebState.summaries`): its key and file version (an upload's
    as the registry keeps it: a list of a thousand need not look at a thousand files); None when its file is
    not on this machine (a team store's upload out of the read cache): it is read then."""
    try:
        return entry.key, state.registry.known_version(entry)
    except OSError:
        return None


def cached_summary(state: WebState, entry: Entry) -> dict[str, Any] | None:
    """The summary when this file version has been read; None when it has not."""
    kept = kept_as(state, entry)
    return state.summaries.peek(kept) if kept is not None else None


def withheld(found: dict[str, Any], content: bool) -> dict[str, Any]:
    """A summary as a reader sees it: whole when it may read the log (`content`), else without its text, so a
    `metrics` token is given, and sorts by, only the counts, times, tokens and verdict."""
    if content:
        return found
    kept = {name: value for name, value in found.items() if name != "error"}
    return {**kept, **dict.fromkeys(TEXT_FACTS)}


def created(entry: Entry) -> str | None:
    return stamp((entry.header or {}).get("createdAt"))


def cwd_of(entry: Entry) -> str:
    cwd = (entry.header or {}).get("cwd")
    return cwd if isinstance(cwd, str) else ""


def created_at(entry: Entry) -> float:
    value = (entry.header or {}).get("createdAt")
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def shown_title(entry: Entry, found: dict[str, Any] | None) -> str:
    return (found or {}).get("plainTitle") or entry.session_id or entry.key


def listed_row(entry: Entry, found: dict[str, Any] | None, content: bool) -> dict[str, Any]:
    """One listed session: its entry's facts, its summary if read, and what its cells show; no title for a
    reader that may not read the log's `content` (the page shows the id in its place)."""
    cwd = cwd_of(entry)
    return {
        **entry_json(entry),
        "created": created(entry),
        "project": cwd or None,
        "projectName": project_name(cwd),
        "labels": list(entry.labels),  # its uploads' (none for a session served from disk)
        "title": shown_title(entry, found) if content else None,
        "summary": withheld(found, content) if found is not None else None,
    }


def reads(who: Identity, entry: Entry) -> bool:
    """Whether `who` may read the session's text (its title, prompts) where the list shows it."""
    return who.may("read", entry.header)
