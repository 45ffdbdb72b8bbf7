"""Building test logs: events from corpus fixtures, and loading what a test wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_inspect.history.session import SessionLog, load_session
from dsh_inspect.log.jsonl import JsonlScan
from dsh_inspect.log.plaintext import FilePlaintext
from dsh_inspect.log.sources import SessionSource, discover

Event = dict[str, Any]


def fixture_events(path: Path) -> tuple[dict[str, Any], list[Event]]:
    """A fixture's header and its events with seqs synthesized and real-looking times."""
    scan = JsonlScan(FilePlaintext(str(path)))
    header = scan.read_header()
    events: list[Event] = []
    for record in scan.records():
        assert record.kind == "events", f"{path}: {record.reason}"
        events.extend(record.events)
    base = 1_790_000_000_000
    for e in events:
        e["time"] = base + e["seq"]
    return header, events


def artifact_header(
    header: dict[str, Any], session_id: str = "session-under-test", cwd: str = "/work/project"
) -> dict[str, Any]:
    """A strict on-disk header (docs/format.md §2.1) for events taken from a fixture."""
    return {
        "type": "session",
        "version": 0,
        "id": session_id,
        "createdAt": 1_790_000_000_000,
        "cwd": cwd,
        "delegationDepth": 0,
        **{k: header[k] for k in ("parentSession", "seedLength", "origin") if k in header},
    }


def load_path(path: Path | str) -> SessionLog:
    found = discover([str(path)])
    assert len(found.sources) == 1, found
    return load_session(found.sources[0])


def load_all(path: Path | str) -> list[SessionLog]:
    return [load_session(s) for s in discover([str(path)]).sources]


def source_of(path: Path | str) -> SessionSource:
    return discover([str(path)]).sources[0]


def stored_events(log: SessionLog) -> list[Event]:
    return [log.raw_event(seq) for seq in range(log.event_count)]
