"""What a storage scan yields: the header and a stream of located records."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
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
    events: list[dict[str, Any]]

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
        return EventRun(self.label, self.first_line, self.offsets[:n], self.lengths[:n], self.events[:n])


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

    def corrupt(self, code: str, message: str, location: Location) -> None:
        diag = Diagnostic(code, "error", message, location)
        self.diagnostics.append(diag)
        if self.corruption is None:
            self.corruption = diag
