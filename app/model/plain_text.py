"""Markdown made plain text for one line: a session's title as a person reads it, without the asterisks a
model put around a word ("Done. The file says **alpha**." reads "Done. The file says alpha.").

The text is log data: this only takes markup away and never adds any; the page escapes what is left.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Longest text looked at: a list cell shows one line, and a bounded input keeps each pattern's work bounded.
LOOKED_AT = 2000
TITLES_KEPT = 1024  # titles whose plain text is kept (each at most LOOKED_AT characters: a few MiB at most)

_ESCAPABLE = r"\\`*_{}\[\]()#+\-.!~>|<"
_ESCAPED = re.compile(rf"\\([{_ESCAPABLE}])")
_MARKUP = re.compile(rf"([{_ESCAPABLE}])")
_PLACEHOLDER = 0xF0000  # supplementary private use: an escaped character waits here until the markup is gone
_HELD = re.compile("[\U000f0000-\U000f007f]")
_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[^\n]*$", re.M)
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]+)\](?:\([^)\n]*\)|\[[^\]\n]*\])")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_CODE = re.compile(r"(`+)(.+?)\1", re.S)
# emphasis and strikethrough: a marker, text that neither starts nor ends with a space, the same marker;
# an underscore counts only outside a word (snake_case stays as it is)
_STARS = re.compile(r"(\*{1,3}|~~)(?=\S)(.+?)(?<=\S)\1", re.S)
_UNDERSCORES = re.compile(r"(?<![A-Za-z0-9])(_{1,3})(?=\S)(.+?)(?<=\S)\1(?![A-Za-z0-9])", re.S)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+", re.M)
_RULE = re.compile(r"^[ \t]*(?:[-*_][ \t]*){3,}$", re.M)
_SPACE = re.compile(r"\s+")


def _hold(match: re.Match[str]) -> str:
    return chr(_PLACEHOLDER + ord(match.group(1)))


def _release(match: re.Match[str]) -> str:
    return chr(ord(match.group(0)) - _PLACEHOLDER)


def plain_text(markdown: str) -> str:
    """`markdown` as one line of plain text: emphasis, code spans, links, images, headings, quotes,
    list markers and rules taken away, backslash escapes resolved, whitespace runs made one space."""
    text = _ESCAPED.sub(_hold, markdown[:LOOKED_AT])
    text = _FENCE.sub("", text)
    text = _CODE.sub(lambda m: _MARKUP.sub(_hold, m.group(2).strip()), text)  # a code span's text is literal
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _RULE.sub("", text)
    text = _HEADING.sub(r"\1", text)
    text = _QUOTE.sub("", text)
    text = _ITEM.sub("", text)
    for _ in range(3):  # nested emphasis (`**_both_**`) takes a pass a level
        before = text
        text = _UNDERSCORES.sub(r"\2", _STARS.sub(r"\2", text))
        if text == before:
            break
    return _HELD.sub(_release, _SPACE.sub(" ", text).strip())


def title_text(title: str | None) -> str | None:
    """A session's title as every place names it (the list, the session page and its <title>, search hits, the
    model view, compare, the export, their twins' `plainTitle`): its plain text; None for a session without a
    title, or with one of markup alone, so the place falls back to the session's id."""
    return _known_title_text(title[:LOOKED_AT]) if title else None  # (all plain_text reads of it)


@lru_cache(maxsize=TITLES_KEPT)
def _known_title_text(title: str) -> str | None:
    # the same title is asked for again and again: each of a search's 200 hits names its session (21 µs each)
    return plain_text(title) or None
