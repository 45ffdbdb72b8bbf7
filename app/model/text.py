"""Text as one line of a list or a summary: the session list's first prompt, a comparison's changed message."""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")


def one_line(text: str, limit: int) -> str:
    """`text` on one line (whitespace runs made one space), cut to `limit` characters with an ellipsis."""
    line = _SPACE.sub(" ", text[: limit * 4]).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
