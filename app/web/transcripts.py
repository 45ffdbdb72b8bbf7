"""A session's transcript as the pages show it (FORMAT.md §5.5): rows and anchors built once per
file version, windows of rows rendered once, the first screen of a long log from a prefix of it
(PRODUCT.md Budgets, windowing).

Every router that shows rows (the session page, its JSON twin, show-all bodies, the live
tail, the export) reads them from here. A run row (`Row.count`) opens to show its rows in pages
of the window's size (`Transcript.run_window`); an anchor of a row inside it opens the window
with the run, the run opened at that row (`Transcript.run_at`).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

from markupsafe import Markup

from ..forms.jsformat import compact_json
from ..history.message_handles import message_anchor
from ..history.readable import ReadableLog
from ..history.session import SessionLog
from ..history.transcript import Row, run_rows, transcript_rows
from ..log.diagnostics import Diagnostic
from .archive import media_of
from .caches import Latest
from .registry import Entry
from .rows import RowView, row_view
from .search import SearchIndex, row_searchable, search_index
from .state import WebState, session_url
from .strings import Strings

WINDOWS_KEPT = 4  # rendered windows kept per session version: the first screen and the latest scrolled to
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
    # session's first screen cost what a one-turn session's does (PRODUCT.md Budgets, windowing;
    # docs/decisions/0005-performance-budgets.md)
    windows: Latest[WindowKey, tuple[Markup, Paging]] = field(
        default_factory=lambda: Latest(WINDOWS_KEPT), compare=False, repr=False
    )

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every finding about the log, one per diagnostic row, in page order (what the header counts)."""
        return [row.diagnostic for row in self.rows if row.diagnostic is not None]

    @property
    def cwd(self) -> str | None:
        """The session's working directory, which rows show paths against."""
        header = self.log.header
        return header.cwd if header else None

    def view(self, i: int) -> RowView:
        """The view of row `i` at its anchor."""
        return row_view(self.readable, self.rows[i], self.cwd, self.anchors[i])

    def views(self, start: int, stop: int) -> list[RowView]:
        return [self.view(i) for i in range(start, min(stop, len(self.rows)))]

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

    def views_at(self, seq: int) -> list[RowView]:
        """The views of the rows anchored at `seq` (`rows_at`); inside a run row, the view of its row there."""
        found = self.rows_at(seq)
        inside = None if found else self._run_holding(seq)
        if inside is not None:
            return self.run_window(inside.index, inside.offset, 1)[0]
        return [self.view(i) for i in found]

    def window(self, start: int, size: int, stop: int | None = None) -> tuple[list[RowView], Paging]:
        """The views of the `size` rows from `start` (moved inside the transcript), no further than `stop`
        (an earlier window ends where the one after it begins), and their paging."""
        first = max(0, min(start, max(len(self.rows) - 1, 0)))
        views = self.views(first, first + size if stop is None else min(stop, first + size))
        return views, self.paging(first, len(views), size)

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
        inside = self._run_holding(int(number))
        return inside if inside is not None and self.rows[inside.index].key.startswith(prefix + "-") else None

    def _run_holding(self, seq: int) -> RunAt | None:
        """The run row whose events include `seq`, and where in it; None when no run's do."""
        i = bisect_right(self.rows, seq, key=lambda row: row.seq) - 1  # the last row anchored at or before it
        while i >= 0 and self.rows[i].kind == "diagnostic":  # findings at a run's first seq come before it
            i -= 1
        if i < 0 or self.rows[i].count == 1 or seq not in self.rows[i].seqs:
            return None
        return RunAt(i, seq - self.rows[i].seq)

    def run_window(self, index: int, start: int, size: int, stop: int | None = None) -> tuple[list[RowView], Paging]:
        """The views of the `size` rows of run row `index` from its row `start`, no further than its row
        `stop` (an earlier page ends where the one after it begins), and their paging among the run's rows."""
        run = self.rows[index]
        first = max(0, min(start, run.count - 1))
        upto = first + size if stop is None else min(stop, first + size)
        cwd = self.cwd
        views = [row_view(self.readable, r, cwd, r.key) for r in run_rows(run, first, upto)]
        end = first + len(views)
        paging: Paging = {
            "from": first,
            "to": end,
            "totalRows": run.count,
            "previousFrom": max(0, first - size) if first > 0 else None,
            "nextFrom": end if end < run.count else None,
        }
        return views, paging

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
    its key (PRODUCT.md Interfaces)."""
    if row.message is None:
        return row.key
    return message_anchor(row.message, row.occurrence)


def transcript(state: WebState, entry: Entry) -> Transcript:
    """The entry's transcript at the log's current file version."""
    return state.registry.derived(entry.key, "transcript", build_transcript)


def rendered_window(
    state: WebState,
    entry: Entry,
    t: Transcript,
    strings: Strings,
    start: int,
    direction: str = "",
    stop: int | None = None,
    at: str = "",
) -> tuple[Markup, Paging]:
    """`rows/window.html` for the window at `start` (ending before `stop`, if given), and its paging:
    rendered once per file version. When anchor `at` names a row inside a run row, the run is shown
    open at the page of its rows that shows it (after a few rows of what led to it)."""
    size = state.settings.window_rows
    inside = t.run_at(at) if at else None

    def render() -> tuple[Markup, Paging]:
        views, paging = t.window(start, size, stop)
        opened = None
        if inside is not None:
            run_views, run_paging = t.run_window(inside.index, inside.opening(size), size)
            opened = (t.rows[inside.index].key, run_views, run_paging)
        return _window_html(state, entry, strings, views, paging, direction, opened), paging

    return t.windows.get((strings.lang, start, stop, direction, inside), render)


def rendered_run(
    state: WebState,
    entry: Entry,
    t: Transcript,
    strings: Strings,
    index: int,
    start: int,
    direction: str = "",
    stop: int | None = None,
) -> Markup:
    """`rows/run_page.html`: the page of run row `index`'s rows from its row `start` (ending before `stop`, if
    given), with loaders for the pages around it."""
    views, paging = t.run_window(index, start, state.settings.window_rows, stop)
    template = state.templates.env.get_template("rows/run_page.html")
    return Markup(
        template.render(
            t=strings,
            lang=strings.lang,
            rows=views,
            run=t.rows[index],
            base_url=session_url(entry.key),
            paging=paging,
            direction=direction,
            media=media_of(entry),
        )
    )


# A run opened at a row inside it: the run's key, and the views and paging of the page of its rows shown
OpenedRun = tuple[str, list[RowView], Paging]


def _window_html(
    state: WebState,
    entry: Entry,
    strings: Strings,
    views: list[RowView],
    paging: Paging,
    direction: str,
    opened: OpenedRun | None = None,
) -> Markup:
    template = state.templates.env.get_template("rows/window.html")
    return Markup(
        template.render(
            t=strings,
            lang=strings.lang,
            rows=views,
            base_url=session_url(entry.key),
            paging=paging,
            direction=direction,
            media=media_of(entry),
            opened_run=opened,
        )
    )


def searchables(state: WebState, entry: Entry, t: Transcript) -> SearchIndex:
    """Every row as search sees it, built once per file version (on the first search)."""
    return state.registry.derived(
        entry.key, "search", lambda _: search_index(row_searchable(t.readable, r) for r in t.rows)
    )


def first_window_paging(size: int) -> Paging:
    """The first window of a log not read whole: how many rows follow is not known yet."""
    return {"from": 0, "to": size, "totalRows": None, "previousFrom": None, "nextFrom": size}


def first_screen(state: WebState, entry: Entry, strings: Strings) -> tuple[SessionLog, Markup] | None:
    """A long log's first screen from a prefix of it, while it has not been read whole.

    Only rows anchored before the prefix's last `turn/end` are shown: everything such a
    row draws on (a result, a hook, a step's end) lies inside its turn, so it renders as
    the whole log would. The verdict and counts follow once the log is read (`/facts`).
    None when the log is read already, or too short for this to matter."""
    log = state.registry.first_screen(entry.key, state.settings.first_screen_events)
    if log is None or not log.partial:
        return None
    html = state.registry.derived_of(
        entry.key, f"first-screen:{strings.lang}", log, lambda prefix: _first_screen_html(state, entry, prefix, strings)
    )
    return None if html is None else (log, html)


def _first_screen_html(state: WebState, entry: Entry, log: SessionLog, strings: Strings) -> Markup | None:
    types = log.types
    last_turn_end = next((seq for seq in range(len(types) - 1, -1, -1) if types[seq] == "turn/end"), None)
    size = state.settings.window_rows
    t = build_transcript(log)
    settled = [row for row in t.rows if last_turn_end is not None and row.seq < last_turn_end]
    if len(settled) <= size:
        return None
    return _window_html(state, entry, strings, t.views(0, size), first_window_paging(size), "")  # settled rows lead


def file_size(entry: Entry) -> int | None:
    """The file's size when it was read, so a live page can ask for what came after."""
    try:
        return os.stat(entry.source.path).st_size
    except OSError:
        return None
