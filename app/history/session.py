"""Reading one session log end to end: dsh's exact verdict and a forgiving,
indexed view of everything readable (docs/product.md "Reading").

One streaming pass runs every rule of docs/format.md §4.5 and §5 over each event
and keeps only what later views need to find any event again (where its
record lies, its type, its message id); event bodies are decoded on demand.
"""

from __future__ import annotations

import math
import threading
from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import islice, repeat
from operator import itemgetter
from typing import Any, Literal

from ..log.diagnostics import FINDINGS_LISTED, Diagnostic, Findings, Location
from ..log.jsonvalues import MAX_SAFE_INTEGER
from ..log.plaintext import DEFAULT_LIMITS, OVER_LIMIT, LineTooLong, ReadLimits
from ..log.records import EventRun, HeaderlessLog, NotASessionLog, Record, RepeatedLines
from ..log.sources import (
    JsonlSessionScan,
    RecordChanged,
    SessionScan,
    SessionSource,
    UnreadablePath,
    discover,
    identity_problem,
    open_scan,
)
from ..log.sqlite_store import StoreRefused
from ..model.frozen import freeze
from ..model.messages import freeze_message
from ..model.rules import (
    KNOWN_EVENT_TYPES,
    LEGACY_TYPES,
    SURFACE_TYPES,
    UPGRADED_TYPES,
    UpgradeError,
    decode_source_event_seqs,
    envelope_problem,
    header_problem,
    header_unsupported,
    is_placeholder,
    is_unknown_type,
    legacy_vocabulary_problem,
    message_of,
    message_problem,
    message_shape_problem,
    request_header_problem,
    turn_is_current,
    unknown_type_message,
    upgrade_event,
)
from ..model.values import Event, Header, Message
from .closers import ABSENT, TRACKED_TYPES, CrashTracker
from .invariants import NONE, WATCHED_TYPES, InvariantChecker
from .repeating import Repeating
from .surface import SurfaceFold

Category = Literal["accepted", "repaired", "refused", "unsupported"]
Carrier = Literal["jsonl", "jsonl-zstd", "sqlite", "zip", "fixture"]

# Pipeline stages in dsh's order (docs/format.md §4.5, §5.1); the verdict is the
# first failure of the earliest stage, as dsh stops at the first stage that throws.
_STAGES: tuple[tuple[str, Category], ...] = (
    ("version", "unsupported"),
    ("header", "refused"),
    # a line or a session's text over a limit (`ReadLimits`): not read, so this reader cannot say what dsh would
    ("limit", "unsupported"),
    ("storage", "refused"),
    ("identity", "refused"),
    ("legacy-vocabulary", "refused"),
    ("upgrade", "refused"),
    ("message-shape", "refused"),
    ("unknown-type", "unsupported"),
    ("closers", "refused"),
    ("validation", "refused"),
)
_STAGE_INDEX = {name: i for i, (name, _) in enumerate(_STAGES)}

# Known types that no legacy rule, upgrade or message-shape rule looks at: under a plain envelope
# (see `_Reader._take_indexed`) every rule of docs/format.md §4.5 passes them as written.
_PLAIN_TYPES = KNOWN_EVENT_TYPES - LEGACY_TYPES - UPGRADED_TYPES - SURFACE_TYPES
# Known types an upgrade changes only in a legacy shape: plain as well when the upgrade leaves them be.
_UPGRADABLE_PLAIN_TYPES = (UPGRADED_TYPES - SURFACE_TYPES) & KNOWN_EVENT_TYPES
REREAD_SPAN = 1 << 20  # the most bytes of lines `SessionLog.raw_events` reads at once
# One string object per known type, for the index to hold: not each event's own copy, which would
# keep every event's type string alive, and make the cycle collector's walks of the index touch each.
_KINDS = {kind: kind for kind in KNOWN_EVENT_TYPES}
# the types some rule reads an event of: a copy of any other line moves on nothing but the index and findings
_RULED_TYPES = KNOWN_EVENT_TYPES | LEGACY_TYPES | UPGRADED_TYPES
EVENTS_KEPT = 64  # decoded events a log keeps, the latest asked for: a small session's all, a long one's latest
KEPT_RECORD_BYTES = 4096  # of records at most this long: a few hundred KiB of a log's text at most


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


@dataclass(frozen=True, slots=True)
class IdentityEntry:
    seq: int
    role: Literal["inbox", "message"]


# How an event joined the surface: appended, or replacing the span of seqs (start, end).
SurfaceOp = Literal["append"] | tuple[int, int]


class SessionLog:
    """One read session: header, verdict, diagnostics and an index to every event.

    Every view reads it through the properties and methods below, which hand out read-only
    views. Only this module's reader writes the index: as it reads the log, and again when
    `extend` reads what a growing log gained since.
    """

    __slots__ = (
        "_carriers",
        "_copies",
        "_decoded",
        "_decoded_lock",
        "_empty_assistant",
        "_event_record",
        "_ignorable",
        "_kept",
        "_last_record",
        "_message_ids",
        "_reader",
        "_rec_length",
        "_rec_start",
        "_result_calls",
        "_scan",
        "_shadowed_by",
        "_source_kinds",
        "_surface",
        "_surface_ops",
        "_synthetic",
        "_tail",
        "_types",
        "carrier",
        "diagnostics",
        "header",
        "partial",
        "source",
        "steps",
        "title",
        "turns",
        "verdict",
    )

    def __init__(
        self,
        source: SessionSource,
        carrier: Carrier,
        header: Header | None,
        verdict: Verdict,
        diagnostics: list[Diagnostic],
        scan: SessionScan | None = None,
    ) -> None:
        self.source = source
        self.carrier = carrier
        self.header = header
        self.verdict = verdict
        self.diagnostics: Sequence[Diagnostic] = diagnostics  # the reader's own list, read-only to others
        self.title: str | None = None
        self.turns = 0
        self.steps = 0
        self.partial = False  # only a prefix was read (load_session's `events`): no closers, no verdict yet
        self._scan = scan
        self._reader: _Reader | None = None
        self._types: list[str] | Repeating[str] = []
        # where event `seq` lives: its record, and each record's (start, length); a record holds consecutive
        # events, so its first is the first seq whose record it is. (Unsigned: none is negative, and an
        # unsigned array takes an int several times faster. A record's index takes 4 bytes: no log holds
        # 2**32 records, and at a few bytes per event each is most of what the index costs.) A log of copies
        # of one line keeps all four as `Repeating` runs (`_repeating`), and each stretch of counted copies
        # (first seq, count) in `_copies`.
        self._event_record: array[int] | Repeating[int] = array("I")
        self._rec_start: array[int] | Repeating[int] = array("Q")
        self._rec_length: array[int] | Repeating[int] = array("Q")
        self._copies: list[tuple[int, int]] = []
        self._synthetic: list[dict[str, Any]] = []
        self._tail: list[TailRecord] = []
        self._message_ids: dict[int, str] = {}
        # small facts the transcript needs, kept so it need not decode large events again
        self._source_kinds: dict[int, str] = {}  # user/message seq → source kind
        self._result_calls: dict[int, str] = {}  # tool/result seq → callId
        self._surface_ops: dict[int, SurfaceOp] = {}  # in seq order
        self._empty_assistant: set[int] = set()
        self._ignorable: set[int] = set()  # seqs of events marked `ignorable: true`
        # message id → the seq of each event that carries it, an inbox splice's as `~seq` (read through
        # `carriers_of`; plain ints, as an object per carrier would keep the cycle collector busy on a long log)
        self._carriers: dict[str, list[int]] = {}
        self._shadowed_by: dict[int, list[int]] = {}
        self._surface: list[int] = []
        # Decoded again on demand, but not over and over: a row's facts read the events its transcript row
        # read, and each event of a packed record would parse the whole record again. Bounded (`EVENTS_KEPT`,
        # small records only; one packed record), and shared by the server's threads: the lock guards the
        # order of `_decoded`, and `_last_record` is replaced whole, never changed.
        self._decoded: OrderedDict[int, Event] = OrderedDict()  # stored seq → its event, least recent first
        self._decoded_lock = threading.Lock()
        self._last_record: tuple[int, list[dict[str, Any]]] | None = None  # a packed record's index and events
        # Every stored event as the read parsed it, by seq, for a reader that will ask for each one again (the
        # search index: `load_session`'s `keep_bytes`); None once the records read pass that many bytes, or
        # once a growing log is read on, and then events are read again from storage.
        self._kept: list[dict[str, Any]] | None = None

    # -- what the index holds, read-only ------------------------------------
    @property
    def types(self) -> Sequence[str]:
        """Each event's type, by seq (an empty string for an event whose type is not a string)."""
        return self._types

    @property
    def tail(self) -> Sequence[TailRecord]:
        """The records after dsh's view: undecodable, dropped after a defect, or pending."""
        return self._tail

    @property
    def message_ids(self) -> Mapping[int, str]:
        """Surface event seq → the id of its well-shaped message."""
        return self._message_ids

    @property
    def source_kinds(self) -> Mapping[int, str]:
        """`user/message` seq → its message's source kind."""
        return self._source_kinds

    @property
    def result_calls(self) -> Mapping[int, str]:
        """`tool/result` seq → the callId its message answers."""
        return self._result_calls

    @property
    def surface_ops(self) -> Mapping[int, SurfaceOp]:
        """Every event that joined the surface, in seq order, with how it joined."""
        return self._surface_ops

    @property
    def empty_assistant(self) -> AbstractSet[int]:
        """The `assistant/message` seqs whose content is empty (never model-visible, docs/format.md §5.3)."""
        return self._empty_assistant

    @property
    def ignorable(self) -> AbstractSet[int]:
        """The seqs of events marked `ignorable: true` (dsh skips an unknown type so marked, docs/format.md §2.4)."""
        return self._ignorable

    @property
    def shadowed_by(self) -> Mapping[int, Sequence[int]]:
        """A replace's seq → the surface seqs it took off the surface."""
        return self._shadowed_by

    @property
    def surface(self) -> Sequence[int]:
        """The surface after the last event, crash closers included."""
        return self._surface

    @property
    def closers(self) -> range:
        """The seqs of the in-memory crash closers (docs/format.md §5.8): they follow the events read."""
        return range(len(self._event_record), len(self._types))

    # -- counts ------------------------------------------------------------
    @property
    def event_count(self) -> int:
        """Every event in dsh's view: those stored, then any crash closers."""
        return len(self._types)

    @property
    def stored_count(self) -> int:
        """The events read from storage, without the closers dsh would add."""
        return len(self._event_record)

    @property
    def message_count(self) -> int:
        return sum(1 for s in self._surface if s not in self._empty_assistant)

    # -- events ------------------------------------------------------------
    def raw_event(self, seq: int) -> dict[str, Any]:
        """The stored event at `seq`, upgraded as dsh upgrades it on load (read-only: the events of a packed
        record are kept, and handed out again)."""
        real = len(self._event_record)
        if seq >= real:
            return self._synthetic[seq - real]
        kept = self._kept
        if kept is not None and seq < len(kept):
            raw = kept[seq]
        else:
            rec = self._event_record[seq]
            first = bisect_left(self._event_record, rec)
            raw = self._record(rec, first)[seq - first]
        sid = self.header.id if self.header and self.header.id else ""
        try:
            return upgrade_event(raw, sid, self._message_ids.get)
        except UpgradeError:
            return raw

    def _repeating(self) -> tuple[Repeating[str], Repeating[int], Repeating[int], Repeating[int]]:
        """The index (types, event records, record starts and lengths) as runs from here on (`Repeating`):
        copies of a line are being counted into it."""
        types, records, starts, lengths = self._types, self._event_record, self._rec_start, self._rec_length
        if not isinstance(types, Repeating):
            self._types = types = Repeating(types, list)
        if not isinstance(records, Repeating):
            self._event_record = records = Repeating(records, partial(array, "I"))
        if not isinstance(starts, Repeating):
            self._rec_start = starts = Repeating(starts, partial(array, "Q"))
        if not isinstance(lengths, Repeating):
            self._rec_length = lengths = Repeating(lengths, partial(array, lengths.typecode))
        return types, records, starts, lengths

    def raw_events(self, seqs: range) -> Iterator[dict[str, Any]]:
        """`raw_event` of each of `seqs` (consecutive), where each is a line of its own read a stretch of lines
        at a time (up to REREAD_SPAN bytes): a one-file export lists every event of a run of a million."""
        records, scan, real = self._event_record, self._scan, min(seqs.stop, len(self._event_record))
        seq = seqs.start
        if (
            seq < real
            and self._kept is None
            and isinstance(scan, JsonlSessionScan)
            and records[real - 1] - records[seq] == real - 1 - seq  # one event a record (the index never skips one)
            and (seq == 0 or records[seq - 1] != records[seq])
            and (real == len(records) or records[real] != records[real - 1])
        ):
            starts, lengths, sid = self._rec_start, self._rec_length, self.header.id if self.header else None
            while seq < real:
                rec = records[seq]
                copies, plain = self._copies_at(seq, real)
                if copies:
                    yield from self._reread_copies(seq, copies, sid or "")
                    seq += copies
                    continue
                stop = bisect_right(starts, starts[rec] + REREAD_SPAN, lo=rec + 1, hi=rec + plain - seq)
                with self._decoding(seq):
                    lines = scan.reread_lines(starts[rec:stop], lengths[rec:stop], seq)
                for events in lines:
                    if len(events) != 1 or not _read_as(events[0], self._types[seq]):
                        raise RecordChanged(self.location_of(seq), "the record holds other events than were read there")
                    try:
                        yield upgrade_event(events[0], sid or "", self._message_ids.get)
                    except UpgradeError:
                        yield events[0]
                    seq += 1
        yield from map(self.raw_event, range(seq, seqs.stop))

    def _copies_at(self, seq: int, stop: int) -> tuple[int, int]:
        """How many of the events from `seq` (up to `stop`) are copies of one line counted at once (0: none),
        and where the events from `seq` that are not (up to `stop`) end."""
        copies = self._copies
        k = bisect_right(copies, seq, key=itemgetter(0))
        if k and seq < sum(copies[k - 1]):
            return min(sum(copies[k - 1]), stop) - seq, seq
        return 0, min(copies[k][0], stop) if k < len(copies) else stop

    def _reread_copies(self, seq: int, count: int, sid: str) -> Iterator[dict[str, Any]]:
        """The `count` events from `seq`, copies of one line: read REREAD_SPAN bytes of copies at a time."""
        scan = self._scan
        assert isinstance(scan, JsonlSessionScan)
        rec = self._event_record[seq]
        start, length = self._rec_start[rec], self._rec_length[rec]
        stride = self._rec_start[rec + 1] - start if count > 1 else length + 1  # (one copy: no stride to take)
        at_once = max(REREAD_SPAN // stride, 1)
        for first in range(seq, seq + count, at_once):
            n = min(at_once, seq + count - first)
            with self._decoding(first):
                events = scan.reread_copies(start + (first - seq) * stride, length, stride, n, first)
            if not _read_as(events[0], self._types[first]):
                raise RecordChanged(self.location_of(first), "the record holds other events than were read there")
            if upgrade_event(events[0], sid, self._message_ids.get) is events[0]:  # as every counted copy's type
                yield from events
            else:
                yield from (upgrade_event(event, sid, self._message_ids.get) for event in events)

    @contextmanager
    def _decoding(self, seq: int) -> Iterator[None]:
        """Records read again from event `seq` on: one that no longer decodes is a RecordChanged there, as it
        decoded when it was read."""
        try:
            yield
        except RecordChanged:
            raise
        except ValueError as exc:
            raise RecordChanged(self.location_of(seq), f"the record no longer decodes ({exc})") from None

    def _record(self, rec: int, first: int) -> list[dict[str, Any]]:
        """The events record `rec` decodes to, its first event's seq `first`; the last packed one is kept,
        so reading its events one by one parses it once."""
        last = self._last_record
        if last is not None and last[0] == rec:
            return last[1]
        assert self._scan is not None
        with self._decoding(first):
            events = self._scan.reread(self._rec_start[rec], self._rec_length[rec], first)
        # the events read there before, by type (as read: an upgraded type was another before its upgrade)
        kinds = self._types[first : bisect_right(self._event_record, rec)]
        if len(events) != len(kinds) or not all(map(_read_as, events, kinds)):
            raise RecordChanged(self.location_of(first), "the record holds other events than were read there")
        if len(events) > 1:
            self._last_record = (rec, events)
        return events

    def event(self, seq: int) -> Event:
        if seq >= len(self._event_record):
            return to_event(self.raw_event(seq), synthetic=True)
        with self._decoded_lock:
            found = self._decoded.get(seq)
            if found is not None:
                self._decoded.move_to_end(seq)
                return found
        event = to_event(self.raw_event(seq))
        if self._rec_length[self._event_record[seq]] <= KEPT_RECORD_BYTES:
            with self._decoded_lock:
                self._decoded[seq] = event
                if len(self._decoded) > EVENTS_KEPT:
                    self._decoded.popitem(last=False)
        return event

    def events(self, start: int = 0, stop: int | None = None) -> Iterator[Event]:
        stop = self.event_count if stop is None else min(stop, self.event_count)
        for seq in range(start, stop):
            yield self.event(seq)

    def history_at(self, seq: int | None = None) -> list[Message]:
        """The model-visible messages after event `seq` (docs/format.md §5.3)."""
        nodes = self._surface if seq is None or seq >= self.event_count - 1 else self._surface_at(seq)
        out = []
        for node in nodes:
            if node in self._empty_assistant:
                continue
            message = self.event(node).message
            if message is not None:
                out.append(message)
        return out

    def _surface_at(self, seq: int) -> list[int]:
        nodes: list[int] = []
        for s, op in self._surface_ops.items():
            if s > seq:
                break
            if op == "append":
                nodes.append(s)
            else:
                start, end = op
                i, j = nodes.index(start), nodes.index(end)
                nodes[i : j + 1] = [s]
        return nodes

    # -- where things are ----------------------------------------------------
    def location_of(self, seq: int) -> Location:
        """Where event `seq` was read from: its record's byte offset of the decoded text (its row,
        in SQLite); an in-memory closer has only the file."""
        label = self.source.label
        if seq >= len(self._event_record):
            return Location(file=label)
        start = self._rec_start[self._event_record[seq]]
        return Location(file=label, row=start) if self.carrier == "sqlite" else Location(file=label, offset=start)

    def event_at(self, position: int) -> int | None:
        """The first event of the record that holds `position` (a byte offset of the decoded text, or a
        SQLite row's physical seq, as locations give them), else of the first record after it; None
        when no record of dsh's view lies at or after it."""
        starts, lengths = self._rec_start, self._rec_length
        i = bisect_right(starts, position)
        if i and position < starts[i - 1] + max(lengths[i - 1], 1):
            return bisect_left(self._event_record, i - 1)
        return bisect_left(self._event_record, i) if i < len(starts) else None

    def reread(self, record: TailRecord) -> list[dict[str, Any]]:
        """The events a tail record decodes to, read again from storage (as stored: no upgrades).
        Raises OSError or ValueError when the file changed since it was read."""
        if self._scan is None:
            raise ValueError("this log was not read from storage")
        return self._scan.reread(record.start, record.length, record.first_seq if record.first_seq is not None else 0)

    def carriers_of(self, message_id: str) -> list[IdentityEntry]:
        """Every event that carries `message_id` (inbox splices and message events)."""
        return [
            IdentityEntry(s, "message") if s >= 0 else IdentityEntry(~s, "inbox")
            for s in self._carriers.get(message_id, ())
        ]

    @property
    def carried_ids(self) -> AbstractSet[str]:
        """Every message id some event carries (`identity`'s keys, without building its lists)."""
        return self._carriers.keys()

    @property
    def identity(self) -> dict[str, list[IdentityEntry]]:
        """Every message id with the events that carry it."""
        return {message_id: self.carriers_of(message_id) for message_id in self._carriers}

    def extend(self) -> bool:
        """Read on after the file grew (only the new bytes); False when it must be read afresh."""
        # an append changes no stored event, so this is only prudence, at the price of a few decodes: the
        # read-on rewrites the index these events were found by (it drops the closers and reads the tail)
        with self._decoded_lock:
            self._decoded.clear()
        self._last_record = None
        return self._reader is not None and self._reader.extend(self)


def _read_as(event: dict[str, Any], kind: str) -> bool:
    """Whether a stored event read again has the type it was read as (any upgraded type: it was upgraded)."""
    found = event.get("type")
    found = found if isinstance(found, str) else ""
    return found == kind or found in UPGRADED_TYPES


def to_event(raw: dict[str, Any], *, synthetic: bool = False) -> Event:
    frozen = freeze(raw)  # once: its data, envelope and message are the frozen event's own parts
    kind = raw.get("type")
    kind = kind if isinstance(kind, str) else ""
    message = None
    if kind in SURFACE_TYPES and message_shape_problem(raw) is None:
        message = freeze_message(message_of(frozen))
    seqs = None
    if "sourceEventSeqs" in raw:
        try:
            seqs = tuple(decode_source_event_seqs(raw["sourceEventSeqs"]))
        except ValueError:
            seqs = None
    return Event(
        seq=int(raw.get("seq", -1)),
        time=int(raw["time"]) if isinstance(raw.get("time"), (int, float)) and math.isfinite(raw["time"]) else 0,
        type=kind,
        data=frozen.get("data"),
        surface_op=frozen.get("surfaceOp"),
        source_event_seqs=seqs,
        ignorable=raw.get("ignorable") is True,
        message=message,
        synthetic=synthetic,
        raw=frozen,
    )


class _Reader:
    """The pass behind `load_session`, kept alive so a growing log is read on from where it stopped."""

    def __init__(self, source: SessionSource, limits: ReadLimits = DEFAULT_LIMITS, keep_bytes: int = 0) -> None:
        self.source = source
        self.limits = limits
        self.keep_bytes = keep_bytes  # the records read whose events the log keeps as parsed (`SessionLog._kept`)
        self.failures: dict[int, tuple[str, Location | None]] = {}
        self.diagnostics = Findings()
        self.scan_repairs: list[str] = []
        self.fold = SurfaceFold()
        self.tracker = CrashTracker()
        self.invariants = InvariantChecker()
        self.last_time = 0
        # the log being read, held only while reading: a log holds its reader, and a reader that held its
        # log for good would make a cycle only the cycle collector frees (slowly, and at any later moment)
        self.log: SessionLog | None = None
        self.sid = ""

    def fail(
        self, stage: str, reason: str | Callable[[], str], location: Location | None, *, code: str | None = None
    ) -> None:
        """A finding that fails `stage`. `reason` may be a function that words it, asked only if the finding
        is listed or is the stage's first: past the findings listed, a million lines would each be worded in
        vain."""
        index, code = _STAGE_INDEX[stage], code or stage
        where = location or Location(file=self.source.label)
        if index in self.failures and not self.diagnostics.listing(code):
            self.diagnostics.count_one(code, where)
            return
        text = reason if isinstance(reason, str) else reason()
        self.failures.setdefault(index, (text, location))
        self.diagnostics.append(Diagnostic(code, "error", text, where))

    def verdict(self, repairs: list[str]) -> Verdict:
        if self.failures:
            index = min(self.failures)
            reason, location = self.failures[index]
            return Verdict(_STAGES[index][1], reason, location)  # a log dsh refuses, it repairs nothing
        if repairs:
            return Verdict("repaired", "; ".join(repairs), None, tuple(repairs))
        return Verdict("accepted", "dsh would load this log as it is")

    def read(self, events: int | None = None) -> SessionLog:
        source = self.source
        try:
            scan = open_scan(source, limits=self.limits)
            header_raw = scan.read_header()
        except StoreRefused as exc:
            self.fail("version" if exc.unsupported else "header", exc.reason, Location(file=source.label))
            return SessionLog(source, "sqlite", None, self.verdict([]), self.diagnostics)
        except NotASessionLog:
            raise
        except HeaderlessLog as exc:
            self.fail("header", exc.reason, exc.location, code="bad-header")
            return SessionLog(source, _carrier(source, "artifact"), None, self.verdict([]), self.diagnostics)
        except LineTooLong as exc:
            self.fail("limit", str(exc), Location(file=source.label, line=1, offset=0), code="line-too-long")
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
            self.diagnostics.append(
                Diagnostic(
                    "placeholder-cwd",
                    "warning",
                    f"header cwd {cwd!r} is a snapshot placeholder, not a path: dsh reads the log, but a dsh "
                    "root could not place it in a project folder",
                    hloc,
                )
            )
        problem = None if lenient else identity_problem(source, header_raw)
        if problem:
            self.fail("identity", problem, Location(file=source.label), code="identity")
        log = SessionLog(source, _carrier(source, scan.mode), header, Verdict("accepted", ""), self.diagnostics, scan)
        if self.limits.max_line_bytes < 1 << 32:  # no record read is longer: its length takes 4 bytes, not 8
            log._rec_length = array("I")
        log._reader = self
        if self.keep_bytes > 0 and isinstance(scan, JsonlSessionScan):  # where a record's place is its text's
            log._kept = []
        self.sid = header.id or ""
        self.log = log
        try:
            self._consume(scan.runs(), events)
        finally:
            self.log = None
        return log

    def extend(self, log: SessionLog) -> bool:
        """Read what was appended to `log` since; False when only a fresh read can be trusted."""
        scan = log._scan
        if (
            log.partial
            or not isinstance(scan, JsonlSessionScan)  # a SQLite store is read whole again
            or self.failures
            or any(t.kind != "pending" for t in log._tail)
            or not scan.has_event_lines  # a header-only log's mode is not settled
        ):
            return False
        self.log = log
        log._kept = None  # kept for one read through, not for every read on
        try:
            self._drop_closers()
            log._tail.clear()
            self.diagnostics.drop(("pending-line", "torn-frame"))
            self.scan_repairs.clear()
            self._consume(scan.resume())
        finally:
            self.log = None
        return True

    def _consume(self, items: Iterator[Record | EventRun | RepeatedLines], limit: int | None = None) -> None:
        log = self.log
        assert log is not None and log._scan is not None
        scan = log._scan
        counted: tuple[bytes, dict[str, int]] | None = None  # the line last counted copies of, and what each said
        for item in items:  # (`log._types` asked anew each time: counted copies make it `Repeating`)
            if type(item) is RepeatedLines:
                copies = item if limit is None else item.prefix(max(limit - len(log._types), 1))
                saying = self._take_copies(copies, counted[1] if counted and counted[0] == copies.raw else None)
                counted = None if saying is None else (copies.raw, saying)
            elif type(item) is EventRun:
                counted = None
                # as line by line: a first screen stops at the line that reaches its count
                self._take_run(item if limit is None else item.prefix(max(limit - len(log._types), 1)))
            elif item.kind == "events":
                counted = None
                self._take_record(item)
            else:
                counted = None
                first = item.events[0].get("seq") if item.events else None
                log._tail.append(
                    TailRecord(
                        item.kind,
                        item.location,
                        item.reason,
                        item.raw,
                        item.start,
                        item.length,
                        first if isinstance(first, int) else None,
                    )
                )
            if limit is not None and len(log._types) >= limit:
                break
        if isinstance(items, Generator):  # as every scan's is
            items.close()  # a scan stopped early still makes its closing checks before its state is read
        # counted from the index, not event by event (crash closers start neither a turn nor a step)
        log.turns, log.steps = log._types.count("turn/start"), log._types.count("step/start")
        if scan.state.corruption is not None:
            c = scan.state.corruption
            stage = "limit" if c.code in OVER_LIMIT else "storage"
            self.failures.setdefault(_STAGE_INDEX[stage], (c.message, c.location))
        self.diagnostics.extend(scan.state.diagnostics)
        self.diagnostics.settle()
        self.scan_repairs = list(scan.state.repairs)
        if limit is not None and len(log._types) >= limit:
            log.partial = True  # a first screen's prefix: no closers, no verdict yet
            return
        self._close()

    def _take_run(self, run: EventRun) -> None:
        """A run of one-event lines: each line is a record of its own."""
        log = self.log
        assert log is not None
        first, rec, n = len(log._types), len(log._rec_start), len(run.events)
        # (`fromlist`: an array converts each item once, where `extend` converts it twice)
        log._rec_start.fromlist(run.offsets)
        log._rec_length.fromlist(run.lengths)
        log._event_record.fromlist(list(range(rec, rec + n)))
        self._keep(run.events, run.end)
        # each seq its index and each type a string: the scan checked an artifact's run; a fixture's is checked here
        if run.events[0]["seq"] == first and (run.indexed or _indexed(run.events, first)):
            self._take_indexed(run.events, run.location)
        else:
            self._take_each(run.events, run.location)
        self._note_time(run.events)

    def _take_record(self, record: Record) -> None:
        """A record read on its own: one line, a packed row of several events, or a SQLite row."""
        log = self.log
        assert log is not None
        rec, events = len(log._rec_start), record.events
        log._rec_start.append(record.start)
        log._rec_length.append(record.length)
        log._event_record.extend(repeat(rec, len(events)))
        self._keep(events, record.start + record.length)
        if _indexed(events, len(log._types)):
            self._take_indexed(events, lambda i: record.location)
        else:
            self._take_each(events, lambda i: record.location)
        self._note_time(events)

    def _take_copies(self, copies: RepeatedLines, counted: dict[str, int] | None) -> dict[str, int] | None:
        """Copies of the line just read, each a record of its own. Each goes through every rule until one
        says only what the copy before it said, all of it past the findings listed; then, if no rule reads
        an event of its type (no running fact moves on), the rest say it too, counted at once. Copies that
        go on from copies just counted (each saying `counted`) are counted at once. Returns what each copy
        counted said, or None if they were read one by one."""
        if counted is not None:
            self._count_copies(copies, 0, counted)
            return counted
        findings = self.diagnostics
        said: dict[str, int] | None = None
        for i, record in enumerate(copies.records()):
            before = findings.counts()
            self._take_record(record)
            after = findings.counts()
            saying = {code: n - before.get(code, 0) for code, n in after.items() if n != before.get(code, 0)}
            if saying == said and all(after[code] > FINDINGS_LISTED for code in saying):
                kind = record.events[0].get("type")
                if (type(kind) is not str or kind not in _RULED_TYPES) and record.events[0].get(
                    "ignorable"
                ) is not True:
                    self._count_copies(copies, i + 1, saying)
                    return saying
            said = saying
        return None

    def _count_copies(self, copies: RepeatedLines, taken: int, saying: dict[str, int]) -> None:
        """The copies from the `taken`-th on, into the index, each saying `saying` (code → findings)."""
        log = self.log
        assert log is not None
        records = islice(copies.records(), taken, None)
        while log._kept is not None and taken < copies.count:  # a kept event is a parsed one: read while kept
            self._take_record(next(records))
            taken += 1
        n, stride = copies.count - taken, copies.stride
        if n <= 0:
            return
        start, rec = copies.offset + taken * stride, len(log._rec_start)
        types, by_event, starts, lengths = log._repeating()
        first = len(types)
        if log._copies and sum(log._copies[-1]) == first:  # the last batch's copies go on
            log._copies[-1] = (log._copies[-1][0], log._copies[-1][1] + n)
        else:
            log._copies.append((first, n))
        starts.add_run(start, stride, n)
        lengths.add_run(copies.length, None, n)
        by_event.add_run(rec, 1, n)
        types.add_run(types[-1], None, n)
        for code, each in saying.items():
            self.diagnostics.count_more(code, each * n)

    def _keep(self, events: list[dict[str, Any]], end: int) -> None:
        """Keep `events` as parsed (their records end at byte `end` of the log's text) while the log's records
        stay within `keep_bytes`."""
        log = self.log
        assert log is not None
        if log._kept is None:
            return
        if end > self.keep_bytes:
            log._kept = None
        else:
            log._kept.extend(events)

    def _note_time(self, events: list[dict[str, Any]]) -> None:
        """The time of the last event read with an integer one: crash closers are stamped with it."""
        for event in reversed(events):
            if isinstance(event.get("time"), int):
                self.last_time = event["time"]
                return

    def _take_each(self, events: list[dict[str, Any]], where: Callable[[int], Location]) -> None:
        """Events of any shape, each through every rule; `where(i)` locates the i-th."""
        for i, event in enumerate(events):
            self._take(event, where(i), self.fold, synthetic=False)

    def _take_indexed(self, events: list[dict[str, Any]], where: Callable[[int], Location]) -> None:
        """Events whose seqs are their indexes (ints) and whose types are strings; `where(i)` locates the i-th.

        Nearly every event is plain: type, seq, time (a safe integer) and data and nothing else, of a
        type no rule but the envelope's looks at; or a current surface event (see `_current_message`).
        Either passes every rule as it is, so only what it moves on is done here, with the rules'
        cheapest tests first; any other event goes through `_take` and the rules themselves.
        """
        log = self.log
        assert log is not None
        types, fold, invariants = log._types, self.fold, self.invariants
        append, follow = types.append, self._follow
        for i, event in enumerate(events):
            kind = event["type"]
            time = event.get("time")
            if type(time) is not int or abs(time) > MAX_SAFE_INTEGER or "data" not in event:
                self._take(event, where(i), fold, synthetic=False)  # an envelope for the rules to judge
                continue
            data = event["data"]
            if len(event) == 4:
                if kind == "assistant/chunk":  # half of a typical log: no index or tracking facts to keep
                    append(_KINDS[kind])
                    # the invariants' common case, asked without a call: a chunk of the open turn and step
                    quiet = (
                        type(data) is dict
                        and data.get("turn") == invariants.turn
                        and data.get("step") == invariants.step
                    )
                    if not quiet and (warnings := invariants.feed(event)):
                        self._warn(warnings, where(i))
                    continue
                if kind in _PLAIN_TYPES or (kind in _UPGRADABLE_PLAIN_TYPES and self._upgrade_keeps(event)):
                    append(_KINDS[kind])
                    if kind == "agent/inbox/spliced":
                        self._index_inbox(data, len(types) - 1)
                    if warnings := follow(kind, data, event, where, i):
                        self._warn(warnings, where(i))
                    continue
            elif kind in SURFACE_TYPES and (message := _current_message(event, kind, len(types))) is not None:
                seq = len(types)
                append(_KINDS[kind])
                self._index_message(kind, seq, message)
                fold.append(seq)
                log._surface_ops[seq] = "append"
                if warnings := follow(kind, data, event, where, i):
                    self._warn(warnings, where(i))
                continue
            self._take(event, where(i), fold, synthetic=False)

    def _upgrade_keeps(self, event: dict[str, Any]) -> bool:
        """Whether the legacy upgrade leaves `event` as it is (as it does every current one)."""
        if turn_is_current(event["type"], event["data"]):
            return True
        try:
            return upgrade_event(event, self.sid, self._message_id_at) is event
        except UpgradeError:
            return False

    def _warn(self, warnings: list[str], location: Location) -> None:
        self.diagnostics.extend(Diagnostic("invariant", "warning", w, location) for w in warnings)

    def _close(self) -> None:
        """Crash closers for an open final turn, in memory only, folded on a copy of the surface."""
        log = self.log
        assert log is not None
        surface = self.fold
        if self.tracker.open:
            surface = self.fold.copy()
            for event in self.tracker.closers(len(log._types), self.last_time):
                log._synthetic.append(event)
                self._take(event, Location(file=self.source.label), surface, synthetic=True)
        log._surface = list(surface.nodes)
        repairs = list(self.scan_repairs)
        if log._synthetic:
            names = ", ".join(e["type"] for e in log._synthetic)
            repairs.append(
                f"closed the open final turn in memory with {len(log._synthetic)} synthetic event(s): {names}"
            )
        log.verdict = self.verdict(repairs)

    def _drop_closers(self) -> None:
        log = self.log
        assert log is not None
        for event in log._synthetic:
            seq = event["seq"]
            for index in (log._message_ids, log._source_kinds, log._result_calls, log._surface_ops, log._shadowed_by):
                index.pop(seq, None)
            for entries in log._carriers.values():
                entries[:] = [s for s in entries if s != seq]  # (closers carry no inbox)
            log._ignorable.discard(seq)
        del log._types[len(log._event_record) :]
        log._synthetic.clear()

    def _take(self, event: dict[str, Any], location: Location, fold: SurfaceFold, *, synthetic: bool) -> None:
        """One event through every rule of docs/format.md §4.5 and §5, in dsh's order, then into the index."""
        log = self.log
        assert log is not None
        types = log._types
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
                event = upgrade_event(event, self.sid, self._message_id_at)
            except UpgradeError as exc:
                self.fail("upgrade", str(exc), location)
            kind = event.get("type") if isinstance(event.get("type"), str) else None
        shape = message_shape_problem(event)
        if shape:
            self.fail("message-shape", shape, location)
        if kind not in KNOWN_EVENT_TYPES and is_unknown_type(event):
            self.fail("unknown-type", lambda: unknown_type_message(event, self.sid), location, code="unknown-type")
        envelope = envelope_problem(event)
        if envelope is None and event.get("seq") != seq:
            envelope = f"event seq {event.get('seq')!r} is not its index {seq}"
        if envelope is None and kind == "request/header":
            envelope = request_header_problem(event.get("data"))
        if envelope:
            self.fail("validation", envelope, location)
        types.append(_KINDS.get(kind, kind) if isinstance(kind, str) else "")
        if event.get("ignorable") is True:  # (the fast paths take no event with more than their own keys)
            log._ignorable.add(seq)
        if kind in SURFACE_TYPES and shape is None:
            self._index_message(kind, seq, message_of(event))
            if envelope is None:
                self._fold(event, seq, fold, location)
        elif kind == "agent/inbox/spliced":
            self._index_inbox(event.get("data"), seq)
        if synthetic:
            return  # closers change no running state: the next read may append real events instead
        if warnings := self._follow(kind, event.get("data", ABSENT), event, lambda _: location, 0):
            self._warn(warnings, location)

    def _index_message(self, kind: str, seq: int, message: dict[str, Any]) -> None:
        """A well-shaped message: its identity, and the facts the transcript reads without decoding it."""
        log = self.log
        assert log is not None
        log._message_ids[seq] = message["id"]
        log._carriers.setdefault(message["id"], []).append(seq)
        if kind == "assistant/message" and not message["content"]:
            log._empty_assistant.add(seq)
        elif kind == "user/message":
            log._source_kinds[seq] = message["source"]["kind"]
        elif kind == "tool/result":
            log._result_calls[seq] = message["source"]["callId"]

    def _fold(self, event: dict[str, Any], seq: int, fold: SurfaceFold, location: Location) -> None:
        """A surface event with a valid envelope onto the surface."""
        log = self.log
        assert log is not None
        problem, shadowed = fold.apply(event, self._type_at, self._stored_at)
        if problem:
            self.fail("validation", problem, location, code="surface")
        else:
            op = event["surfaceOp"]
            log._surface_ops[seq] = "append" if op == "append" else (int(op["start"]), int(op["end"]))
            if shadowed:
                log._shadowed_by[seq] = shadowed

    def _index_inbox(self, data: Any, seq: int) -> None:
        """The messages an inbox splice inserts, each a carrier of its message id."""
        log = self.log
        assert log is not None
        for message in data.get("inserted", ()) if isinstance(data, dict) else ():
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                log._carriers.setdefault(message["id"], []).append(~seq)

    def _follow(
        self, kind: str | None, data: Any, event: dict[str, Any], where: Callable[[int], Location], i: int
    ) -> list[str]:
        """Move the running facts on by one real event (with this type and data, ABSENT for none; located
        by `where(i)`): the title, the open turn crash closers would close; returns what the writer
        invariants say of it."""
        if kind == "session/title" and isinstance(data, dict) and isinstance(data.get("title"), str):
            log = self.log
            assert log is not None
            log.title = data["title"]
        if kind in TRACKED_TYPES:
            error = self.tracker.follow(kind, data, event)
            if error:
                self.fail("closers", f'stored session "{self.sid}" failed validation: TypeError: {error}', where(i))
        if kind in WATCHED_TYPES:
            data = data if isinstance(data, dict) else {}
            return self.invariants.check(kind, data, event)
        return NONE

    # the index as the surface fold asks of earlier events
    def _type_at(self, seq: int) -> str | None:
        log = self.log
        assert log is not None
        types = log._types
        return types[seq] if 0 <= seq < len(types) else None

    def _stored_at(self, seq: int) -> dict[str, Any] | None:
        log = self.log
        assert log is not None
        return log.raw_event(seq) if 0 <= seq < len(log._types) else None

    def _message_id_at(self, seq: int) -> str | None:
        log = self.log
        assert log is not None
        return log._message_ids.get(seq)


def _indexed(events: list[dict[str, Any]], seq: int) -> bool:
    """Whether `events` are objects whose seqs are `seq`, `seq + 1`, ... (ints) and whose types are
    strings, as `_Reader._take_indexed` takes them."""
    for i, event in enumerate(events):
        if type(event) is not dict or type(event.get("seq")) is not int or event["seq"] != seq + i:
            return False
        if type(event.get("type")) is not str:
            return False
    return True


def _current_message(event: dict[str, Any], kind: str, seq: int) -> dict[str, Any] | None:
    """The message of a surface event at index `seq` (its seq; its time a safe integer) if the event passes
    every rule as it is: in today's shape, which the legacy upgrade leaves; with a well-formed message; with a
    plain envelope besides: `surfaceOp` "append" and `sourceEventSeqs`, if any, a list of distinct earlier seqs."""
    if event.get("surfaceOp") != "append":
        return None  # a replace: the fold judges it
    data = event["data"]
    if type(data) is not dict:
        return None
    message = (data if "id" in data else None) if kind == "user/message" else data.get("message")
    if message is None:
        return None  # maybe a legacy shape: the upgrade decides
    if len(event) == 6:  # type, seq, time, data, surfaceOp and one more: it must be sourceEventSeqs
        if not _cites_earlier(event.get("sourceEventSeqs"), seq):
            return None
    elif len(event) != 5:
        return None
    return message if message_problem(kind, message) is None else None


def _cites_earlier(cited: Any, seq: int) -> bool:
    """Whether `sourceEventSeqs` is a non-empty, strictly increasing list of ints from 0 to below `seq`,
    as dsh writes it: then valid. (The rule allows any order of distinct seqs; others go the long way.
    One pass in Python is cheaper here than several in C over such short lists.)"""
    if type(cited) is not list or not cited:
        return False
    last = -1
    for s in cited:
        if type(s) is not int or s <= last:
            return False
        last = s
    return last < seq


def _carrier(source: SessionSource, mode: str) -> Carrier:
    if source.kind == "jsonl" and mode == "fixture":
        return "fixture"
    return source.kind


def load_session(
    source: SessionSource, *, events: int | None = None, limits: ReadLimits = DEFAULT_LIMITS, keep_bytes: int = 0
) -> SessionLog:
    """Read one session log within `limits`, or only its first `events` events (`partial`: no verdict, for
    a first screen that must not wait for a long log). A log whose records are at most `keep_bytes` long keeps
    its events as parsed, for a reader that will ask for every one again. Raises NotASessionLog for input that
    is not one."""
    return _Reader(source, limits, keep_bytes).read(events)


def load_one(path: str) -> SessionLog:
    """The one session log at `path` (a file, or a folder or store holding exactly one), read whole.
    Raises ValueError saying where: a path that cannot be read, one that holds no log or several, or
    input that is not a session log."""
    try:
        found = discover([path])
    except UnreadablePath as exc:
        raise ValueError(str(exc)) from None
    if len(found.sources) != 1:
        held = f"holds {len(found.sources)} session logs" if found.sources else "holds no session log"
        reason = found.refused[0].reason if found.refused and not found.sources else None
        raise ValueError(f"{path}: {reason or held}; name one log file")
    try:
        return load_session(found.sources[0])
    except NotASessionLog as exc:
        raise ValueError(f"{path}: {exc.reason} ({exc.location.describe()})") from None
