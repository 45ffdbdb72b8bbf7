"""Packed chunk rows (docs/format.md §1.2): storage-only records that expand to runs of
`assistant/chunk` events. Shared by the JSONL and SQLite readers."""

from __future__ import annotations

from typing import Any

from .jsonvalues import as_int, is_number, is_safe_int

CHUNK_KIND_BY_TAG = {
    "text-chunks": "text-delta",
    "reasoning-chunks": "reasoning-delta",
    "tool-call-chunks": "tool-call-delta",
}
PACKED_TAGS = frozenset(CHUNK_KIND_BY_TAG)
_TEXT_KEYS = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_KEYS = frozenset({"turn", "step", "index", "id", "dt", "args"})


class PackedRowError(ValueError):
    """A packed row that does not match its shape exactly."""


def expand_packed(
    tag: str,
    seq0: object,
    time0: object,
    data: object,
    *,
    min_members: int = 1,
    max_members: int | None = None,
) -> list[dict[str, Any]]:
    """Expand one packed row into its member events, or raise PackedRowError."""
    kind = CHUNK_KIND_BY_TAG.get(tag)
    if kind is None:
        raise PackedRowError(f"unknown packed row type {tag!r}")
    if not isinstance(data, dict):
        raise PackedRowError("packed row data is not an object")
    keys = frozenset(data)
    if kind == "tool-call-delta":
        if keys not in (_TOOL_KEYS, _TOOL_KEYS | {"name"}):
            raise PackedRowError(f"packed row data keys {sorted(keys)} are not {sorted(_TOOL_KEYS)} (+name)")
        members = data["args"]
        if not isinstance(data["id"], str):
            raise PackedRowError("packed row id is not a string")
        if "name" in data and not isinstance(data["name"], str):
            raise PackedRowError("packed row name is not a string")
    else:
        if keys != _TEXT_KEYS:
            raise PackedRowError(f"packed row data keys {sorted(keys)} are not {sorted(_TEXT_KEYS)}")
        members = data["texts"]
    for field in ("turn", "step", "index"):
        if not is_number(data[field]):
            raise PackedRowError(f"packed row {field} is not a number")
    if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
        raise PackedRowError("packed row members are not an array of strings")
    if len(members) < min_members or (max_members is not None and len(members) > max_members):
        raise PackedRowError(f"packed row has {len(members)} members")
    dt = data["dt"]
    if not isinstance(dt, list) or len(dt) != len(members) - 1 or not all(is_safe_int(d) for d in dt):
        raise PackedRowError("packed row dt is not an array of safe integers, one shorter than its members")
    if not is_safe_int(seq0) or as_int(seq0) < 0:
        raise PackedRowError("packed row seq0 is not a non-negative safe integer")
    if not is_safe_int(time0):
        raise PackedRowError("packed row time0 is not a safe integer")
    seq = as_int(seq0)
    time = as_int(time0)
    turn, step, index = data["turn"], data["step"], data["index"]
    events: list[dict[str, Any]] = []
    for k, text in enumerate(members):
        if k:
            time += as_int(dt[k - 1])
        if not is_safe_int(seq + k) or not is_safe_int(time):
            raise PackedRowError("packed row member seq or time leaves the safe-integer range")
        if kind == "tool-call-delta":
            chunk: dict[str, Any] = {"type": kind, "index": index, "id": data["id"]}
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = text
        else:
            chunk = {"type": kind, "index": index, "text": text}
        events.append(
            {
                "type": "assistant/chunk",
                "seq": seq + k,
                "time": time,
                "data": {"turn": turn, "step": step, "chunk": chunk},
            }
        )
    return events
