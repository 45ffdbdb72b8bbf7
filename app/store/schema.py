"""Numbered schema migrations (`migrations/<dialect>/NNNN_name.sql`), applied at start, never by hand.

Each file is one step from the version before it to its number; a catalog records the number it reached
(SQLite: `PRAGMA user_version`; PostgreSQL: the `schema_migrations` table) and a start applies the steps past
it, in order, each in its own transaction. A catalog past the last step is refused: a newer dsh-inspect wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Literal

Dialect = Literal["sqlite", "postgresql"]
_NAME = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


def migrations(dialect: Dialect) -> tuple[Migration, ...]:
    """Every step of `dialect`, oldest first; numbered 1, 2, … without a gap."""
    folder = resources.files(__package__).joinpath("migrations", dialect)
    found = []
    for entry in folder.iterdir():
        match = _NAME.fullmatch(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), entry.name, _statements(entry.read_text("utf-8"))))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise RuntimeError(f"{dialect} migrations are not numbered 1, 2, …: {[m.name for m in found]}")
    return tuple(found)


def _statements(text: str) -> tuple[str, ...]:
    """The file's statements: each ends with `;` at the end of a line (the files hold no other)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return tuple(s.strip() for s in "\n".join(lines).split(";\n") if s.strip().rstrip(";").strip())


def pending(dialect: Dialect, reached: int, where: str) -> tuple[Migration, ...]:
    """The steps past `reached`; raises RuntimeError when `reached` is past the last step known here."""
    steps = migrations(dialect)
    if reached > len(steps):
        raise RuntimeError(f"{where}: upload catalog schema {reached} is newer than this dsh-inspect knows")
    return steps[reached:]
