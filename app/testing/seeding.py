"""Turning a fixture log (or a list of events) into a real dsh artifact, as dsh's web
seeder does (docs/format.md §1.5): placeholders realised, a fresh header, seq and time assigned."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..log.jsonl import JsonlScan
from ..log.plaintext import FilePlaintext
from ..log.writer import Compression, append_batch, write_artifact

Event = dict[str, Any]


class SeededSession(str):
    """The page URL of a seeded session (a `str`), with what a test needs to grow it."""

    id: str
    path: Path
    events: int
    last_time: int

    def __new__(cls, url: str, *, session_id: str, path: Path, events: int, last_time: int) -> SeededSession:
        obj = super().__new__(cls, url)
        obj.id, obj.path, obj.events, obj.last_time = session_id, path, events, last_time
        return obj


def realize_placeholders(value: Any, values: Mapping[str, Any]) -> Any:
    """`"{{name}}"` becomes the value itself (any JSON); inside a longer string, its text."""
    if isinstance(value, str):
        for name, replacement in values.items():
            token = "{{" + name + "}}"
            if value == token:
                return replacement
            if token in value and isinstance(replacement, str):
                value = value.replace(token, replacement)
        return value
    if isinstance(value, list):
        return [realize_placeholders(v, values) for v in value]
    if isinstance(value, dict):
        return {k: realize_placeholders(v, values) for k, v in value.items()}
    return value


def fixture_events(path: Path) -> tuple[dict[str, Any], list[Event]]:
    """A fixture log's header and events (packed rows expanded, seqs synthesized)."""
    scan = JsonlScan(FilePlaintext(str(path)))
    head = scan.read_header()
    events: list[Event] = []
    for record in scan.records():
        if record.kind != "events":
            raise ValueError(f"{record.location.describe()}: {record.reason}")
        events.extend(record.events)
    return head, events


@dataclass(frozen=True, slots=True)
class SeedPlan:
    header: dict[str, Any]
    events: list[Event]


def seed_events(
    source: Path | str | Sequence[Event],
    *,
    session_id: str,
    cwd: str,
    placeholders: Mapping[str, Any] | None = None,
    now_ms: int | None = None,
) -> SeedPlan:
    """The header and events dsh's seeder would write: fresh header, realised placeholders,
    `seq` = index, `time` = anchor + index (anchor = the fixture's createdAt, or now)."""
    if isinstance(source, (str, Path)):
        fixture_header, events = fixture_events(Path(source))
    else:
        fixture_header, events = {}, [dict(e) for e in source]
    values: dict[str, Any] = {
        "sessionId": session_id,
        "cwd": cwd,
        "rpcId": str(uuid.uuid4()),
        "system": "",
        "tools": [],
        "messagePrefix": "",
        "messageId": str(uuid.uuid4()),
        "parent": session_id,
    }
    values.update(placeholders or {})
    created = fixture_header.get("createdAt")
    anchor = created if isinstance(created, int) and created > 0 else (now_ms or int(time.time() * 1000))
    header = {"type": "session", "version": 0, "id": session_id, "createdAt": anchor, "cwd": cwd, "delegationDepth": 0}
    seeded = []
    for index, event in enumerate(events):
        realized = realize_placeholders({k: v for k, v in event.items() if k not in ("seq", "time")}, values)
        seeded.append(
            {
                "type": realized["type"],
                "seq": index,
                "time": anchor + index,
                **{k: v for k, v in realized.items() if k != "type"},
            }
        )
    return SeedPlan(header, seeded)


def write_seed(root: Path, plan: SeedPlan, compression: Compression, *, batch: int = 64) -> Path:
    """Header frame plus one frame (or write) per batch, through the real layout."""
    batches = [plan.events[i : i + batch] for i in range(0, len(plan.events), batch)]
    return write_artifact(root, plan.header, batches, compression)


def append(path: Path, events: Iterable[Event], *, next_seq: int, last_time: int) -> tuple[int, int]:
    """Append events (seq and time filled in where missing) as one batch; returns the new (count, time)."""
    batch = []
    seq, now = next_seq, last_time
    for event in events:
        now = event["time"] if "time" in event else now + 1
        batch.append(
            {
                "type": event["type"],
                "seq": seq,
                "time": now,
                **{k: v for k, v in event.items() if k not in ("type", "seq", "time")},
            }
        )
        seq += 1
    append_batch(path, batch)
    return seq, now
