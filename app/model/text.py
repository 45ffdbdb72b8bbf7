"""Text as one line of a list or a summary: the session list's first prompt, a comparison's changed message, a
row's summary."""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")


def one_line(text: str, limit: int) -> str:
    """`text` on one line (whitespace runs made one space), cut to `limit` characters with an ellipsis."""
    line = _SPACE.sub(" ", text[: limit * 4]).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def first_line(text: str, limit: int = 200) -> str:
    """The first line of `text.strip()`, cut to `limit` with an ellipsis: read no further than that needs, so
    a huge text is not copied whole to be summed up."""
    start = _past_spaces(text, 0)
    window = text[start : start + limit + 1]
    if _past_spaces(text, start + len(window)) == len(text):
        window = window.rstrip()  # the text ends within the window, but for spaces, which strip() drops
    line = window.split("\n", 1)[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _past_spaces(text: str, at: int) -> int:
    """Where the whitespace (as `str.strip` sees it) from `at` ends."""
    found = _SPACE.match(text, at)
    return found.end() if found else at
