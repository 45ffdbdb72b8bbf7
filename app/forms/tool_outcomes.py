"""What a tool's result shows beyond its text, by tool (docs/ui.md §5.3): a shell command's exit, a search's
matches or paths.

dsh's host derives these views from the logged result: a shell tool ends its text with an `[exit code: N]`
or `[killed by signal: X]` line (none: exit 0), which its terminal card shows as a pill; `grep` and `glob`
log their matches or paths in the result's `meta` (`{shape: "matches", files, truncated, total}`,
`{shape: "paths", paths, truncated, total}`), which its search card lists. Both are untrusted log data: a
result not in these shapes has no such view, and its card shows the text alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..log.jsonvalues import is_safe_int
from .jsformat import TEXT_LIMIT, utf16_len

_EXIT = re.compile(r"\n\[exit code: (\d{1,9})\]\Z")
_SIGNAL = re.compile(r"\n\[killed by signal: ([^\]\n]{1,64})\]\Z")

# The rows a search card lists before "… N more lines" (dsh's chat card: 8), and the most it holds at all:
# a result's meta is bounded by dsh, but a log is untrusted, and the rest stays in the result's text.
SEARCH_SHOWN = 8
SEARCH_ROWS = 2000
SEARCH_CHARS = 5 * TEXT_LIMIT  # UTF-16 units of all its rows (dsh caps its meta at fewer)


@dataclass(frozen=True, slots=True)
class ShellExit:
    """How a shell command ended, and its output without the line that said so."""

    output: str
    code: int | None  # None: killed by a signal
    signal: str | None

    @property
    def failed(self) -> bool:
        return self.signal is not None or self.code != 0


def shell_exit(text: str) -> ShellExit:
    """A shell tool's result text split into its output and its exit (dsh `parseExitStatus`)."""
    if killed := _SIGNAL.search(text):
        return ShellExit(text[: killed.start()], None, killed.group(1))
    if exited := _EXIT.search(text):
        return ShellExit(text[: exited.start()], int(exited.group(1)), None)
    return ShellExit(text, 0, None)


@dataclass(frozen=True, slots=True)
class SearchRow:
    """One row of a search card: a file's header (with its match count), one of its matched lines, or a path."""

    kind: Literal["file", "match", "path"]
    text: str
    number: int | None = None  # a match's line number, a file's match count


@dataclass(frozen=True, slots=True)
class SearchListing:
    """A `grep` result's matches grouped by file, or a `glob` result's paths."""

    shape: Literal["matches", "paths"]
    rows: tuple[SearchRow, ...]
    shown: int  # matches (or paths) the result holds
    total: int  # matches (or paths) the search found: more than shown when the tool capped its result
    files: int  # files the matches are in (0 for paths)

    @property
    def head(self) -> tuple[SearchRow, ...]:
        return self.rows[:SEARCH_SHOWN]

    @property
    def rest(self) -> tuple[SearchRow, ...]:
        """The rows behind "… N more lines"."""
        return self.rows[SEARCH_SHOWN:]

    @property
    def truncated(self) -> bool:
        return self.total > self.shown

    @property
    def text(self) -> str:
        """Its files, lines and paths, as search reads them."""
        return "\n".join(r.text for r in self.rows)


def _count(value: Any, at_least: int) -> int | None:
    return int(value) if is_safe_int(value) and value >= at_least else None


def _match_rows(files: Any) -> tuple[list[SearchRow], int] | None:
    if not isinstance(files, list | tuple):
        return None
    rows: list[SearchRow] = []
    shown = 0
    for file in files:
        matches = file.get("matches") if isinstance(file, dict) else None
        path = file.get("path") if isinstance(file, dict) else None
        if not isinstance(path, str) or not isinstance(matches, list | tuple):
            return None
        rows.append(SearchRow("file", path, len(matches)))
        for m in matches:
            number = _count(m.get("lineNumber"), 1) if isinstance(m, dict) else None
            line = m.get("line") if isinstance(m, dict) else None
            if number is None or not isinstance(line, str):
                return None
            rows.append(SearchRow("match", line, number))
        shown += len(matches)
        if len(rows) > SEARCH_ROWS:
            return None
    return rows, shown


def _path_rows(paths: Any) -> list[SearchRow] | None:
    if not isinstance(paths, list | tuple) or len(paths) > SEARCH_ROWS or not all(isinstance(p, str) for p in paths):
        return None
    return [SearchRow("path", p) for p in paths]


def _bounded(listing: SearchListing) -> SearchListing | None:
    return listing if sum(utf16_len(r.text) for r in listing.rows) <= SEARCH_CHARS else None


def search_listing(meta: Any) -> SearchListing | None:
    """A `grep` or `glob` result's listing from its logged `meta` (whichever tool logged it: only these two log
    this shape); None when the meta is not one."""
    if not isinstance(meta, dict):
        return None
    total = _count(meta.get("total"), 0)
    if meta.get("shape") == "matches":
        found = _match_rows(meta.get("files"))
        if found is None:
            return None
        rows, shown = found
        files = sum(1 for r in rows if r.kind == "file")
        return _bounded(SearchListing("matches", tuple(rows), shown, max(total or 0, shown), files))
    if meta.get("shape") == "paths":
        paths: Sequence[SearchRow] | None = _path_rows(meta.get("paths"))
        if paths is None:
            return None
        return _bounded(SearchListing("paths", tuple(paths), len(paths), max(total or 0, len(paths)), 0))
    return None
