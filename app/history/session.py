"""Reading one session log end to end: dsh's exact verdict and a forgiving,
indexed view of everything readable (PRODUCT.md "Reading").

One streaming pass runs every rule of FORMAT.md §4.5 and §5 over each event
and keeps only what later views need to find any event again (where its
record lies, its type, its message id); event bodies are decoded on demand.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from app.log.diagnostics import Diagnostic, Location
from app.log.jsonvalues import MAX_SAFE_INTEGER
from app.log.records import HeaderlessLog, NotASessionLog, Record
from app.log.sources import SessionScan, SessionSource, open_scan, root_identity_warning
from app.log.sqlite_store import StoreRefused
from app.history.closers import CrashTracker
from app.history.invariants import InvariantChecker
from app.history.surface import SurfaceFold
from app.model.frozen import freeze
from app.model.messages import freeze_message
from app.model.rules import (
    LEGACY_TYPES,
    SURFACE_TYPES,
    UPGRADED_TYPES,
    decode_source_event_seqs,
    envelope_problem,
    header_problem,
    is_placeholder,
    header_unsupported,
    legacy_vocabulary_problem,
    message_of,
    message_shape_problem,
    request_header_problem,
    unknown_type_problem,
    upgrade_event,
    UpgradeError,
)
from app.model.values import Event, Header, Message

Category = Literal["accepted", "repaired", "refused", "unsupported"]
Carrier = Literal["jsonl", "jsonl-zstd", "sqlite", "zip", "fixture"]

# Pipeline stages in dsh's order (FORMAT.md §4.5, §5.1); the verdict is the
# first failure of the earliest stage, as dsh stops at the first stage that throws.
_STAGES: tuple[tuple[str, Category], ...] = (
    ("version", "unsupported"),
    ("header", "refused"),
    ("storage", "refused"),
    ("legacy-vocabulary", "refused"),
    ("upgrade", "refused"),
    ("message-shape", "refused"),
    ("unknown-type", "unsupported"),
    ("validation", "refused"),
)
_STAGE_INDEX = {name: i for i, (name, _) in enumerate(_STAGES)}


@dataclass(frozen=True, slots=True)
class Verdict:
    category: Category
    reason: str
    location: Location | None = None
    repairs: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return self.category in ("accepted", "repaired")


@dataclass(frozen=True, slots=True)
class TailRecord:
    """A record outside dsh's view: undecodable, dropped after a defect, or pending."""

    kind: str
    location: Location
    reason: str | None
    raw: bytes | None
    start: int
    length: int
    first_seq: int | None


@dataclass(slots=True)
class IdentityEntry:
    seq: int
    role: Literal["inbox", "message"]


@dataclass
class SessionLog:
    """One read session: header, verdict, diagnostics and an index to every event."""

    source: SessionSource
    carrier: Carrier
    header: Header | None
    verdict: Verdict
    diagnostics: list[Diagnostic]
    scan: SessionScan | None = None
    types: list[str] = field(default_factory=list)
    # where event `seq` lives: its record, and each record's (start, length, index of its first event)
    _event_record: array = field(default_factory=lambda: array("q"))
    _rec_start: array = field(default_factory=lambda: array("q"))
    _rec_length: array = field(default_factory=lambda: array("q"))
    _rec_first: array = field(default_factory=lambda: array("q"))
    synthetic: list[dict[str, Any]] = field(default_factory=list)
    tail: list[TailRecord] = field(default_factory=list)
    message_ids: dict[int, str] = field(default_factory=dict)
    # small facts the transcript needs, kept so it need not decode large events again
    source_kinds: dict[int, str] = field(default_factory=dict)  # user/message seq → source kind
    result_calls: dict[int, str] = field(default_factory=dict)  # tool/result seq → callId
    surface_ops: dict[int, Any] = field(default_factory=dict)
    empty_assistant: set[int] = field(default_factory=set)
    identity: dict[str, list[IdentityEntry]] = field(default_factory=dict)
    shadowed_by: dict[int, list[int]] = field(default_factory=dict)
    surface: list[int] = field(default_factory=list)
    turns: int = 0
    steps: int = 0
    title: str | None = None
    _reader: Any = field(default=None, repr=False)
    partial: bool = False  # only a prefix was read (load_session's `events`)

    # -- counts ------------------------------------------------------------
    @property
    def event_count(self) -> int:
        return len(self.types)

    @property
    def message_count(self) -> int:
        return sum(1 for s in self.surface if s not in self.empty_assistant)

    # -- events ------------------------------------------------------------
    def raw_event(self, seq: int) -> dict[str, Any]:
        """The stored event at `seq`, upgraded as dsh upgrades it on load."""
        real = len(self._event_record)
        if seq >= real:
            return self.synthetic[seq - real]
        assert self.scan is not None
        rec = self._event_record[seq]
        events = self.scan.reread(self._rec_start[rec], self._rec_length[rec], self._rec_first[rec])
        raw = events[seq - self._rec_first[rec]]
        sid = self.header.id if self.header and self.header.id else ""
        try:
            return upgrade_event(raw, sid, self.message_ids.get)
        except UpgradeError:
            return raw

    def event(self, seq: int) -> Event:
        return to_event(self.raw_event(seq), synthetic=seq >= len(self._event_record))

    def events(self, start: int = 0, stop: int | None = None) -> Iterator[Event]:
        stop = self.event_count if stop is None else min(stop, self.event_count)
        for seq in range(start, stop):
            yield self.event(seq)

    def history_at(self, seq: int | None = None) -> list[Message]:
        """The model-visible messages after event `seq` (FORMAT.md §5.3)."""
        nodes = self.surface if seq is None or seq >= self.event_count - 1 else self._surface_at(seq)
        out = []
        for node in nodes:
            if node in self.empty_assistant:
                continue
            message = self.event(node).message
            if message is not None:
                out.append(message)
        return out

    def _surface_at(self, seq: int) -> list[int]:
        nodes: list[int] = []
        for s, op in self.surface_ops.items():
            if s > seq:
                break
            if op == "append":
                nodes.append(s)
            else:
                start, end = op
                i, j = nodes.index(start), nodes.index(end)
                nodes[i : j + 1] = [s]
        return nodes

    def carriers_of(self, message_id: str) -> list[IdentityEntry]:
        """Every event that carries `message_id` (inbox splices and message events)."""
        return list(self.identity.get(message_id, ()))

    def extend(self) -> bool:
        """Read on after the file grew (only the new bytes); False when it must be read afresh."""
        return self._reader is not None and self._reader.extend()


def to_event(raw: dict[str, Any], *, synthetic: bool = False) -> Event:
    kind = raw.get("type") if isinstance(raw.get("type"), str) else ""
    message = None
    if kind in SURFACE_TYPES and message_shape_problem(raw) is None:
        message = freeze_message(message_of(raw))
    seqs = None
    if "sourceEventSeqs" in raw:
        try:
            seqs = tuple(decode_source_event_seqs(raw["sourceEventSeqs"]))
        except ValueError:
            seqs = None
    return Event(
        seq=int(raw.get("seq", -1)),
        time=int(raw.get("time", 0)) if isinstance(raw.get("time"), (int, float)) else 0,
        type=kind,  # type: ignore[arg-type]
        data=freeze(raw.get("data")),
        surface_op=freeze(raw.get("surfaceOp")),
        source_event_seqs=seqs,
        ignorable=raw.get("ignorable") is True,
        message=message,
        synthetic=synthetic,
        raw=freeze(raw),
    )


class _Reader:
    """The pass behind `load_session`, kept alive so a growing log is read on from where it stopped."""

    def __init__(self, source: SessionSource) -> None:
        self.source = source
        self.failures: dict[int, tuple[str, Location | None]] = {}
        self.diagnostics: list[Diagnostic] = []
        self.scan_repairs: list[str] = []
        self.fold = SurfaceFold()
        self.tracker = CrashTracker()
        self.invariants = InvariantChecker()
        self.last_time = 0
        self.log: SessionLog | None = None
        self.sid = ""

    def fail(self, stage: str, reason: str, location: Location | None, *, code: str | None = None) -> None:
        index = _STAGE_INDEX[stage]
        self.failures.setdefault(index, (reason, location))
        self.diagnostics.append(Diagnostic(code or stage, "error", reason, location or Location(file=self.source.label)))

    def verdict(self, repairs: list[str]) -> Verdict:
        if self.failures:
            index = min(self.failures)
            reason, location = self.failures[index]
            return Verdict(_STAGES[index][1], reason, location, tuple(repairs))
        if repairs:
            return Verdict("repaired", "; ".join(repairs), None, tuple(repairs))
        return Verdict("accepted", "dsh would load this log as it is")

    def read(self, events: int | None = None) -> SessionLog:
        source = self.source
        try:
            scan = open_scan(source)
            header_raw = scan.read_header()
        except StoreRefused as exc:
            self.fail("version" if exc.unsupported else "header", exc.reason, Location(file=source.label))
            return SessionLog(source, "sqlite", None, self.verdict([]), self.diagnostics)
        except NotASessionLog:
            raise
        except HeaderlessLog as exc:
            self.fail("header", exc.reason, exc.location, code="bad-header")
            return SessionLog(source, _carrier(source, "artifact"), None, self.verdict([]), self.diagnostics)
        except (OSError, ValueError) as exc:
            self.fail("storage", f"cannot read: {exc}", Location(file=source.label))
            return SessionLog(source, _carrier(source, "artifact"), None, self.verdict([]), self.diagnostics)
        lenient = scan.mode == "fixture"
        header = Header.of(header_raw)
        hloc = getattr(scan, "header_location", Location(file=source.label, line=1, offset=0))
        problem = header_unsupported(header_raw, lenient=lenient)
        if problem:
            self.fail("version", problem, hloc, code="unsupported-version")
        problem = header_problem(header_raw, lenient=lenient, sqlite=source.kind == "sqlite")
        if problem:
            self.fail("header", problem, hloc, code="bad-header")
        for extra in getattr(scan, "header_problems", ()):
            self.fail("header", extra, hloc, code="bad-header")
        cwd = header_raw.get("cwd")
        if not lenient and isinstance(cwd, str) and is_placeholder(cwd):
            self.diagnostics.append(Diagnostic(
                "placeholder-cwd", "warning",
                f"header cwd {cwd!r} is a snapshot placeholder, not a path: dsh reads the log, but a dsh "
                "root could not place it in a project folder", hloc))
        warning = root_identity_warning(source, header_raw)
        if warning:
            self.diagnostics.append(warning)
        log = SessionLog(source, _carrier(source, scan.mode), header, Verdict("accepted", ""), self.diagnostics, scan)
        log._reader = self
        self.log = log
        self.sid = header.id or ""
        self._consume(scan.records(), events)
        return log

    def extend(self) -> bool:
        """Read what was appended since; False when only a fresh read can be trusted."""
        log = self.log
        scan = log.scan if log else None
        if (log is None or not hasattr(scan, "resume") or self.failures or any(t.kind != "pending" for t in log.tail)
                or not scan.has_event_lines):  # type: ignore[union-attr]  # a header-only log's mode is not settled
            return False
        self._drop_closers()
        log.tail.clear()
        self.diagnostics[:] = [d for d in self.diagnostics if d.code not in ("pending-line", "torn-frame")]
        self.scan_repairs.clear()
        self._consume(scan.resume())  # type: ignore[union-attr]
        return True

    def _consume(self, records: Iterator[Record], limit: int | None = None) -> None:
        log = self.log
        assert log is not None and log.scan is not None
        scan = log.scan
        if limit is not None:
            records = _until(records, lambda: len(log.types) >= limit)
        take, fold, types, invariants = self._take, self.fold, log.types, self.invariants
        event_record = log._event_record
        for record in records:
            if record.kind == "events":
                rec = len(log._rec_start)
                log._rec_start.append(record.start)
                log._rec_length.append(record.length)
                log._rec_first.append(len(types))
                for event in record.events:
                    event_record.append(rec)
                    if event.get("type") == "assistant/chunk" and _plain_chunk(event, len(types)):
                        # half of a typical log: an envelope that passes every rule, with no surface,
                        # identity or repair facts to keep
                        types.append("assistant/chunk")
                        warnings = invariants.feed(event)
                        if warnings:
                            self.diagnostics.extend(Diagnostic("invariant", "warning", w, record.location)
                                                    for w in warnings)
                        self.last_time = event["time"]
                        continue
                    take(event, record.location, fold, synthetic=False)
            else:
                first = record.events[0].get("seq") if record.events else None
                log.tail.append(TailRecord(record.kind, record.location, record.reason, record.raw,
                                           record.start, record.length, first if isinstance(first, int) else None))
        if scan.state.corruption is not None:
            c = scan.state.corruption
            self.failures.setdefault(_STAGE_INDEX["storage"], (c.message, c.location))
        self.diagnostics.extend(scan.state.diagnostics)
        self.scan_repairs = list(scan.state.repairs)
        if limit is not None and len(log.types) >= limit:
            log.partial = True  # a first screen's prefix: no closers, no verdict yet
            return
        self._close()

    def _close(self) -> None:
        """Crash closers for an open final turn, in memory only, folded on a copy of the surface."""
        log = self.log
        assert log is not None
        surface = self.fold
        if self.tracker.open:
            surface = self.fold.copy()
            for event in self.tracker.closers(len(log.types), self.last_time):
                log.synthetic.append(event)
                self._take(event, Location(file=self.source.label), surface, synthetic=True)
        log.surface = list(surface.nodes)
        repairs = list(self.scan_repairs)
        if log.synthetic:
            names = ", ".join(e["type"] for e in log.synthetic)
            repairs.append(f"closed the open final turn in memory with {len(log.synthetic)} synthetic event(s): {names}")
        log.verdict = self.verdict(repairs)

    def _drop_closers(self) -> None:
        log = self.log
        assert log is not None
        for event in log.synthetic:
            seq = event["seq"]
            for index in (log.message_ids, log.source_kinds, log.result_calls, log.surface_ops, log.shadowed_by):
                index.pop(seq, None)  # type: ignore[attr-defined]
            for entries in log.identity.values():
                entries[:] = [e for e in entries if e.seq != seq]
        del log.types[len(log._event_record):]
        log.synthetic.clear()

    def _take(self, event: dict[str, Any], location: Location, fold: SurfaceFold, *, synthetic: bool) -> None:
        log = self.log
        assert log is not None
        types = log.types
        seq = len(types)
        kind = event.get("type")
        if not isinstance(kind, str):
            kind = None  # the envelope rule refuses it below; a list or object must not reach a set lookup
        if kind in LEGACY_TYPES:
            problem = legacy_vocabulary_problem(event)
            if problem:
                self.fail("legacy-vocabulary", problem, location)
        if kind in UPGRADED_TYPES:
            try:
                event = upgrade_event(event, self.sid, log.message_ids.get)
            except UpgradeError as exc:
                self.fail("upgrade", str(exc), location)
            kind = event.get("type") if isinstance(event.get("type"), str) else None
        shape = message_shape_problem(event)
        if shape:
            self.fail("message-shape", shape, location)
        unknown = unknown_type_problem(event)
        if unknown:
            self.fail("unknown-type", unknown, location, code="unknown-type")
        envelope = envelope_problem(event)
        if envelope is None and event.get("seq") != seq:
            envelope = f"event seq {event.get('seq')!r} is not its index {seq}"
        if envelope is None and kind == "request/header":
            envelope = request_header_problem(event.get("data"))
        if envelope:
            self.fail("validation", envelope, location)
        types.append(kind if isinstance(kind, str) else "")
        if kind in SURFACE_TYPES and shape is None:
            message = message_of(event)
            log.message_ids[seq] = message["id"]
            log.identity.setdefault(message["id"], []).append(IdentityEntry(seq, "message"))
            if kind == "assistant/message" and not message["content"]:
                log.empty_assistant.add(seq)
            elif kind == "user/message":
                log.source_kinds[seq] = message["source"]["kind"]
            elif kind == "tool/result":
                log.result_calls[seq] = message["source"]["callId"]
            if envelope is None:
                problem, shadowed = fold.apply(event, lambda s: types[s] if 0 <= s < len(types) else None,
                                               lambda s: log.raw_event(s) if 0 <= s < len(types) else None)
                if problem:
                    self.fail("validation", problem, location, code="surface")
                else:
                    op = event["surfaceOp"]
                    log.surface_ops[seq] = "append" if op == "append" else (int(op["start"]), int(op["end"]))
                    if shadowed:
                        log.shadowed_by[seq] = shadowed
        elif kind == "agent/inbox/spliced":
            data = event.get("data")
            for message in data.get("inserted", ()) if isinstance(data, dict) else ():
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    log.identity.setdefault(message["id"], []).append(IdentityEntry(seq, "inbox"))
        if synthetic:
            return  # closers change no running state: the next read may append real events instead
        if kind == "turn/start":
            log.turns += 1
        elif kind == "step/start":
            log.steps += 1
        elif kind == "session/title":
            data = event.get("data")
            if isinstance(data, dict) and isinstance(data.get("title"), str):
                log.title = data["title"]
        self.tracker.feed(event)
        for warning in self.invariants.feed(event):
            self.diagnostics.append(Diagnostic("invariant", "warning", warning, location))
        if isinstance(event.get("time"), int):
            self.last_time = event["time"]


def _plain_chunk(event: dict[str, Any], seq: int) -> bool:
    """An `assistant/chunk` whose envelope is exactly type, seq (= its index), time and data."""
    time = event.get("time")
    return (len(event) == 4 and event.get("seq") == seq and type(event.get("seq")) is int and "data" in event
            and type(time) is int and -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER)


def _carrier(source: SessionSource, mode: str) -> Carrier:
    if source.kind == "jsonl" and mode == "fixture":
        return "fixture"
    return source.kind


def load_session(source: SessionSource, *, events: int | None = None) -> SessionLog:
    """Read one session log, or only its first `events` events (`partial`: no verdict, for a
    first screen that must not wait for a long log). Raises NotASessionLog for input that is not one."""
    return _Reader(source).read(events)


def _until(records: Iterator[Record], done: Callable[[], bool]) -> Iterator[Record]:
    for record in records:
        yield record
        if done():
            return
