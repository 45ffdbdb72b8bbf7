"""Logs with raw JSON text written into a field: nesting deeper than JSON writers go, numbers past Python's."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
from dsh_inspect.log.jsonvalues import MAX_DEPTH

from tests.support.builders import header, two_turns

MARK = "\u0001raw\u0001"  # holds a field's place until the line is written, then its raw JSON text does
WARNING = f"nested deeper than {MAX_DEPTH} levels: shown as its JSON text from there"


def nested(depth: int, inner: str = "1", kind: str = "[") -> str:
    """JSON text `depth` arrays (or one-key objects) deep around `inner`."""
    return "[" * depth + inner + "]" * depth if kind == "[" else '{"k":' * depth + inner + "}" * depth


def wrapped(depth: int, inner: Any, kind: str = "[") -> Any:
    """The value `nested(depth, ..., kind)` reads as, around an already read `inner`."""
    for _ in range(depth):
        inner = [inner] if kind == "[" else {"k": inner}
    return inner


def with_raw(record: dict[str, Any], keys: tuple[str | int, ...], text: str) -> bytes:
    """`record` as a line, with raw JSON `text` as its value at `keys` (a last key past a list's end appends)."""
    record = copy.deepcopy(record)
    owner: Any = record
    for key in keys[:-1]:
        owner = owner[key]
    if isinstance(owner, list) and keys[-1] == len(owner):
        owner.append(MARK)
    else:
        owner[keys[-1]] = MARK
    return orjson.dumps(record).replace(orjson.dumps(MARK), text.encode())


def log_lines(text: str, keys: tuple[str | int, ...] = ("data", "x"), at: str = "turn/start") -> list[bytes]:
    """two_turns() as lines, `text` written at `keys` of its first `at` event (or of the header, for "session")."""
    events = two_turns().events
    lines = [orjson.dumps(header())] + [orjson.dumps(e) for e in events]
    if at == "session":
        lines[0] = with_raw(header(), keys, text)
    else:
        i = next(i for i, e in enumerate(events) if e["type"] == at)
        lines[i + 1] = with_raw(events[i], keys, text)
    return lines


def write(path: Path, lines: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def deep_at(lines: list[bytes], number: int) -> int:
    """The byte offset (in the log) of the first bracket MAX_DEPTH + 1 levels deep in line `number`, which
    holds no bracket inside a string before it."""
    line = lines[number - 1]
    depth = 0
    for i, byte in enumerate(line):
        depth += (byte in b"[{") - (byte in b"]}")
        if depth > MAX_DEPTH:
            return sum(len(x) + 1 for x in lines[: number - 1]) + i
    raise AssertionError("no part that deep")
