"""A session's transcript as the pages show it (docs/format.md §5.5): rows and anchors built once per
file version, and where any window of them lies (docs/product.md Budgets, windowing). No web framework: the
cross-session search indexes read it too; the web layer's `windows` makes and renders its rows' views.

A run row (`Row.count`) opens to show its rows in pages of the window's size (`Transcript.run_paging`); an
anchor of a row inside it opens the window with the run, the run opened at that row (`Transcript.run_at`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from ..forms.jsformat import compact_json
from ..history.message_handles import message_anchor
from ..history.readable import ReadableLog
from ..history.session import SessionLog
from ..history.transcript import Row, transcript_rows
from ..log.diagnostics import Diagnostic
from .caches import Latest

WINDOWS_KEPT = 4  # rendered windows kept per session version: the latest scrolled to (the first: `kept`)
KEPT = 8  # other derived values kept per session version (`Transcript.kept`)
HEADS_KEPT = 4  # live tails' headers kept per session version, each of one registry version (`Transcript.heads`)
CONTEXT_ROWS = 5  # rows shown above a row a page is opened at, so the reader sees what led to it
END = "end"  # the anchor `?at=` takes for a session's last window
# the seq in a row's anchor (`seq-N`): ASCII digits, few enough for an int of any log (`"²".isdigit()` holds)
SEQ = re.compile(r"[0-9]{1,19}")

Paging = dict[str, int | None]  # from, to, totalRows, previousFrom, nextFrom


def led_to(index: int, size: int) -> int:
    """Where `size` rows shown for the one at `index` start: a few rows of what led to it before it, never so
    many that it falls outside them."""
    return max(0, index - min(CONTEXT_ROWS, size - 1))


@dataclass(frozen=True, slots=True)
class RunAt:
    """A row inside a run row: the run's row index, and the row's place among the run's rows."""

    index: int
    offset: int

    def opening(self, size: int) -> int:
        """Where the page of `size` of the run's rows opened at this row starts (`led_to`)."""
        return led_to(self.offset, size)


# language, first row, the row it stops before (or None), direction, and the run opened at an anchor in it
WindowKey = tuple[str, int, int | None, str, RunAt | None]


@dataclass(frozen=True, slots=True)
class Transcript:
    """A session's rows and their anchors, built once per file version."""

    log: SessionLog
    readable: ReadableLog  # what the rows read their events from: the log, and the records after a defect
    rows: list[Row]
    anchors: list[str]
    positions: dict[str, int]  # each anchor's row index
    # rendered windows of this very version, so they go when the transcript does
    # Rendering a window decodes its events and runs every row template; keeping the result makes a long
    # session's first screen cost what a one-turn session's does (docs/product.md Budgets, windowing;
    # docs/decisions/0005-performance-budgets.md)
    windows: Latest[WindowKey, tuple[Markup, Paging]] = field(
        default_factory=lambda: Latest(WINDOWS_KEPT), compare=False, repr=False
    )
    # what else the web layer derives from this very version (a live tail's row signatures, the header it sends),
    # kept for as long: forty tails opened at once on a long session walk its rows once, not forty times
    kept: Latest[Hashable, Any] = field(default_factory=lambda: Latest(KEPT), compare=False, repr=False)
    # the header a live tail sends, which names other sessions and so is made again at each registry version:
    # kept apart, as a run of uploads (each a version) had pushed the first screen and the row signatures out of
    # `kept`, and every tail started meanwhile rendered them again
    heads: Latest[Hashable, str] = field(default_factory=lambda: Latest(HEADS_KEPT), compare=False, repr=False)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every finding about the log, one per diagnostic row, in page order (what the header counts)."""
        return [row.diagnostic for row in self.rows if row.diagnostic is not None]

    @property
    def cwd(self) -> str | None:
        """The session's working directory, which rows show paths against."""
        header = self.log.header
        return header.cwd if header else None

    def run_events(self, run: Row) -> Iterator[tuple[int, str]]:
        """Each event of run row `run`: its seq and its JSON on one line, as its own row's detail holds it
        (`JSON.stringify`, unindented). A one-file export lists a run so, as it has no server to page the
        run's rows from and a row view per event would make a log of a million like events a hang."""
        for seq, event in zip(run.seqs, self.readable.raw_events(run.seqs), strict=True):
            yield seq, compact_json(event)

    def rows_at(self, seq: int) -> range:
        """The indexes of the rows anchored at `seq`: its event's row, after the findings placed right before it."""
        i = bisect_left(self.rows, seq, key=lambda row: row.seq)  # rows are in seq order
        j = bisect_right(self.rows, seq, lo=i, key=lambda row: row.seq)
        return range(i, j)

    def index_at(self, at: str) -> int | None:
        """The row index anchor `at` names (`end`: the last row; a row inside a run: the run's); None when
        no row has it."""
        if at == END:
            return len(self.rows) - 1 if self.rows else None
        index = self.positions.get(at)
        if index is None and (inside := self.run_at(at)) is not None:
            return inside.index
        return index

    def opening(self, at: str, size: int) -> int | None:
        """Where the window a page opened at anchor `at` shows starts: `end` opens the last window, a row's
        anchor the window that shows it after a few rows of what led to it; None when no row has `at`."""
        if at == END:
            return max(0, len(self.rows) - size)
        index = self.index_at(at)
        return None if index is None else led_to(index, size)

    def run_at(self, at: str) -> RunAt | None:
        """The run row holding the row anchor `at` names (`seq-N`, `outside-N`), and where in it; None when
        no run does."""
        prefix, _, number = at.partition("-")
        if prefix not in ("seq", "outside") or not SEQ.fullmatch(number):
            return None
        inside = self.run_holding(int(number))
        return inside if inside is not None and self.rows[inside.index].key.startswith(prefix + "-") else None

    def run_holding(self, seq: int) -> RunAt | None:
        """The run row whose events include `seq`, and where in it; None when no run's do."""
        i = bisect_right(self.rows, seq, key=lambda row: row.seq) - 1  # the last row anchored at or before it
        while i >= 0 and self.rows[i].kind == "diagnostic":  # findings at a run's first seq come before it
            i -= 1
        if i < 0 or self.rows[i].count == 1 or seq not in self.rows[i].seqs:
            return None
        return RunAt(i, seq - self.rows[i].seq)

    def run_paging(self, index: int, first: int, count: int, size: int) -> Paging:
        """Where a page of `count` of run row `index`'s rows at its row `first` lies among the run's rows, and
        where its neighbours start."""
        total = self.rows[index].count
        end = first + count
        return {
            "from": first,
            "to": end,
            "totalRows": total,
            "previousFrom": max(0, first - size) if first > 0 else None,
            "nextFrom": end if end < total else None,
        }

    def paging(self, start: int, count: int, size: int) -> Paging:
        """Where a window of `count` rows at `start` lies, and where its neighbours start."""
        end = start + count
        return {
            "from": start,
            "to": end,
            "totalRows": len(self.rows),
            "previousFrom": max(0, start - size) if start > 0 else None,
            "nextFrom": end if end < len(self.rows) else None,
        }


def build_transcript(log: SessionLog) -> Transcript:
    readable, rows = transcript_rows(log)
    anchors = [anchor_of(row) for row in rows]
    return Transcript(log, readable, rows, anchors, {anchor: i for i, anchor in enumerate(anchors)})


def anchor_of(row: Row) -> str:
    """`msg-{id}` for a row that stands for a message (`~n` for a repeated id; a long id by its handle), else
    its key (docs/product.md Interfaces)."""
    if row.message is None:
        return row.key
    return message_anchor(row.message, row.occurrence)
