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


# the roles from the most a grant may do to the least: each grants all the next one does, and more
RANK: tuple[Role, ...] = ("admin", "member", "viewer", "metrics")


@dataclass(frozen=True, slots=True)
class Grant:
    """A role over some projects: a token has one; a person signed in has one per group that maps to a role."""

    role: Role
    projects: frozenset[str] = frozenset()  # empty: every project

    def covers(self, project: str | None) -> bool:
        return not self.projects or (project is not None and project in self.projects)

    def holds(self, permission: Permission) -> bool:
        """Whether the role allows `permission`; administration (tokens, the audit trail) only to an admin of
        every project, since a token it makes may reach any."""
        if permission == "admin":
            return self.role == "admin" and not self.projects
        return permission in PERMISSIONS[self.role]


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a request acts as: an actor's name for the audit trail and its grants. Each grant is a role over
    projects; a person in several groups holds several, and may do in a project what some grant covering that
    project allows, never more (a viewer of one project and a member of another uploads to the second only).

    The access dependency narrows a request's identity to the grants that allow the route's permission
    (`narrowed`), so what it sees below (`sees`) is what that permission reaches."""

    actor: str  # `token:NAME`, `user:EMAIL`; `anonymous`; `local` when the server has no access control
    grants: tuple[Grant, ...] = ()
    everything: bool = False  # no access control: one person's own server
    signed_in: bool = False  # a person the identity provider vouched for, granted something or not

    @classmethod
    def of(cls, actor: str, role: Role, projects: frozenset[str] = frozenset()) -> Identity:
        """An identity with one grant (a token's)."""
        return cls(actor, (Grant(role, projects),))

    def can(self, permission: Permission) -> bool:
        """Whether some grant allows `permission` somewhere (the route table's question)."""
        return permission == "public" or self.everything or any(g.holds(permission) for g in self.grants)

    def narrowed(self, permission: Permission) -> Identity:
        """This identity with only the grants that allow `permission` (public and identified routes keep all)."""
        if self.everything or permission in ("public", "identified"):
            return self
        return Identity(self.actor, tuple(g for g in self.grants if g.holds(permission)), signed_in=self.signed_in)

    @property
    def known(self) -> bool:
        """Someone: a token, or a person signed in (whose groups may grant nothing: refused, not sent to sign in)."""
        return self.everything or self.signed_in or bool(self.grants)

    @property
    def role(self) -> Role | None:
        """The most any grant allows, as the page names who is signed in."""
        held = {g.role for g in self.grants}
        return next((r for r in RANK if r in held), None)

    @property
    def projects(self) -> frozenset[str]:
        """The projects it is limited to; empty when some grant covers every project."""
        if not self.scoped:
            return frozenset()
        return frozenset(p for g in self.grants for p in g.projects)

    @property
    def scoped(self) -> bool:
        """Limited to some projects: no grant covers every one."""
        return not self.everything and all(g.projects for g in self.grants)

    def sees(self, project: str | None) -> bool:
        """Whether a session of `project` is there for this identity (a project-less one only when unscoped)."""
        return self.everything or any(g.covers(project) for g in self.grants)

    def sees_header(self, header: Mapping[str, Any] | None) -> bool:
        return self.sees(project_of(header))

    def may(self, permission: Permission, header: Mapping[str, Any] | None) -> bool:
        """Whether some grant covering the session's project allows `permission` there."""
        project = project_of(header)
        return self.everything or any(g.holds(permission) and g.covers(project) for g in self.grants)

    def may_delete(self, uploaded_by: str | None, headers: tuple[Mapping[str, Any] | None, ...] = ()) -> bool:
        """An upload holding sessions of `headers`: an admin of each of their projects deletes it; a member only
        what it uploaded itself."""
        if self.everything:
            return True
        projects = [project_of(h) for h in headers]

        def covered(roles: tuple[Role, ...]) -> bool:
            grants = [g for g in self.grants if g.role in roles]
            return bool(grants) and all(any(g.covers(p) for g in grants) for p in projects)

        own = uploaded_by is not None and uploaded_by == self.actor
        return covered(("admin",)) or (own and covered(("admin", "member")))


ANONYMOUS = Identity("anonymous")
OPEN = Identity("local", everything=True)


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


__all__ = ["RANK", "ROLES", "Grant", "Identity", "Permission", "Role", "normal_project", "project_of"]
