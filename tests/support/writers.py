"""The tests' own small writer of dsh artifacts, exactly as docs/format.md §1 lays them out.

It is independent of the readers under test: it packs chunk runs (§1.2),
frames zstd batches (§1.1) and fills a SQLite store (§1.3) from plain event
dicts, so a reading can be compared event for event with the JSONL one.
"""

from __future__ import annotations

import itertools
import sqlite3
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson
import zstandard
from dsh_inspect.log.jsonvalues import is_safe_int
from dsh_inspect.log.sqlite_store import APPLICATION_ID, CANONICAL_SCHEMA, SCHEMA_VERSION
from dsh_inspect.model.rules import decode_source_event_seqs

Event = dict[str, Any]
TAG_BY_KIND = {
    "text-delta": "text-chunks",
    "reasoning-delta": "reasoning-chunks",
    "tool-call-delta": "tool-call-chunks",
}
_CHUNK_KEYS = {
    "text-delta": ({"type", "index", "text"},),
    "reasoning-delta": ({"type", "index", "text"},),
    "tool-call-delta": ({"type", "index", "id", "argumentsDelta"}, {"type", "index", "id", "name", "argumentsDelta"}),
}


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def _packable(event: Event) -> bool:
    if set(event) != {"type", "seq", "time", "data"} or event["type"] != "assistant/chunk":
        return False
    if not is_safe_int(event["seq"]) or not is_safe_int(event["time"]):
        return False
    data = event["data"]
    if not isinstance(data, dict) or set(data) != {"turn", "step", "chunk"}:
        return False
    chunk = data["chunk"]
    return isinstance(chunk, dict) and any(set(chunk) == keys for keys in _CHUNK_KEYS.get(chunk.get("type"), ()))


def _run_key(event: Event) -> tuple[Any, ...]:
    data = event["data"]
    chunk = data["chunk"]
    return (
        data["turn"],
        data["step"],
        chunk["index"],
        chunk["type"],
        chunk.get("id"),
        "name" in chunk,
        chunk.get("name"),
    )


def pack(events: Sequence[Event], *, min_run: int = 3, max_run: int | None = None) -> list[tuple[str, Any]]:
    """One batch → storage records: ("event", event) or ("packed", (tag, seq0, time0, data))."""
    out: list[tuple[str, Any]] = []
    i = 0
    while i < len(events):
        j = i
        if _packable(events[i]):
            while (
                j + 1 < len(events)
                and _packable(events[j + 1])
                and events[j + 1]["seq"] == events[j]["seq"] + 1
                and _run_key(events[j + 1]) == _run_key(events[i])
                and (max_run is None or j + 1 - i < max_run)
            ):
                j += 1
        if j - i + 1 >= min_run:
            run = events[i : j + 1]
            chunk = run[0]["data"]["chunk"]
            data: dict[str, Any] = {
                "turn": run[0]["data"]["turn"],
                "step": run[0]["data"]["step"],
                "index": chunk["index"],
            }
            if chunk["type"] == "tool-call-delta":
                data["id"] = chunk["id"]
                if "name" in chunk:
                    data["name"] = chunk["name"]
                data["dt"] = [b["time"] - a["time"] for a, b in itertools.pairwise(run)]
                data["args"] = [e["data"]["chunk"]["argumentsDelta"] for e in run]
            else:
                data["dt"] = [b["time"] - a["time"] for a, b in itertools.pairwise(run)]
                data["texts"] = [e["data"]["chunk"]["text"] for e in run]
            out.append(("packed", (TAG_BY_KIND[chunk["type"]], run[0]["seq"], run[0]["time"], data)))
            i = j + 1
        else:
            out.append(("event", events[i]))
            i += 1
    return out


def jsonl_batch(events: Sequence[Event], *, packed: bool = True) -> bytes:
    lines = []
    for kind, value in pack(events) if packed else [("event", e) for e in events]:
        if kind == "event":
            lines.append(dumps(value))
        else:
            tag, seq0, time0, data = value
            lines.append(dumps({"type": tag, "seq0": seq0, "time0": time0, "data": data}))
    return b"".join(line + b"\n" for line in lines)


def header_line(header: dict[str, Any]) -> bytes:
    return dumps({"type": "session", **{k: v for k, v in header.items() if k != "type"}}) + b"\n"


def batches_of(events: Sequence[Event], size: int) -> list[list[Event]]:
    return [list(events[i : i + size]) for i in range(0, len(events), size)] or []


def write_jsonl(path: Path, header: dict[str, Any], batches: Iterable[Sequence[Event]], *, packed: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header_line(header) + b"".join(jsonl_batch(b, packed=packed) for b in batches))
    return path


def zstd_frame(text: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=3, write_checksum=True).compress(text)


def write_zstd(path: Path, header: dict[str, Any], batches: Iterable[Sequence[Event]], *, packed: bool = True) -> Path:
    """Header frame, then exactly one frame per append batch."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = [zstd_frame(header_line(header))]
    frames += [zstd_frame(jsonl_batch(b, packed=packed)) for b in batches]
    path.write_bytes(b"".join(frames))
    return path


def _data_value(data: Any) -> str | bytes:
    text = orjson.dumps(data)
    if len(text) >= 4096:
        blob = zstandard.ZstdCompressor(level=3).compress(text)
        if len(blob) < len(text):
            return blob
    return text.decode()


def new_store(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.execute("PRAGMA journal_mode = wal")
    for statement in CANONICAL_SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT INTO persistence_state VALUES (1, ?)", (str(uuid.uuid4()),))
    conn.commit()
    return conn


def write_sqlite_session(conn: sqlite3.Connection, header: dict[str, Any], batches: Iterable[Sequence[Event]]) -> None:
    """One session's header row and its event rows, one transaction per batch."""
    conn.execute(
        "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
        (
            header["id"],
            header.get("version", 0),
            header["createdAt"],
            header.get("cwd"),
            header.get("parentSession"),
            header.get("seedLength"),
            header.get("origin"),
            header.get("delegationDepth"),
            header.get("agentPreset"),
            str(uuid.uuid4()),
        ),
    )
    for batch in batches:
        for kind, value in pack(batch, min_run=3, max_run=1024):
            if kind == "packed":
                tag, seq0, time0, data = value
                row = (header["id"], seq0, tag, time0, _data_value(data), None, None, 0)
            else:
                e = value
                seqs = (
                    encode_varint_seqs(decode_source_event_seqs(e["sourceEventSeqs"]))
                    if "sourceEventSeqs" in e
                    else None
                )
                op = orjson.dumps(e["surfaceOp"]).decode() if "surfaceOp" in e else None
                row = (
                    header["id"],
                    e["seq"],
                    e["type"],
                    e["time"],
                    _data_value(e["data"]),
                    seqs,
                    op,
                    1 if e.get("ignorable") else None,
                )
            conn.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
        conn.execute("UPDATE sessions SET revision = revision + 1 WHERE id = ?", (header["id"],))
        conn.commit()


def encode_varint_seqs(seqs: list[int]) -> bytes:
    """The inverse of `sqlite_store.decode_varint_seqs`: how dsh's SQLite store packs `sourceEventSeqs`."""
    out = bytearray()
    prev: int | None = None
    for seq in seqs:
        if prev is None:
            value = seq
        else:
            d = seq - prev
            value = 2 * d if d >= 0 else 2 * -d - 1
        prev = seq
        while True:
            byte = value & 0x7F
            value >>= 7
            if value:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                break
    return bytes(out)
