"""A session's transcript as the pages show it (FORMAT.md §5.5): rows and anchors built once per
file version, windows of rows rendered once, the first screen of a long log from a prefix of it
(PRODUCT.md Budgets, windowing).

Every router that shows rows (the session page, its JSON twin, show-all bodies, the live
tail, the export) reads them from here.
"""

from __future__ import annotations

import os
import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field

from markupsafe import Markup

from ..history.readable import ReadableLog
from ..history.row_facts import row_facts
from ..history.session import SessionLog
from ..history.transcript import Row, transcript_rows
from ..log.diagnostics import Diagnostic
from .archive import media_of
from .registry import Entry
from .rows import RowView, row_view
from .search import Searchable, searchable
from .state import WebState, session_url
from .strings import Strings

WINDOWS_KEPT = 4  # rendered windows kept per session version: the first screen and the latest scrolled to

Paging = dict[str, int | None]  # from, to, totalRows, previousFrom, nextFrom


class RenderedWindows:
    """Windows of one session version already rendered to HTML, with their paging; the latest few.

    Rendering a window decodes its events and runs every row template; keeping the
    result makes a long session's first screen cost what a one-turn session's does
    (PRODUCT.md Budgets, windowing; docs/decisions/0005-performance-budgets.md)."""

    def __init__(self, kept: int = WINDOWS_KEPT) -> None:
        self._kept = kept
        self._items: OrderedDict[tuple[str, int, str], tuple[Markup, Paging]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int, str]) -> tuple[Markup, Paging] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, int, str], value: tuple[Markup, Paging]) -> tuple[Markup, Paging]:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._kept:
                self._items.popitem(last=False)
        return value


@dataclass(frozen=True, slots=True)
class Transcript:
    """A session's rows and their anchors, built once per file version."""

    log: SessionLog
    readable: ReadableLog  # what the rows read their events from: the log, and the records after a defect
    rows: list[Row]
    anchors: list[str]
    # rendered windows of this very version, so they go when the transcript does
    windows: RenderedWindows = field(default_factory=RenderedWindows, compare=False, repr=False)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every finding about the log, one per diagnostic row, in page order (what the header counts)."""
        return [row.diagnostic for row in self.rows if row.diagnostic is not None]

    def view(self, i: int) -> RowView:
        """The view of row `i` at its anchor."""
        header = self.log.header
        return row_view(self.readable, self.rows[i], header.cwd if header else None, self.anchors[i])

    def views(self, start: int, stop: int) -> list[RowView]:
        return [self.view(i) for i in range(start, min(stop, len(self.rows)))]

    def rows_at(self, seq: int) -> range:
        """The indexes of the rows anchored at `seq`: its event's row, after the findings placed right before it."""
        i = bisect_left(self.rows, seq, key=lambda row: row.seq)  # rows are in seq order
        j = bisect_right(self.rows, seq, lo=i, key=lambda row: row.seq)
        return range(i, j)

    def window(self, start: int, size: int) -> tuple[list[RowView], Paging]:
        """The views of the `size` rows from `start` (moved inside the transcript), and their paging."""
        first = max(0, min(start, max(len(self.rows) - 1, 0)))
        views = self.views(first, first + size)
        return views, self.paging(first, len(views), size)

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
    return Transcript(log, readable, rows, [anchor_of(row) for row in rows])


def anchor_of(row: Row) -> str:
    """`msg-{id}` for a row that stands for a message (`~n` for a repeated id), else its key (PRODUCT.md Interfaces)."""
    if row.message is None:
        return row.key
    return f"msg-{row.message}" + (f"~{row.occurrence}" if row.occurrence > 1 else "")


def transcript(state: WebState, entry: Entry) -> Transcript:
    """The entry's transcript at the log's current file version."""
    return state.registry.derived(entry.key, "transcript", build_transcript)


def rendered_window(
    state: WebState, entry: Entry, t: Transcript, strings: Strings, start: int, direction: str = ""
) -> tuple[Markup, Paging]:
    """`rows/window.html` for the window at `start`, and its paging: rendered once per file version."""
    wanted = (strings.lang, start, direction)
    found = t.windows.get(wanted)
    if found is None:
        views, paging = t.window(start, state.settings.window_rows)
        html = _window_html(state, entry, strings, views, paging, direction)
        found = t.windows.put(wanted, (html, paging))
    return found


def _window_html(
    state: WebState, entry: Entry, strings: Strings, views: list[RowView], paging: Paging, direction: str
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
        )
    )


def searchables(state: WebState, entry: Entry, t: Transcript) -> list[Searchable]:
    """Every row as search sees it, built once per file version (on the first search)."""
    return state.registry.derived(
        entry.key, "search", lambda _: [searchable(r, row_facts(t.readable, r)) for r in t.rows]
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
