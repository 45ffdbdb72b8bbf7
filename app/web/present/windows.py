"""A session's rows as the pages show them: each row's view, windows of them rendered once per file version,
the first screen of a long log from a prefix of it (docs/product.md Budgets, windowing).

Every router that shows rows (the session page, its JSON twin, show-all bodies, the live tail, the export)
reads them from here, over the transcript built once per file version (`transcript.Transcript`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from ...history.session import SessionLog
from ...history.transcript import run_rows
from ...sessions.archive import media_of
from ...sessions.keys import session_url
from ...sessions.registry import Entry
from ...sessions.session_search import SearchIndex, row_searchable, search_index
from ...sessions.transcript import Paging, Transcript, build_transcript
from ..state import WebState
from .rows import RowView, row_view
from .strings import Strings


def view(t: Transcript, i: int) -> RowView:
    """The view of row `i` at its anchor."""
    return row_view(t.readable, t.rows[i], t.cwd, t.anchors[i])


def views(t: Transcript, start: int, stop: int) -> list[RowView]:
    return [view(t, i) for i in range(start, min(stop, len(t.rows)))]


def views_at(t: Transcript, seq: int) -> list[RowView]:
    """The views of the rows anchored at `seq` (`rows_at`), a run row's followed by that of its first row (which
    has the run's seq); inside a run row, the view of its row there."""
    found = t.rows_at(seq)
    inside = None if found else t.run_holding(seq)
    if inside is not None:
        return run_window(t, inside.index, inside.offset, 1)[0]
    shown: list[RowView] = []
    for i in found:
        shown.append(view(t, i))
        if t.rows[i].count > 1:
            shown += run_window(t, i, 0, 1)[0]
    return shown


def window(t: Transcript, start: int, size: int, stop: int | None = None) -> tuple[list[RowView], Paging]:
    """The views of the `size` rows from `start` (moved inside the transcript), no further than `stop` (an
    earlier window ends where the one after it begins), and their paging."""
    first = max(0, min(start, max(len(t.rows) - 1, 0)))
    shown = views(t, first, first + size if stop is None else min(stop, first + size))
    return shown, t.paging(first, len(shown), size)


def run_window(
    t: Transcript, index: int, start: int, size: int, stop: int | None = None
) -> tuple[list[RowView], Paging]:
    """The views of the `size` rows of run row `index` from its row `start`, no further than its row `stop`
    (an earlier page ends where the one after it begins), and their paging among the run's rows."""
    run = t.rows[index]
    first = max(0, min(start, run.count - 1))
    upto = first + size if stop is None else min(stop, first + size)
    cwd = t.cwd
    shown = [row_view(t.readable, r, cwd, r.key) for r in run_rows(run, first, upto)]
    return shown, t.run_paging(index, first, len(shown), size)


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
        shown, paging = window(t, start, size, stop)
        opened = None
        if inside is not None:
            run_views, run_paging = run_window(t, inside.index, inside.opening(size), size)
            opened = (t.rows[inside.index].key, run_views, run_paging)
        return _window_html(state, entry, strings, shown, paging, direction, opened), paging

    key = (strings.lang, start, stop, direction, inside)
    if (start, stop, direction, inside) != (0, None, "", None):
        return t.windows.get(key, render)
    # the first screen, which every page opened at its top and every live tail's start sends, is kept apart
    # from the windows scrolled to: readers scrolling a long session pushed it out of those four
    first: tuple[Markup, Paging] = t.kept.get(("window", *key), render)
    return first


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
    shown, paging = run_window(t, index, start, state.settings.window_rows, stop)
    template = state.templates.env.get_template("rows/run_page.html")
    return Markup(
        template.render(
            t=strings,
            lang=strings.lang,
            rows=shown,
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
    shown: list[RowView],
    paging: Paging,
    direction: str,
    opened: OpenedRun | None = None,
) -> Markup:
    template = state.templates.env.get_template("rows/window.html")
    return Markup(
        template.render(
            t=strings,
            lang=strings.lang,
            rows=shown,
            base_url=session_url(entry.key),
            paging=paging,
            direction=direction,
            media=media_of(entry),
            opened_run=opened,
        )
    )


def row_macro(env: Environment, template: str, name: str, context: Mapping[str, Any]) -> Callable[..., Markup]:
    """Macro `name` of the rows' `template`, its module built once with `context`, for drawing many rows: the
    module builds the module of every row kind it imports (rows/_row.html) once, not once per row."""
    macro: Callable[..., Markup] = getattr(env.get_template(template).make_module(dict(context)), name)
    return macro


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
    return _window_html(state, entry, strings, views(t, 0, size), first_window_paging(size), "")  # settled rows lead


def file_size(entry: Entry) -> int | None:
    """The file's size when it was read, so a live page can ask for what came after."""
    try:
        return os.stat(entry.source.path).st_size
    except OSError:
        return None
