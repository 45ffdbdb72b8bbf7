"""What the list and the session page say about a session's entry: facts and relatives."""

from __future__ import annotations

import posixpath
from typing import Any

from ...access import OPEN, Identity, project_of
from ...history.lineage import named_sessions
from ...history.session import SessionLog
from ...sessions.keys import session_url
from ...sessions.registry import Entry, UploadedAs
from ..state import WebState
from .clock import WallClock
from .generation_facts import current_generations


def project_name(cwd: str | None) -> str | None:
    """What a session's project is called where there is little room (the list, the session's head): its
    folder's own name, or the whole path when that has none."""
    return (posixpath.basename(cwd.rstrip("/")) or cwd) if cwd else None


def entry_json(entry: Entry) -> dict[str, Any]:
    header = entry.header or {}
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
    return {
        "key": entry.key,
        "id": entry.session_id,
        "path": entry.source.label,
        "carrier": entry.source.kind,
        "url": session_url(entry.key),
        "unique": entry.unique,  # the key that names this copy alone, whatever else is loaded
        "download": f"{session_url(entry.key)}/raw",
        "upload": entry.upload,
        "cwd": cwd,
        "projectName": project_name(cwd),
        "createdAt": header.get("createdAt"),
        "parentSession": header.get("parentSession"),
    }


def versions_json(entry: Entry) -> dict[str, Any]:
    """An uploaded session's versions, oldest first (docs/decisions/0018-session-versions.md): each at its
    newest upload, with every upload along it; and the upload this entry shows when it is not the newest
    (`asOf`). A session on disk has none."""
    history = entry.versions
    if history is None:
        return {"versions": [], "asOf": None, "newest": None}

    def uploaded(u: UploadedAs) -> dict[str, Any]:
        return {
            "digest": u.digest,
            "name": u.name,
            "size": u.size,
            "events": u.events,
            "uploadedAt": u.uploaded_at,
            "at": WallClock.of(u.uploaded_at),
            "url": session_url(u.key),
            "shown": u.digest == (entry.as_of or history.current),
        }

    versions = []
    for n, states in enumerate(history.versions, start=1):
        newest = uploaded(states[-1])
        versions.append(
            {
                **newest,
                "number": n,
                "current": any(u.digest == history.current for u in states),
                "uploads": [uploaded(u) for u in states],
            }
        )
    shown = next((u for v in versions for u in v["uploads"] if u["shown"]), None)
    return {
        "versions": versions,
        "asOf": shown if entry.as_of is not None else None,
        "newest": session_url(history.key),  # the session's own URL: its newest upload
    }


def related_sessions(
    state: WebState, entry: Entry, log: SessionLog, identity: Identity = OPEN
) -> dict[str, list[dict[str, Any]]]:
    """Parent and children loaded together with this session; every candidate for an ambiguous id. Only those
    `identity` sees: a relative in a project hidden from it is not named (docs/decisions/0020-access-control.md)."""
    group = [
        e
        for e in current_generations(state)
        if e.group == entry.group and e.key != entry.key and identity.sees_header(e.header)
    ]
    named = state.registry.derived(entry.key, "lineage", named_sessions)
    own = entry.session_id

    def link(e: Entry, how: str) -> dict[str, Any]:
        return {"key": e.key, "id": e.session_id, "url": session_url(e.key), "how": how}

    parents = [link(e, "parent") for e in group if named.get(e.session_id or "") == "parent"]
    children = [
        link(e, named[e.session_id]) for e in group if e.session_id in named and named[e.session_id] != "parent"
    ]
    children += [
        link(e, "child")
        for e in group
        if own and (e.header or {}).get("parentSession") == own and all(c["key"] != e.key for c in children)
    ]
    return {"parents": parents, "children": children}


def child_session_url(state: WebState, base_url: str, child_id: str) -> str | None:
    """The page of the session `child_id` names, when it is loaded (a subagent tool row links it): the copy
    loaded with the session at `base_url` first, as its relatives are; None when no loaded session has the id."""
    copies = [e for e in current_generations(state) if e.session_id == child_id]
    parent = next((e for e in state.registry.entries() if session_url(e.key) == base_url), None)
    if state.settings.access_control:
        # a window is rendered once for every reader: it links only a child of the parent's own project, which
        # whoever reads the parent may see, so no link tells a reader of another project's session
        # (docs/decisions/0020-access-control.md)
        project = project_of(parent.header) if parent is not None else None
        copies = [e for e in copies if project is not None and project_of(e.header) == project]
    near = [e for e in copies if parent is not None and e.group == parent.group]
    return session_url((near or copies)[0].key) if copies else None
