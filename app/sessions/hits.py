"""A cross-session search hit as `/api/search` and `dsh-inspect search --json` give it: its session, where it
is, and a snippet of its words with the matches marked."""

from __future__ import annotations

from urllib.parse import quote

from ..model.plain_text import title_text
from .keys import session_url
from .registry import Entry
from .search_index import Hit
from .wire import Twin


class SearchHitJson(Twin):
    """One matching row: its session, where it is, and a snippet of its words with the matches marked."""

    key: str
    unique: str
    title: str | None  # as logged: Markdown, maybe
    plain_title: str | None  # as every page names it
    path: str
    anchor: str
    kind: str
    seq: int
    form: str | None
    tool: str | None
    error: bool
    snippet: str
    marks: list[tuple[int, int]]  # [start, end) of each match in `snippet`, in characters
    html: str  # the snippet escaped, each match in <mark>
    url: str  # opens the session at the row
    session_url: str


def hit_json(entry: Entry, hit: Hit) -> SearchHitJson:
    return SearchHitJson(
        key=entry.key,
        unique=entry.unique,
        title=hit.title,
        plain_title=title_text(hit.title),
        path=entry.source.label,
        anchor=hit.anchor,
        kind=hit.kind,
        seq=hit.seq,
        form=hit.form,
        tool=hit.tool,
        error=hit.error,
        snippet=hit.snippet.text,
        marks=list(hit.snippet.marks),
        html=str(hit.snippet.html()),
        url=f"{session_url(entry.key)}?at={quote(hit.anchor, safe='')}",
        session_url=session_url(entry.key),
    )
