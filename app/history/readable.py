"""Everything a session log lets a reader see (docs/product.md "Reading": nothing is dropped silently).

dsh's view of the log (its events, crash closers included) comes first; after it, the
readable events of the records dsh would not load (those after a defect), numbered on
from the log's own events, so the transcript shows them as the rows they are, marked
outside dsh's view, instead of hiding them. Every finding has a place among them.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from ..log.diagnostics import Location
from ..model.rules import SURFACE_TYPES, UpgradeError, message_of, message_shape_problem, upgrade_event
from ..model.values import Event
from .session import SessionLog, SurfaceOp, TailRecord, to_event


class _Joined(Sequence[str]):
    """Two lists read as one, without copying the long one."""

    def __init__(self, head: Sequence[str], rest: Sequence[str]) -> None:
        self.head, self.rest = head, rest

    def __len__(self) -> int:
        return len(self.head) + len(self.rest)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]  # by index only: no slices are taken
        n = len(self.head)
        return self.head[i] if i < n else self.rest[i - n]

    def __iter__(self) -> Iterator[str]:
        yield from self.head
        yield from self.rest


V = TypeVar("V")


class _Overlay(Mapping[int, V]):
    """The outside events' facts over the log's own, without copying the log's."""

    def __init__(self, outside: dict[int, V], own: Mapping[int, V]) -> None:
        self.outside, self.own = outside, own

    def __getitem__(self, seq: int) -> V:
        return self.outside[seq] if seq in self.outside else self.own[seq]

    def __iter__(self) -> Iterator[int]:
        yield from self.own
        yield from self.outside

    def __len__(self) -> int:
        return len(self.own) + len(self.outside)


class _Either(Container[int]):
    """Membership in either of two sets, without copying them."""

    def __init__(self, a: Container[int], b: Container[int]) -> None:
        self.a, self.b = a, b

    def __contains__(self, x: object) -> bool:
        return x in self.a or x in self.b


class ReadableLog:
    """A session's readable events: the log's own, then those of the records dsh would not load.

    The transcript and every view of its rows read through this one type; the log itself
    (`log`) keeps the header, the verdict and the diagnostics.
    """

    def __init__(
        self,
        log: SessionLog,
        events: list[dict[str, Any]],
        records: list[TailRecord],
        reasons: list[str],
        unreadable: dict[Location, str],
    ) -> None:
        self.log = log
        self._events = events
        self._records = records  # each outside event's record
        self.unreadable: Mapping[Location, str] = unreadable  # dropped records that failed to read again → why
        first = log.event_count
        # the log's own list when nothing lies outside dsh's view: the transcript reads a type per event
        outside = [e["type"] if isinstance(e.get("type"), str) else "" for e in events]
        self.types: Sequence[str] = _Joined(log.types, outside) if outside else log.types
        ids: dict[int, str] = {}
        kinds: dict[int, str] = {}
        calls: dict[int, str] = {}
        empty: set[int] = set()
        ignorable = {first + i for i, event in enumerate(events) if event.get("ignorable") is True}
        for i, event in enumerate(events):
            if event.get("type") not in SURFACE_TYPES or message_shape_problem(event) is not None:
                continue
            seq, message = first + i, message_of(event)
            ids[seq] = message["id"]
            if event["type"] == "assistant/message" and not message["content"]:
                empty.add(seq)
            elif event["type"] == "user/message":
                kinds[seq] = message["source"]["kind"]
            elif event["type"] == "tool/result" and isinstance(message["source"].get("callId"), str):
                calls[seq] = message["source"]["callId"]
        self.message_ids: Mapping[int, str] = _Overlay(ids, log.message_ids) if ids else log.message_ids
        self.source_kinds: Mapping[int, str] = _Overlay(kinds, log.source_kinds) if kinds else log.source_kinds
        self.result_calls: Mapping[int, str] = _Overlay(calls, log.result_calls) if calls else log.result_calls
        self.empty_assistant: Container[int] = _Either(empty, log.empty_assistant) if empty else log.empty_assistant
        self.ignorable: Container[int] = _Either(ignorable, log.ignorable) if ignorable else log.ignorable
        self._reasons = {first + i: r for i, r in enumerate(reasons)}
        firsts: dict[Location, int] = {}  # an outside record → the seq of its first event
        for i, record in enumerate(records):
            firsts.setdefault(record.location, first + i)
        # each tail record with the first readable event at or after it, where its findings sit
        places: list[tuple[TailRecord, int]] = []
        next_first = self.event_count
        for t in reversed(log.tail):
            next_first = firsts.get(t.location, next_first)
            places.append((t, next_first))
        self._tail_places = places[::-1]

    @property
    def event_count(self) -> int:
        return len(self.types)

    def raw_event(self, seq: int) -> dict[str, Any]:
        first = self.log.event_count
        return self.log.raw_event(seq) if seq < first else self._events[seq - first]

    def raw_events(self, seqs: range) -> Iterator[dict[str, Any]]:
        """`raw_event` of each of `seqs` (consecutive), the log's read a stretch at a time."""
        first = self.log.event_count
        yield from self.log.raw_events(range(seqs.start, min(seqs.stop, first)))
        yield from self._events[max(seqs.start, first) - first : max(seqs.stop, first) - first]

    def event(self, seq: int) -> Event:
        first = self.log.event_count
        return self.log.event(seq) if seq < first else to_event(self._events[seq - first])

    def surface_op(self, seq: int) -> SurfaceOp | None:
        """How event `seq` joined dsh's surface; None for one that did not (or lies outside dsh's view)."""
        return self.log.surface_ops.get(seq)

    def outside(self, seq: int) -> str | None:
        """Why dsh would not load event `seq`; None for its own events."""
        return self._reasons.get(seq)

    def location_of(self, seq: int) -> Location:
        """Where event `seq` was read from: its record's byte offset (its row, in SQLite), or, for one
        outside dsh's view, the record after a defect it lies in; an in-memory closer has only the file."""
        first = self.log.event_count
        return self.log.location_of(seq) if seq < first else self._records[seq - first].location

    def place_of(self, location: Location) -> int:
        """Where a located finding sits among the events: the seq of the first event at or after it.

        A record's start is a byte offset of the decoded text (JSONL), or a SQLite row's physical
        seq; a finding locates itself the same way. What the reader read past (a defect, records
        dsh drops, a pending line) sits after every event of dsh's view, in-memory closers included.
        """
        key = location.row if location.row is not None else location.offset if location.line is not None else None
        if key is None:
            # a byte offset with no line is a compressed file's own (its framing), not a place in
            # the text: framing problems end the readable text; a finding about the whole file leads
            return self.event_count if location.offset is not None else 0
        found = self.log.event_at(key)
        if found is not None:
            return found
        return next((first for t, first in self._tail_places if key < t.start + max(t.length, 1)), self.event_count)


def readable_log(log: SessionLog) -> ReadableLog:
    """`log` with the readable events of the records dsh would drop after a defect."""
    reason = _outside_reason(log)
    sid = log.header.id if log.header and log.header.id else ""
    events: list[dict[str, Any]] = []
    records: list[TailRecord] = []
    reasons: list[str] = []
    unreadable: dict[Location, str] = {}
    for t in log.tail:
        if t.kind != "dropped":
            continue
        try:
            raws = log.reread(t)
        except (OSError, ValueError) as exc:  # the file changed under us since it was read
            unreadable[t.location] = str(exc) or type(exc).__name__
            continue
        for raw in raws:
            try:
                events.append(upgrade_event(raw, sid, log.message_ids.get))  # as dsh would read it, had it read on
            except UpgradeError:
                events.append(raw)
            records.append(t)
            reasons.append(t.reason or reason)
    return ReadableLog(log, events, records, reasons, unreadable)


def _outside_reason(log: SessionLog) -> str:
    defect = next((t for t in log.tail if t.kind == "defect"), None)
    after = f"after the defective record at {_where(defect.location)}" if defect else "after a defect"
    if log.verdict.category in ("refused", "unsupported"):
        return f"{after}; dsh refuses the whole log"
    return f"{after}; dsh drops it with the rest of the log's tail"


def _where(location: Location) -> str:
    """A place in the log, without the file every row of the page shares."""
    if location.line is not None:
        return f"line {location.line}"
    return f"row seq {location.row}" if location.row is not None else location.describe()
