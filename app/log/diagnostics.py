"""Located findings about a log: every defect a reader meets becomes one of these."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal, NamedTuple

Severity = Literal["error", "warning", "info"]


class Location(NamedTuple):
    """Where in the user's input a finding sits.

    `file` names the file, or `archive!member` inside a ZIP; `line` is 1-based
    within the (decoded) JSONL text; `row` is a SQLite physical `seq`; `offset`
    is a byte offset into the decoded text (JSONL) or the file (zstd framing).
    """

    file: str | None = None
    line: int | None = None
    row: int | None = None
    offset: int | None = None

    def describe(self) -> str:
        parts = [self.file or "<input>"]
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.row is not None:
            parts.append(f"row seq {self.row}")
        if self.offset is not None:
            parts.append(f"byte {self.offset}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    location: Location

    def to_json(self) -> dict[str, object]:
        loc = self.location
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": loc.file,
            "line": loc.line,
            "row": loc.row,
            "offset": loc.offset,
        }


# Findings of one code that a reader keeps. A log of a million bad lines would make a million findings, and
# a page a row for each: past these, findings are counted, and one more says how many and from where.
FINDINGS_LISTED = 1000
UNLISTED = "unlisted"


class Findings(list[Diagnostic]):
    """A reader's diagnostics: the first FINDINGS_LISTED of each code, in order; the rest counted in
    `unlisted` and told by `settle`."""

    def __init__(self, items: Iterable[Diagnostic] = ()) -> None:
        super().__init__()
        self._counts: dict[str, int] = {}
        self.unlisted: dict[str, tuple[int, Location]] = {}  # code → how many went unlisted, and the first's place
        self.extend(items)

    def append(self, item: Diagnostic, /) -> None:
        if self.listing(item.code):
            self._counts[item.code] = self._counts.get(item.code, 0) + 1
            super().append(item)
        else:
            self.count_one(item.code, item.location)

    def listing(self, code: str) -> bool:
        """Whether the next finding of `code` is listed; past FINDINGS_LISTED it is counted (`count_one`)."""
        return self._counts.get(code, 0) < FINDINGS_LISTED

    def count_one(self, code: str, location: Location) -> None:
        """One more finding of `code` past those listed, at `location`."""
        self._counts[code] += 1
        unlisted, first = self.unlisted.get(code, (0, location))
        self.unlisted[code] = (unlisted + 1, first)

    def extend(self, items: Iterable[Diagnostic], /) -> None:
        for item in items:
            self.append(item)
        if isinstance(items, Findings):  # what another reader counted and did not keep
            for code, (n, first) in items.unlisted.items():
                unlisted, earlier = self.unlisted.get(code, (0, first))
                self.unlisted[code] = (unlisted + n, earlier)
                self._counts[code] = self._counts.get(code, 0) + n

    def counts(self) -> dict[str, int]:
        """How many findings of each code were told, listed or not."""
        return dict(self._counts)

    def told(self) -> int:
        """How many findings were told, listed or not."""
        return sum(self._counts.values())

    def count_more(self, code: str, n: int) -> None:
        """`n` more unlisted findings of `code`, a code with unlisted findings already (said just as each
        of its last was: the first unlisted one stays the place named)."""
        unlisted, first = self.unlisted[code]
        self.unlisted[code] = (unlisted + n, first)
        self._counts[code] += n

    def drop(self, codes: Collection[str]) -> None:
        """Forget every finding of these codes, listed or counted (a reading on of a growing log says them anew)."""
        self[:] = [d for d in self if d.code not in codes]
        for code in codes:
            self._counts.pop(code, None)
            self.unlisted.pop(code, None)

    def settle(self) -> None:
        """One finding for each code with findings unlisted, in place of any said before."""
        self[:] = [d for d in self if d.code != UNLISTED]
        for code, (n, first) in self.unlisted.items():
            where = f"line {first.line:,}" if first.line is not None else first.describe()
            if first.row is not None:
                where = f"row seq {first.row:,}"
            message = (
                f"{n:,} more {code} findings, from {where} on, are not listed: a session lists the first "
                f"{FINDINGS_LISTED:,} of each kind"
            )
            super().append(Diagnostic(UNLISTED, "info", message, first))
