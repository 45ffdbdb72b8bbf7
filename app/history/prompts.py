"""The first prompt of a session: with its title, what names it to a reader (the session list, a search hit)."""

from __future__ import annotations

from ..model.text import one_line
from .session import SessionLog

PROMPT_CHARS = 200  # a first prompt as a list or a hit shows it: one line, this long at most


def first_prompt(log: SessionLog) -> str | None:
    """The text of the first message a person wrote (not injected context, not a tool's), on one line."""
    for seq, kind in enumerate(log.types):
        if kind != "user/message":
            continue
        message = log.event(seq).message
        if message is not None and message.source.kind == "user" and message.text().strip():
            return one_line(message.text(), PROMPT_CHARS)
    return None
