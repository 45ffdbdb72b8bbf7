"""Turning a fixture log (or a list of events) into a real dsh artifact, as dsh's web
seeder does (docs/format.md §1.5): placeholders realised, a fresh header, seq and time assigned."""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..history.session import load_one
from ..log.jsonl import JsonlScan
from ..log.plaintext import FilePlaintext
from ..log.writer import Compression, write_artifact
from . import events as builders

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


SCAFFOLD_CWD = "/workspace/project"  # where a session is said to have run when neither the test nor its fixture says


@dataclass(frozen=True, slots=True)
class SeedPlan:
    header: dict[str, Any]
    events: list[Event]
    values: dict[str, Any]  # the placeholders' values, for events appended later


def seed_events(
    source: Path | str | Sequence[Event],
    *,
    session_id: str,
    cwd: str | os.PathLike[str] | None = None,
    placeholders: Mapping[str, Any] | None = None,
    now_ms: int | None = None,
) -> SeedPlan:
    """The header and events dsh's seeder would write: a fresh header, realised placeholders, `seq` = index,
    `time` = anchor + index (anchor = the fixture's createdAt, or now), and what the builders of
    `testing.events` leave to the seeder filled in. The header's cwd is `cwd`, else the `cwd` placeholder
    given, else the fixture header's own (realised), else `SCAFFOLD_CWD`; the `cwd` placeholder is `cwd`,
    else the one given, else `SCAFFOLD_CWD`."""
    if isinstance(source, (str, Path)):
        fixture_header, fixture = fixture_events(Path(source))
    else:
        fixture_header, fixture = {}, [dict(e) for e in source]
    given = dict(placeholders or {})
    chosen = os.fspath(cwd) if cwd is not None else given.get("cwd")
    values: dict[str, Any] = {
        "sessionId": session_id,
        "rpcId": str(uuid.uuid4()),
        "system": "",
        "tools": [],
        "messagePrefix": "",
        "messageId": str(uuid.uuid4()),
        "parent": session_id,
        **given,
        "cwd": chosen if isinstance(chosen, str) else SCAFFOLD_CWD,
    }
    own = realize_placeholders(fixture_header.get("cwd"), values)
    header_cwd = values["cwd"] if isinstance(chosen, str) else own if isinstance(own, str) and own else SCAFFOLD_CWD
    created = fixture_header.get("createdAt")
    anchor = created if isinstance(created, int) and created > 0 else (now_ms or int(time.time() * 1000))
    header = {
        "type": "session",
        "version": 0,
        "id": session_id,
        "createdAt": anchor,
        "cwd": header_cwd,
        "delegationDepth": 0,
    }
    return SeedPlan(header, assign_positions(numbered(fixture, values, start=0, last_time=anchor - 1)), values)


def numbered(
    events: Iterable[Event], values: Mapping[str, Any], *, start: int, last_time: int, keep_times: bool = False
) -> list[Event]:
    """`events` realised and numbered from seq `start`, in dsh's key order, each `time` one after the one
    before (or, with `keep_times`, as given)."""
    out = []
    for seq, event in enumerate(events, start):
        realized = realize_placeholders({k: v for k, v in event.items() if k not in ("seq", "time")}, values)
        given = event.get("time")
        last_time = given if keep_times and isinstance(given, int) else last_time + 1
        rest = {k: v for k, v in realized.items() if k != "type"}
        out.append({"type": realized.get("type"), "seq": seq, "time": last_time, **rest})
    return out


@dataclass
class _Positions:
    """What the events so far say about where the next one lands."""

    turn: int = 0  # the last turn opened
    step: int = 0  # the last step opened in it
    surface: list[int] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)  # callId → its tool/call's seq
    chunks: list[int] = field(default_factory=list)  # the open step's assistant/chunk seqs not yet cited
    compaction_start: int | None = None
    summary: tuple[int, list[int], Any] | None = None  # the last compaction/summary's seq, what it shadowed, tokens

    def fill(self, event: Event) -> Event:
        """`event` with the builders' tokens (`testing.events`) replaced, as dsh's writers would have written it."""
        kind, data = event.get("type"), event.get("data")
        if not isinstance(data, dict):
            return event
        data = dict(data)
        if kind == "turn/start" and data.get("turn") == builders.TURN:
            data["turn"] = self.turn + 1
        if kind == "step/start" and data.get("step") == builders.STEP:
            data["step"] = self.step + 1
        for key, token, value in (("turn", builders.TURN, self.turn), ("step", builders.STEP, self.step)):
            if data.get(key) == token:
                data[key] = value
        filled = {**event, "data": data}
        if kind == "compaction/summary" and data.get("shadowedSeqs") == builders.SHADOWED_SEQS:
            data["shadowedSeqs"] = list(self.surface)
        if kind == "compaction/summary" and data.get("shadowedRange") == builders.SHADOWED_RANGE:
            data["shadowedRange"] = {"start": self.surface[0], "end": self.surface[-1]} if self.surface else None
        if kind == "command/done" and self.summary is not None:
            seqs, tokens = self.summary[1], self.summary[2]
            if data.get("text") == builders.COMPACTED:
                data["text"] = f"Compacted {len(seqs)} history items (~{tokens} tokens)."
            if data.get("sourceEventSeq") == builders.SUMMARY_SEQ:
                data["sourceEventSeq"] = self.summary[0]
        if event.get("surfaceOp") == builders.REPLACE and self.summary is not None:
            shadowed = self.summary[1]
            filled["surfaceOp"] = {"op": "replace", "start": shadowed[0], "end": shadowed[-1]} if shadowed else None
        if event.get("sourceEventSeqs") == builders.SOURCES:
            cited = self._sources(kind, data)
            if cited is None:
                del filled["sourceEventSeqs"]
            else:
                filled["sourceEventSeqs"] = cited
        return filled

    def _sources(self, kind: Any, data: dict[str, Any]) -> list[int] | None:
        if kind == "assistant/message":  # none streamed: provenance not recorded (`[]` is an empty stream)
            return list(self.chunks) or None
        if kind == "tool/result":
            message = data.get("message")
            source = message.get("source") if isinstance(message, dict) else None
            callee = source.get("callId") if isinstance(source, dict) else None
            call_seq = self.calls.get(callee) if isinstance(callee, str) else None
            return None if call_seq is None else [call_seq]
        if kind == "user/message" and self.summary is not None:
            starts = [] if self.compaction_start is None else [self.compaction_start]
            return [*starts, self.summary[0], *self.summary[1]]
        return None

    def take(self, event: Event) -> None:
        """Follow `event` (filled in): the open turn and step, the surface, calls and chunks."""
        kind, seq, data = event.get("type"), event["seq"], event.get("data")
        data = data if isinstance(data, dict) else {}
        if kind == "turn/start" and isinstance(data.get("turn"), int):
            self.turn, self.step = data["turn"], 0
        elif kind == "step/start" and isinstance(data.get("step"), int):
            self.step, self.chunks = data["step"], []
        elif kind == "assistant/chunk":
            self.chunks.append(seq)
        elif kind in ("assistant/message", "llm/retry", "llm/retry-started"):  # an answer cites its own call's
            self.chunks = []
        elif kind == "tool/call" and isinstance(data.get("callId"), str):
            self.calls[data["callId"]] = seq
        elif kind == "compaction/start":
            self.compaction_start, self.summary = seq, None
        elif kind == "compaction/summary" and isinstance(data.get("shadowedSeqs"), list):
            self.summary = (seq, list(data["shadowedSeqs"]), data.get("shadowedTokenCount"))
        op = event.get("surfaceOp")
        if op == "append":
            self.surface.append(seq)
        elif isinstance(op, dict) and op.get("start") in self.surface and op.get("end") in self.surface:
            first, last = self.surface.index(op["start"]), self.surface.index(op["end"])
            self.surface[first : last + 1] = [seq]


def assign_positions(session: Sequence[Event]) -> list[Event]:
    """The session with what the builders left to the seeder filled in from the events before each one."""
    positions, out = _Positions(), []
    for event in session:
        filled = positions.fill(event)
        positions.take(filled)
        out.append(filled)
    return out


def write_seed(root: Path, plan: SeedPlan, compression: Compression, *, batch: int = 64) -> Path:
    """Header frame plus one frame (or write) per batch, through the real layout."""
    batches = [plan.events[i : i + batch] for i in range(0, len(plan.events), batch)]
    return write_artifact(root, plan.header, batches, compression)


class SeedError(ValueError):
    """Events dsh would not load as they are: which one (its index in what was seeded or appended, its type)
    and dsh's reason. Seed with `validate=False` to write a damaged log on purpose."""

    def __init__(self, index: int | None, event_type: str | None, reason: str) -> None:
        self.index, self.event_type, self.reason = index, event_type, reason
        where = "the session" if index is None else f"event {index} ({event_type})"
        super().__init__(f"{where}: {reason} (validate=False writes it as it is)")


def seed_problem(
    header: Mapping[str, Any], session: Sequence[Event], *, first: int = 0, open_turn: bool = False
) -> SeedError | None:
    """What dsh's verdict says of `session` (header and events) when it is not *accepted*, located at the
    event it blames; only events from index `first` on are blamed (earlier ones were seeded before, maybe
    damaged on purpose). `open_turn`: a final turn still open is fine (a live session mid-turn)."""
    with tempfile.TemporaryDirectory(prefix="dsh-seed-check-") as folder:
        log = load_one(str(write_artifact(Path(folder), dict(header), [session], "none")))
    verdict = log.verdict
    if verdict.category == "accepted":
        return None
    if verdict.category == "repaired" and len(log.closers) and len(verdict.repairs) == 1:
        if open_turn:
            return None
        opened = max((e["seq"] for e in session if e.get("type") == "turn/start"), default=None)
        index = None if opened is None or opened < first else opened - first
        return SeedError(
            index,
            "turn/start",
            "the last turn is still open at the end, and dsh would close it as a crash "
            "(reason interrupted): end it with turn/end",
        )
    location = verdict.location or next((d.location for d in log.diagnostics if d.severity == "error"), None)
    seq = location.line - 2 if location is not None and location.line is not None and location.line >= 2 else None
    if seq is not None and seq < first:
        return None
    event_type = session[seq].get("type") if seq is not None and seq < len(session) else None
    return SeedError(None if seq is None else seq - first, event_type, verdict.reason)
