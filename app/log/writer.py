"""Writing dsh artifacts as dsh lays them out (docs/format.md §1.1, §1.2): for demos,
benchmarks and the pytest plugin's seeded histories.

The test suite checks the readers with its own, separate writer
(tests/support/writers.py), so a shared mistake cannot hide itself.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import orjson
import zstandard

from .dsh_root import encode_segment, project_key
from .jsonvalues import is_safe_int

Event = dict[str, Any]
Compression = Literal["zstd", "none"]
MIN_RUN = 3
_TAGS = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks", "tool-call-delta": "tool-call-chunks"}
# keyed by object: looked up with whatever `type` an event's chunk holds
_CHUNK_SHAPES: dict[object, tuple[set[str], ...]] = {
    "text-delta": ({"type", "index", "text"},),
    "reasoning-delta": ({"type", "index", "text"},),
    "tool-call-delta": ({"type", "index", "id", "argumentsDelta"}, {"type", "index", "id", "name", "argumentsDelta"}),
}


def _packable(e: Event) -> bool:
    if set(e) != {"type", "seq", "time", "data"} or e["type"] != "assistant/chunk":
        return False
    data = e["data"]
    if not (
        is_safe_int(e["seq"])
        and is_safe_int(e["time"])
        and isinstance(data, dict)
        and set(data) == {"turn", "step", "chunk"}
        and isinstance(data["chunk"], dict)
    ):
        return False
    chunk = data["chunk"]
    return any(set(chunk) == shape for shape in _CHUNK_SHAPES.get(chunk.get("type"), ()))


def _run_key(e: Event) -> tuple[Any, ...]:
    d, c = e["data"], e["data"]["chunk"]
    return (d["turn"], d["step"], c["index"], c["type"], c.get("id"), "name" in c, c.get("name"))


def storage_lines(batch: Sequence[Event], *, pack: bool = True) -> list[bytes]:
    """One append batch as JSONL lines, runs of ≥ 3 like chunks packed into one row."""
    lines: list[bytes] = []
    i = 0
    while i < len(batch):
        j = i
        if pack and _packable(batch[i]):
            while (
                j + 1 < len(batch)
                and _packable(batch[j + 1])
                and batch[j + 1]["seq"] == batch[j]["seq"] + 1
                and _run_key(batch[j + 1]) == _run_key(batch[i])
            ):
                j += 1
        if j - i + 1 >= MIN_RUN:
            run = batch[i : j + 1]
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
            members = [
                e["data"]["chunk"]["argumentsDelta" if chunk["type"] == "tool-call-delta" else "text"] for e in run
            ]
            data["args" if chunk["type"] == "tool-call-delta" else "texts"] = members
            lines.append(
                orjson.dumps(
                    {"type": _TAGS[chunk["type"]], "seq0": run[0]["seq"], "time0": run[0]["time"], "data": data}
                )
            )
            i = j + 1
        else:
            lines.append(orjson.dumps(batch[i]))
            i += 1
    return lines


def header_line(header: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": "session", **{k: v for k, v in header.items() if k != "type"}})


def batch_bytes(batch: Sequence[Event], *, pack: bool = True) -> bytes:
    return b"".join(line + b"\n" for line in storage_lines(batch, pack=pack))


def zstd_frame(text: bytes) -> bytes:
    """One frame with the content checksum on, as Node's zstd writes it."""
    return zstandard.ZstdCompressor(level=3, write_checksum=True).compress(text)


def artifact_path(root: Path, header: dict[str, Any], compression: Compression) -> Path:
    """Where dsh keeps this session in a persistence root."""
    name = "session.jsonl.zstd" if compression == "zstd" else "session.jsonl"
    cwd = header.get("cwd")
    return root / project_key(cwd if isinstance(cwd, str) else None) / encode_segment(str(header["id"])) / name


def write_artifact(
    root: Path, header: dict[str, Any], batches: Iterable[Sequence[Event]], compression: Compression = "zstd"
) -> Path:
    """A published artifact: header (its own frame) and one frame or write per batch, atomically."""
    path = artifact_path(root, header, compression)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    head = header_line(header) + b"\n"
    if compression == "zstd":
        body = zstd_frame(head) + b"".join(zstd_frame(batch_bytes(b)) for b in batches)
    else:
        body = head + b"".join(batch_bytes(b) for b in batches)
    tmp = path.with_name(f"{path.name}.{os.urandom(6).hex()}.tmp")
    with open(tmp, "wb") as f:
        f.write(body)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def append_batch(path: Path, batch: Sequence[Event]) -> None:
    """Append one batch the way dsh does: a new zstd frame, or plain lines."""
    data = batch_bytes(batch)
    with open(path, "ab") as f:
        f.write(zstd_frame(data) if path.name.endswith(".zstd") else data)
        f.flush()
        os.fsync(f.fileno())
