"""Who may do what (docs/decisions/0020-access-control.md): identities and their roles and projects, API tokens,
failed attempts, and the audit trail. No HTTP here: the web layer's one dependency (web/access.py) asks these.

Layering: imports `app.store` and below; the web layer and the CLI import it.
"""

from .attempts import FailedAttempts
from .audit import Auditor
from .control import AccessControl
from .groups import AccessFileError, GroupMap, group_map
from .roles import (
    ANONYMOUS,
    OPEN,
    PERMISSIONS,
    ROLES,
    Grant,
    Identity,
    Permission,
    Role,
    project_of,
)
from .tokens import TokenError, Tokens, digest_of

__all__ = [
    "ANONYMOUS",
    "OPEN",
    "PERMISSIONS",
    "ROLES",
    "AccessControl",
    "AccessFileError",
    "Auditor",
    "FailedAttempts",
    "Grant",
    "GroupMap",
    "Identity",
    "Permission",
    "Role",
    "TokenError",
    "Tokens",
    "digest_of",
    "group_map",
    "project_of",
]
