"""The nearest thing that exists to an address nothing answers at: what a 404 page offers besides the list.

A missing message, step, event or body of a loaded session leads to that session; a mistyped key to the
loaded session whose key is closest; a missing upload to the uploads page.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import get_close_matches
from urllib.parse import unquote

from ..access import Identity
from ..sessions.keys import session_url
from ..sessions.registry import Registry

CLOSE_ENOUGH = 0.75  # difflib's ratio: a key one or two characters off, not any key of the same shape


@dataclass(frozen=True, slots=True)
class Nearest:
    url: str
    label: str  # a session's key, or the page's own name (`uploads`)


def nearest(registry: Registry, path: str, identity: Identity) -> Nearest | None:
    """What lies nearest to `path` (a page's address) among what `identity` may see, or None when nothing does."""
    parts = [unquote(p) for p in path.strip("/").split("/")]
    if parts[0] == "uploads" and len(parts) > 1:
        return Nearest("/uploads", "uploads")
    if parts[0] != "sessions" or len(parts) < 2:
        return None
    key = parts[1]
    seen = [e for e in (registry.entry(key), *registry.copies(key)) if e is not None and identity.sees_header(e.header)]
    if seen:
        return Nearest(session_url(key), key) if len(parts) > 2 else None
    keys = [e.key for e in registry.entries() if identity.sees_header(e.header)]
    close = get_close_matches(key, keys, n=1, cutoff=CLOSE_ENOUGH)
    return Nearest(session_url(close[0]), close[0]) if close else None
