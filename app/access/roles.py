"""Roles, the permissions each grants, and the identity a request acts as (docs/decisions/0020-access-control.md).

A route names one permission (web/access.py's table); an identity holds it when its role grants it. A token
scoped to projects sees only the sessions whose project (the header's `cwd`) is among them, everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..store.access_records import ROLES, Role

Permission = Literal[
    "public",  # no identity needed: sign-in, health checks, static assets
    "identified",  # any identity: the API's description, signing out
    "list",  # the session list: ids, projects, counts, durations, cost, verdicts (titles only with `read`)
    "read",  # a session's content: pages, twins, partials, live streams, uploads' pages, compare
    "search",  # search inside one session or across them
    "download",  # a session's or an upload's bytes
    "upload",
    "delete",  # an upload: any for an admin, its own for a member
    "admin",  # tokens and the audit trail
]

_READER: frozenset[Permission] = frozenset({"identified", "list", "read", "search", "download"})
PERMISSIONS: Mapping[Role, frozenset[Permission]] = {
    "admin": frozenset({*_READER, "upload", "delete", "admin"}),
    "member": frozenset({*_READER, "upload", "delete"}),
    "viewer": _READER,
    "metrics": frozenset({"identified", "list"}),
}


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a request acts as: an actor's name for the audit trail, a role, and the projects it sees."""

    actor: str  # `token:NAME`; `anonymous`; `local` when the server has no access control
    role: Role | None  # None: anonymous
    projects: frozenset[str] = frozenset()  # the projects it sees; empty: every one
    everything: bool = False  # no access control: one person's own server

    def can(self, permission: Permission) -> bool:
        if permission == "public" or self.everything:
            return True
        return self.role is not None and permission in PERMISSIONS[self.role]

    @property
    def known(self) -> bool:
        return self.everything or self.role is not None

    @property
    def scoped(self) -> bool:
        return bool(self.projects) and not self.everything

    def sees(self, project: str | None) -> bool:
        """Whether a session of `project` is there for this identity (a project-less one only when unscoped)."""
        return not self.scoped or (project is not None and project in self.projects)

    def sees_header(self, header: Mapping[str, Any] | None) -> bool:
        return self.sees(project_of(header))

    def may_delete(self, uploaded_by: str | None) -> bool:
        """An upload: an admin deletes any; a member only what it uploaded."""
        if self.everything or self.role == "admin":
            return True
        return self.can("delete") and uploaded_by is not None and uploaded_by == self.actor


ANONYMOUS = Identity("anonymous", None)
OPEN = Identity("local", None, everything=True)


def project_of(header: Mapping[str, Any] | None) -> str | None:
    """A session's project: its header's `cwd`, as dsh files it (docs/format.md §1.1), without a trailing slash."""
    cwd = header.get("cwd") if header else None
    if not isinstance(cwd, str) or not cwd:
        return None
    return normal_project(cwd)


def normal_project(project: str) -> str:
    """A project as compared: a trailing `/` or `\\` dropped (a root stays itself)."""
    trimmed = project.rstrip("/\\")
    return trimmed or project


__all__ = ["ROLES", "Identity", "Permission", "Role", "normal_project", "project_of"]
