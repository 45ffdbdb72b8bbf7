"""Which stored sessions are one session's history, and how its uploads chain into versions
(docs/decisions/0018-session-versions.md). Pure: the catalog's uploads in, histories out.

A session is its dsh identity, the header's `id` and `createdAt`; every upload holding it is that session's
history. An upload that extends another (its `base`) continues the version whose newest upload that base
is; any other upload of the session starts a version of its own. Hidden uploads (deleted, kept as a base)
link their extensions into a chain and are shown nowhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .catalog import StoredSession, Upload

Identity = tuple[str, int, str | None]  # a session: its id, createdAt and project (cwd)


@dataclass(frozen=True, slots=True)
class State:
    """A session as one upload holds it."""

    upload: Upload
    session: StoredSession
    order: int  # the upload's place among all uploads, oldest first


@dataclass(frozen=True, slots=True)
class History:
    versions: tuple[tuple[State, ...], ...]  # each version's states, oldest first; versions by their first upload
    current: State  # the newest upload's: what the session's key shows
    first: State  # the earliest upload's: what decides the session's key


def identity(header: dict[str, Any] | None) -> Identity | None:
    """The header's `id`, `createdAt` and `cwd`; None when it lacks the first two (such a session is a history
    alone). The project is part of it: an upload naming another project's session id and time is another
    session, never a version of that one (docs/decisions/0020-access-control.md), so no upload can join, hide
    or take over a history it may not see."""
    if header is None:
        return None
    sid, created, cwd = header.get("id"), header.get("createdAt"), header.get("cwd")
    if isinstance(sid, str) and sid and isinstance(created, int) and not isinstance(created, bool):
        return sid, created, cwd if isinstance(cwd, str) else None
    return None


def histories(uploads: Sequence[Upload]) -> list[History]:
    """Every session with a visible upload, in the order of its earliest one; `uploads` oldest first."""
    order = {u.digest: i for i, u in enumerate(uploads)}
    groups: dict[object, list[list[State]]] = {}
    tips: dict[str, tuple[object, int]] = {}  # a version's newest upload (hidden too) → its group and index
    for upload in _bases_first(uploads):
        lone = len(upload.sessions) == 1
        for session in upload.sessions:
            group = identity(session.header) or (upload.digest, session.ordinal)
            versions = groups.setdefault(group, [])
            state = State(upload, session, order[upload.digest])
            base = upload.base if lone else None
            if base is not None and (tip := tips.get(base)) is not None and tip[0] == group:
                index = tip[1]
                versions[index].append(state)
                del tips[base]  # a second extension of the same bytes diverges from this one
            else:
                versions.append([state])
                index = len(versions) - 1
            if lone:
                tips[upload.digest] = (group, index)
    out: list[History] = []
    for versions in groups.values():
        shown = [tuple(s for s in v if not s.upload.hidden) for v in versions]
        shown = sorted((v for v in shown if v), key=lambda v: v[0].order)
        if shown:
            states = [s for v in shown for s in v]
            out.append(
                History(
                    tuple(shown),
                    max(states, key=lambda s: (s.order, -s.session.ordinal)),
                    min(states, key=lambda s: (s.order, s.session.ordinal)),
                )
            )
    out.sort(key=lambda h: (h.first.order, h.first.session.ordinal))
    return out


def _bases_first(uploads: Sequence[Upload]) -> list[Upload]:
    """`uploads` in their order, except that each comes after the upload it extends (an upload shown again
    after a delete is newer than its extensions)."""
    by_digest = {u.digest: u for u in uploads}
    placed: set[str] = set()
    out: list[Upload] = []
    for upload in uploads:
        chain: list[Upload] = []
        below: Upload | None = upload
        while below is not None and below.digest not in placed:
            chain.append(below)
            placed.add(below.digest)
            below = by_digest.get(below.base) if below.base is not None else None
        out.extend(reversed(chain))
    return out
