"""Session keys that never break (docs/product.md Amendments, "Keys never break").

A key that has shown a session keeps showing it while that session is loaded:
loading another source with the same id never renames it. A copy that
arrives later gets its key unique by construction (`id~hash`), and a short
key (the bare id) that more than one copy could claim, with none holding it
already, answers a chooser of the copies instead of guessing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True, slots=True)
class Claim:
    """One loaded source asking for a key."""

    source: str  # what identifies the source between refreshes (its file and member, never its label)
    session_id: str | None
    short: str | None  # the bare id, URL-safe; None when the header names no id
    unique: str  # the key unique by construction: the id's slug, `~`, a hash of the path or upload digest


@dataclass(frozen=True, slots=True)
class Held:
    """The key a source showed under at the last refresh, and for which session id."""

    key: str
    session_id: str | None


@dataclass(frozen=True, slots=True)
class Keys:
    primary: dict[str, str]  # source → the key it is listed under
    aliases: dict[str, str]  # any other key that answers with a source → that source
    ambiguous: dict[str, tuple[str, ...]]  # a short key no copy holds → the sources that share it


def assign(claims: Sequence[Claim], held: Mapping[str, Held]) -> Keys:
    """Each claim's key: the one it held, if it still shows the same session; else its short key when it
    alone could claim it; else its unique key. Pure: the registry keeps `held` from refresh to refresh."""
    primary: dict[str, str] = {}
    taken: set[str] = set()
    for claim in claims:
        before = held.get(claim.source)
        # a file rewritten with another session is another session: its old key must not answer for it
        if before is not None and before.session_id == claim.session_id and before.key not in taken:
            primary[claim.source] = before.key
            taken.add(before.key)
    shared = Counter(c.short for c in claims if c.short is not None)
    for claim in claims:
        if claim.source in primary:
            continue
        key = claim.short if claim.short is not None and shared[claim.short] == 1 else claim.unique
        if key in taken:
            key = claim.unique
        while key in taken:  # two sources hashing alike: vanishingly rare, but a key must name one source
            key += "~"
        primary[claim.source] = key
        taken.add(key)
    aliases: dict[str, str] = {}
    for claim in claims:
        # its unique key always means this claim alone; its short key only when no copy shares it
        names = [claim.unique] + ([claim.short] if claim.short is not None and shared[claim.short] == 1 else [])
        for key in names:
            if key not in taken and key not in aliases:
                aliases[key] = claim.source
    ambiguous = {
        short: tuple(c.source for c in claims if c.short == short)
        for short, n in shared.items()
        if n > 1 and short not in taken
    }
    return Keys(primary, aliases, ambiguous)


def session_url(key: str) -> str:
    # `@` marks a session as one upload held it (`key@digest12`): a path segment keeps it as it is
    return f"/sessions/{quote(key, safe='@')}"
