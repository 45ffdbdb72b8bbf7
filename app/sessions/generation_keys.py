"""The keys of a session's format generations: its id names its newest generation.

When a session folder holds `session.v<N>.jsonl[.zstd]` beside `session.jsonl[.zstd]` (`log.generations`),
each file answers at its unique key; the session's short key, its id, is its current generation's alone, so an
earlier generation is never what the session's own URL shows. The registry applies these before `keys.assign`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..log.generations import session_generations
from ..log.sources import SessionSource
from .keys import Claim, Held

# the carriers a session folder's files are read as; an upload or a ZIP member has no session folder
_FILES = ("jsonl", "jsonl-zstd")


def on_disk(source: SessionSource) -> bool:
    """Whether `source` is a file found on disk, one that a session folder may hold beside other generations."""
    return source.member is None and source.display is None and source.kind in _FILES


def earlier_claims(claims: Sequence[Claim], sources: Sequence[SessionSource]) -> tuple[list[Claim], set[str]]:
    """The claims with each earlier generation's short key given up, so the session's id names its current
    state; and those claims' sources, whose keys held before must not keep the id either (`held_apart`)."""
    found = session_generations((s.path, c.session_id) for c, s in zip(claims, sources, strict=True) if on_disk(s))
    earlier = {
        c.source
        for c, s in zip(claims, sources, strict=True)
        if on_disk(s) and s.path in found and not found[s.path].is_current
    }
    return [replace(c, short=None) if c.source in earlier else c for c in claims], earlier


def held_apart(held: Mapping[str, Held], earlier: set[str]) -> dict[str, Held]:
    """The keys held before, but an earlier generation's: it answers at its unique key from now on."""
    return {source: key for source, key in held.items() if source not in earlier}
