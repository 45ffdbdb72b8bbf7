"""Located findings about a log: every defect a reader meets becomes one of these."""

from __future__ import annotations

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
