"""What a person signed in through the company's identity provider may do: the groups in their ID token, mapped
to roles and projects by the access file (`serve --access FILE`, docs/decisions/0021-sign-in.md).

```toml
default_role = "none"          # a signed-in user whose groups map to nothing sees nothing
[groups.team-a]
role = "member"
projects = ["/home/dev/team-a/app"]   # dsh projects (a session's cwd); "*" for all
```

A user in several groups holds a grant for each (roles.py): the union, project by project.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..store.access_records import ROLES
from .roles import Grant, normal_project

EVERY_PROJECT = "*"


class AccessFileError(ValueError):
    """An access file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True, slots=True)
class GroupMap:
    groups: Mapping[str, Grant] = field(default_factory=dict)
    default: tuple[Grant, ...] = ()  # for a user none of whose groups maps to a role

    def grants_for(self, groups: Iterable[str]) -> tuple[Grant, ...]:
        """The grants of a user in `groups`: one per mapped group, or the default when none maps."""
        found = tuple(dict.fromkeys(self.groups[g] for g in groups if g in self.groups))
        return found or self.default


def group_map(path: str | None) -> GroupMap:
    """The access file at `path` (None: no file, so nobody signed in is granted anything); raises
    AccessFileError naming what is wrong."""
    if path is None:
        return GroupMap()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise AccessFileError(f"access file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise AccessFileError(f"access file {path}: not TOML: {exc}") from None
    return parsed(data, path)


def parsed(data: Mapping[str, Any], where: str) -> GroupMap:
    unknown = set(data) - {"default_role", "groups"}
    if unknown:
        raise AccessFileError(f"access file {where}: unknown key(s) {', '.join(sorted(unknown))}")
    default = data.get("default_role", "none")
    if default != "none" and default not in ROLES:
        raise AccessFileError(f"access file {where}: default_role {default!r}: use none or one of {', '.join(ROLES)}")
    groups = data.get("groups", {})
    if not isinstance(groups, dict):
        raise AccessFileError(f"access file {where}: [groups] must be a table of tables")
    return GroupMap(
        {name: _grant(name, table, where) for name, table in groups.items()},
        () if default == "none" else (Grant(default),),
    )


def _grant(name: str, table: Any, where: str) -> Grant:
    said = f"access file {where}: [groups.{name}]"
    if not isinstance(table, dict) or set(table) - {"role", "projects"}:
        raise AccessFileError(f"{said}: give role and projects, nothing else")
    role = table.get("role")
    if role not in ROLES:
        raise AccessFileError(f"{said}: role {role!r}: use one of {', '.join(ROLES)}")
    projects = table.get("projects", [])
    if not isinstance(projects, list) or not projects or not all(isinstance(p, str) and p for p in projects):
        raise AccessFileError(f'{said}: projects is a list of dsh projects (a session\'s cwd), or ["*"]')
    if EVERY_PROJECT in projects:
        return Grant(role)
    return Grant(role, frozenset(normal_project(p) for p in projects))
