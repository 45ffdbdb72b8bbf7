"""The shared readers every projection rule is written with (docs/ui.md §1.1).

A source reaches the view as logged: any JSON value, not only an object, so
each reader answers for every input instead of trusting the shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from ..log.jsonvalues import is_nonempty_str
from ..model.values import MessageSource


def is_record(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """An object: not null, not an array (JSON arrays arrive as lists or tuples)."""
    return isinstance(value, Mapping)


def is_array(value: Any) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, (list, tuple))


def source_record(source: MessageSource | Any) -> Mapping[str, Any] | None:
    """The source's fields, or None when the logged source is not an object."""
    if isinstance(source, MessageSource):
        return source.raw
    return source if is_record(source) else None


def nonempty_str(value: Any) -> str | None:
    """`value` if it is a non-empty string (`is_nonempty_str`, typed), else None."""
    return value if is_nonempty_str(value) else None


def source_kind(record: Mapping[str, Any] | None) -> str | None:
    kind = record.get("kind") if record is not None else None
    return kind if is_nonempty_str(kind) else None


def collect(record: Mapping[str, Any], member: str, field: str) -> tuple[str, ...]:
    """Distinct non-empty `record[member][i][field]` in first-seen order.

    Lenient on purpose: header labels skip what they cannot read, unlike the
    all-or-nothing body readers.
    """
    entries = record.get(member)
    if not is_array(entries):
        return ()
    found: dict[str, None] = {}
    for entry in entries:
        if is_record(entry) and is_nonempty_str(entry.get(field)):
            found.setdefault(entry[field])
    return tuple(found)


def joined(items: tuple[str, ...]) -> str | None:
    return ", ".join(items) if items else None
