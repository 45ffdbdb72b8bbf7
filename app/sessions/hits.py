"""A cross-session search hit as `/api/search` and `dsh-inspect search --json` give it: its session, where it
is, and a snippet of its words with the matches marked."""

from __future__ import annotations

from urllib.parse import urlencode

from ..model.plain_text import title_text
from .keys import session_url
from .registry import Entry
from .search_index import Hit, Query
from .wire import Twin


class SearchHitJson(Twin):
    """One matching row: its session, where it is, and a snippet of its words with the matches marked."""

    key: str
    unique: str
    title: str | None  # as logged: Markdown, maybe
    plain_title: str | None  # as every page names it
    first_prompt: str | None  # the session's, on one line: with the title, which session this is
    path: str
    anchor: str
    kind: str
    seq: int
    step: str | None  # the step the row happened in (`turn.step`), None outside any
    time: int | None  # its event's time (epoch ms), None when the log carries none
    form: str | None
    tool: str | None
    error: bool
    snippet: str
    marks: list[tuple[int, int]]  # [start, end) of each match in `snippet`, in characters
    html: str  # the snippet escaped, each match in <mark>
    url: str  # opens the session at the row, the search carried over: the page opens what holds it and marks it
    session_url: str


def hit_url(key: str, anchor: str, search: Query) -> str:
    """The session page at the row `anchor`, with the search that found it, which the page's own search takes
    up (static/search.js): it opens the card or disclosure holding the words and marks them."""
    asked = {"q": search.q, "kind": search.kind, "form": search.form, "tool": search.tool}
    carried = {name: value for name, value in asked.items() if value} | ({"errors": "true"} if search.errors else {})
    return f"{session_url(key)}?{urlencode({'at': anchor, **carried})}"


def hit_json(entry: Entry, hit: Hit, search: Query) -> SearchHitJson:
    return SearchHitJson(
        key=entry.key,
        unique=entry.unique,
        title=hit.title,
        plain_title=title_text(hit.title),
        first_prompt=hit.first_prompt,
        path=entry.source.label,
        anchor=hit.anchor,
        kind=hit.kind,
        seq=hit.seq,
        step=hit.step,
        time=hit.at,
        form=hit.form,
        tool=hit.tool,
        error=hit.error,
        snippet=hit.snippet.text,
        marks=list(hit.snippet.marks),
        html=str(hit.snippet.html()),
        url=hit_url(entry.key, hit.anchor, search),
        session_url=session_url(entry.key),
    )
