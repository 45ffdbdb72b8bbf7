"""Reading one session log end to end: dsh's exact verdict and a forgiving, indexed view of everything readable
(docs/product.md "Reading"). A read session (`SessionLog`) holds its header, verdict and findings, and an index
to every event, from which events are decoded again on demand, read again from storage, and found by message
id. The verdict pipeline that reads a log and writes that index is `reading.Reader`, the only writer of its
private fields; `load_session` and `load_one` run it.
"""

from __future__ import annotations

import math
import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal

from cachetools import LRUCache

from ..log.diagnostics import Diagnostic, Location
from ..log.plaintext import DEFAULT_LIMITS, ReadLimits
from ..log.records import NotASessionLog
from ..log.sources import (
    JsonlSessionScan,
    RecordChanged,
    SessionScan,
    SessionSource,
    UnreadablePath,
    discover,
)
from ..model.frozen import freeze
from ..model.messages import freeze_message
from ..model.payloads import decode_payload
from ..model.rules import (
    DSH_RELEASE,
    SURFACE_TYPES,
    UPGRADED_TYPES,
    UpgradeError,
    decode_source_event_seqs,
    message_of,
    message_shape_problem,
    upgrade_event,
)
from ..model.values import Event, Header, Message
from .repeating import Repeating

if TYPE_CHECKING:
    from .reading import Reader

Category = Literal["accepted", "repaired", "refused", "unsupported"]
Carrier = Literal["jsonl", "jsonl-zstd", "sqlite", "zip", "fixture"]
REREAD_SPAN = 1 << 16  # the most bytes of lines `SessionLog.raw_events` reads at once
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

    def to_json(self) -> dict[str, Any]:
        """The verdict as `check --json` and a session's JSON twin give it, with the dsh release it is of."""
        return {
            "category": self.category,
            "accepted": self.accepted,
            "reason": self.reason,
            "location": self.location.describe() if self.location else None,
            "repairs": list(self.repairs),
            "dsh": DSH_RELEASE,
        }


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
        "_step_pairs",
        "_step_seqs",
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
        self._reader: Reader | None = None
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
        # the turn and step of each step/start the read took in stride (most of them), so a step index need not
        # read them again: its seq, and turn << 32 | step (an array: a 100 MiB log has some 70,000 steps)
        self._step_seqs: array[int] = array("Q")
        self._step_pairs: array[int] = array("Q")
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
        self._decoded: LRUCache[int, Event] = LRUCache(EVENTS_KEPT)  # stored seq → its event
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

    def step_pairs(self) -> Iterator[tuple[int, int, int]]:
        """(seq, turn, step) of the step/starts whose turn and step the read kept, in seq order; any other
        step/start names them only in its stored event."""
        for seq, pair in zip(self._step_seqs, self._step_pairs, strict=True):
            yield seq, pair >> 32, pair & 0xFFFFFFFF

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
                    lines = scan.reread_lines(starts[rec:stop], lengths[rec:stop], range(seq, seq + stop - rec))
                for events in lines:
                    yield self._line_event(events, seq, sid or "")
                    seq += 1
        yield from map(self.raw_event, range(seq, seqs.stop))

    def raw_events_at(self, seqs: Iterable[int]) -> Iterator[dict[str, Any]]:
        """`raw_event` of each of `seqs` (ascending, scattered), where each is a line of its own read a stretch
        of up to REREAD_SPAN bytes at a time: a comparison or a step index reads every message or step start of
        a long log, each otherwise a read, a frame's lookup and a parse of its own."""
        records, scan, real = self._event_record, self._scan, len(self._event_record)
        sid = self.header.id if self.header and self.header.id else ""
        if self._kept is not None or not isinstance(scan, JsonlSessionScan):
            yield from map(self.raw_event, seqs)
            return
        starts, lengths, copies = self._rec_start, self._rec_length, self._copies
        stretch: list[int] = []  # seqs of lines of their own, read together

        def alone(seq: int) -> bool:  # the one event of its line, and no copy counted with others
            rec = records[seq]
            return (
                (seq == 0 or records[seq - 1] != rec)
                and (seq + 1 == real or records[seq + 1] != rec)
                and not (copies and self._copies_at(seq, seq + 1)[0])  # (most logs count no copies)
            )

        def read(stretch: list[int]) -> Iterator[dict[str, Any]]:
            recs = [records[seq] for seq in stretch]
            with self._decoding(stretch[0]):
                lines = scan.reread_lines([starts[r] for r in recs], [lengths[r] for r in recs], stretch)
            for seq, events in zip(stretch, lines, strict=True):
                yield self._line_event(events, seq, sid)

        for seq in seqs:
            if seq < real and alone(seq):
                if stretch and starts[records[seq]] - starts[records[stretch[0]]] > REREAD_SPAN:
                    yield from read(stretch)
                    stretch = []
                stretch.append(seq)
                continue
            if stretch:
                yield from read(stretch)
                stretch = []
            yield self.raw_event(seq)
        if stretch:
            yield from read(stretch)

    def _line_event(self, events: list[dict[str, Any]], seq: int, sid: str) -> dict[str, Any]:
        """Event `seq`, the one event a line read again decoded to, upgraded as `raw_event` upgrades it; a line
        that now holds other events than were read there is a RecordChanged."""
        if len(events) != 1 or not _read_as(events[0], self._types[seq]):
            raise RecordChanged(self.location_of(seq), "the record holds other events than were read there")
        try:
            return upgrade_event(events[0], sid, self._message_ids.get)
        except UpgradeError:
            return events[0]

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
            return found
        event = to_event(self.raw_event(seq))
        if self._rec_length[self._event_record[seq]] <= KEPT_RECORD_BYTES:
            with self._decoded_lock:
                self._decoded[seq] = event
        return event

    @contextmanager
    def keeping_decoded(self, most: int) -> Iterator[None]:
        """Up to `most` decoded events kept while a reader that asks for every event twice is at work (the
        one-file export: its facts, then its rows), so each is decoded once; then the usual few again."""
        with self._decoded_lock:
            self._decoded = LRUCache(max(most, EVENTS_KEPT))
        try:
            yield
        finally:
            with self._decoded_lock:
                self._decoded = LRUCache(EVENTS_KEPT)

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
    data = frozen.get("data")
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
        data=data,
        payload=decode_payload(kind, data),
        surface_op=frozen.get("surfaceOp"),
        source_event_seqs=seqs,
        ignorable=raw.get("ignorable") is True,
        message=message,
        synthetic=synthetic,
        raw=frozen,
    )


def load_session(
    source: SessionSource, *, events: int | None = None, limits: ReadLimits = DEFAULT_LIMITS, keep_bytes: int = 0
) -> SessionLog:
    """Read one session log within `limits`, or only its first `events` events (`partial`: no verdict, for
    a first screen that must not wait for a long log). A log whose records are at most `keep_bytes` long keeps
    its events as parsed, for a reader that will ask for every one again. Raises NotASessionLog for input that
    is not one."""
    from .reading import Reader  # the pipeline writes the log this module declares: imported once it is

    return Reader(source, limits, keep_bytes).read(events)


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
