"""What a storage scan yields: the header and a stream of located records."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal, final

from .diagnostics import Diagnostic, Findings, Location

RecordKind = Literal["events", "defect", "dropped", "pending"]


@dataclass(slots=True)
class Record:
    """One storage record (a JSONL line or a SQLite row) and what it decoded to.

    `events` records form the prefix dsh itself would load. `defect` records
    could not be decoded; `dropped` records decoded but lie in a tail dsh
    would drop; `pending` is a torn final line that may still be completed.
    `start`/`length` re-read the record later (byte range of the decoded
    text, or for SQLite the physical row's seq in `start`).
    """

    kind: RecordKind
    location: Location
    start: int
    length: int
    events: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None
    raw: bytes | None = None  # the undecodable bytes of a defect, capped


@final  # final so that a `type(x) is EventRun` test narrows both ways
@dataclass(slots=True)
class EventRun:
    """Consecutive complete JSONL lines that each hold one event continuing the log.

    Nearly every line of an artifact is one: a scan gathers them so that a reader
    need not build a Record and a Location per line. Line `first_line + i` holds
    `events[i]`, `lengths[i]` bytes from `offsets[i]` of the decoded text.
    """

    label: str
    first_line: int
    offsets: list[int]
    lengths: list[int]
    # each a dict, or where the reader asked for views (`JsonlScan.views`) the view of one (`lines` then set)
    events: list[Any]
    # each event's seq is its index and its type a string, as the scan checked (an artifact's run); a fixture's
    # run holds any object (its seq and time synthesized where it has none, §1.5), for every rule to judge
    indexed: bool = True
    lines: list[bytes] | None = None  # each line with its LF, where `events` may hold views: to parse one whole

    @property
    def end(self) -> int:
        """Where the line after the run begins."""
        return self.offsets[-1] + self.lengths[-1] + 1

    def location(self, i: int) -> Location:
        return Location(self.label, self.first_line + i, None, self.offsets[i])

    def records(self) -> Iterator[Record]:
        """The run as the Records it stands for, one per line."""
        for i, event in enumerate(self.events):
            yield Record("events", self.location(i), self.offsets[i], self.lengths[i], [event])

    def prefix(self, n: int) -> EventRun:
        """The run's first `n` lines."""
        return EventRun(
            self.label,
            self.first_line,
            self.offsets[:n],
            self.lengths[:n],
            self.events[:n],
            self.indexed,
            None if self.lines is None else self.lines[:n],
        )


@final
@dataclass(slots=True, frozen=True)
class RepeatedLines:
    """`count` complete fixture lines, each byte for byte the line before them: the same record `raw`
    (`length` bytes, a line of `stride` with its line feed), line `first_line + i` at `offset + i * stride`,
    its event given seq `first_seq + i` where it has none (§1.5).

    Two million `{}` lines are a few bytes of zstd: a scan counts a repeated line, not a Record per copy,
    and a reader that sees each copy would say the same of it takes them at once."""

    label: str
    first_line: int
    offset: int
    stride: int
    length: int
    raw: bytes
    first_seq: int
    count: int
    decode: Callable[[bytes, int], list[dict[str, Any]]]  # a copy's raw bytes and synthesized seq → its events

    def location(self, i: int) -> Location:
        return Location(self.label, self.first_line + i, None, self.offset + i * self.stride)

    def records(self) -> Iterator[Record]:
        """The copies as the Records they stand for, one per line, each decoded anew (a fixture's event is
        its own dict: its seq is its line's)."""
        for i in range(self.count):
            start = self.offset + i * self.stride
            yield Record("events", self.location(i), start, self.length, self.decode(self.raw, self.first_seq + i))

    def prefix(self, n: int) -> RepeatedLines:
        """The first `n` copies."""
        return replace(self, count=min(n, self.count))


class NotASessionLog(Exception):
    """The input is readable but is not a dsh session log at all."""

    def __init__(self, reason: str, location: Location) -> None:
        super().__init__(reason)
        self.reason = reason
        self.location = location


class HeaderlessLog(Exception):
    """A dsh artifact (a zstd log, a file named like one) with no complete header line:
    dsh refuses it ("empty or header-less session log"); it is a log, refused, not a stranger."""

    def __init__(self, reason: str, location: Location) -> None:
        super().__init__(reason)
        self.reason = reason
        self.location = location


@dataclass(slots=True)
class ScanState:
    """Facts a storage scan learns while its records stream past."""

    corruption: Diagnostic | None = None
    diagnostics: Findings = field(default_factory=Findings)
    repairs: list[str] = field(default_factory=list)

    def told(self) -> int:
        """How many findings and repairs the scan has told so far."""
        return self.diagnostics.told() + len(self.repairs)

    def corrupt(self, code: str, message: str, location: Location) -> None:
        diag = Diagnostic(code, "error", message, location)
        self.diagnostics.append(diag)
        if self.corruption is None:
            self.corruption = diag
