"""Two sessions compared: `/compare?a=KEY&b=KEY`, its rows in windows, and its JSON twin.

The comparison itself is `history.compare`'s; this module only looks the two sessions up, keeps
the comparison per file version of both, and presents its aligned rows a window at a time.
Without `b`, the page offers the sessions to compare `a` with, its parent and children first. Both sides, and
every session offered, are among those the request's identity sees: a hidden one answers 404 as a missing one
(docs/decisions/0020-access-control.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from ...access import Identity
from ...history.compare import (
    Comparison,
    Divergence,
    Fold,
    Item,
    ItemPair,
    Layout,
    Line,
    SegmentPair,
    compare_logs,
    layout,
    pair_json,
    segment_json,
    summary_json,
)
from ...history.message_handles import message_anchor
from ...history.session import SessionLog
from ...history.word_diff import WORK, WordDiff, word_diff
from ...model.plain_text import title_text
from ...sessions.keys import session_url
from ...sessions.priority import Elsewhere
from ...sessions.registry import Entry
from ..present.entries import entry_json, related_sessions
from ..present.listed import cached_summary, created_at, cwd_of, listed_row, reads
from ..present.twins import ChooserJson, ComparisonJson
from ..state import State, WebState, Who
from ..views import From, To

router = APIRouter()
MAX_CANDIDATES = 200  # sessions the chooser lists besides the suggested ones
FILTER_CHARS = 200  # the longest filter the chooser takes: a phrase of a title or prompt, not a document
# what the chooser's candidates are filtered by, without `b`
Filter = Annotated[
    str, Query(max_length=FILTER_CHARS, description="text in a candidate's title, prompt, id, project or path")
]
SHOWN_CHARS = 4000  # of one side's text in a row: the rest is counted, not shown
# word-diff steps a request takes in its own thread (about 35 ms); a pair that costs more is diffed by the
# process for heavy work, niced, so one costly comparison (a compare bomb) cannot slow the process's requests
QUICK_WORK = 100_000


@dataclass(frozen=True, slots=True)
class Compared:
    a: Entry
    b: Entry
    comparison: Comparison
    layout: Layout
    title_a: str | None  # each side's title as every page names it
    title_b: str | None


def _compared(state: WebState, a: str, b: str, who: Identity) -> Compared:
    """The comparison of the two sessions at their current file versions, built once for each pair of versions;
    404 for either side `who` may not see, as for a missing one."""
    entry_a, log_a = state.session(a, who)
    entry_b, log_b = state.session(b, who)
    # kept with a's log; b's log object names its file version (the value holds it, so its id stays its own),
    # so a changed b builds anew
    name = f"compare:{entry_b.key}:{id(log_b)}"

    def build(log_a: SessionLog) -> tuple[SessionLog, Comparison, Layout]:
        comparison = compare_logs(log_a, log_b, words=partial(_words_aside, state.diffing))
        return log_b, comparison, layout(comparison)

    kept_b, comparison, view = state.registry.derived(entry_a.key, name, build, also=(entry_b.key,))
    assert kept_b is log_b
    return Compared(entry_a, entry_b, comparison, view, title_text(log_a.title), title_text(log_b.title))


def _words_aside(elsewhere: Elsewhere, a: str, b: str) -> WordDiff:
    """A changed pair's word diff: here while it costs little, else by `elsewhere` within the usual bound (a pair
    that cannot be diffed within it is known here at once, and changed as a whole)."""
    quick = word_diff(a, b, QUICK_WORK)
    return elsewhere.run(word_diff, a, b) if quick.whole and quick.floor <= WORK else quick


def _titled(entry: Entry, title: str | None) -> dict[str, Any]:
    return {**entry_json(entry), "plainTitle": title}


def _query(a: str, b: str) -> str:
    return urlencode({"a": a, "b": b})


# --- what a row shows ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Side:
    item: Item
    text: str  # cut to SHOWN_CHARS
    hidden: int  # characters not shown
    url: str | None  # the row in its session's transcript


@dataclass(frozen=True, slots=True)
class RowView:
    line: Line
    pair: SegmentPair
    item: ItemPair | None
    a: Side | None
    b: Side | None
    words_a: tuple[tuple[str, str], ...]  # a changed pair's words as each side shows them
    words_b: tuple[tuple[str, str], ...]


def _side(item: Item | None, key: str) -> Side | None:
    if item is None:
        return None
    anchor = message_anchor(item.message_id) if item.message_id else None
    url = f"{session_url(key)}#{quote(anchor, safe='')}" if anchor else f"{session_url(key)}/events/{item.seq}"
    return Side(item, item.text[:SHOWN_CHARS], max(0, len(item.text) - SHOWN_CHARS), url)


def _cut(words: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    left = SHOWN_CHARS
    for op, text in words:
        if left <= 0:
            break
        out.append((op, text[:left]))
        left -= len(text)
    return tuple(out)


def _row(compared: Compared, line: Line) -> RowView:
    pair = compared.comparison.segments[line.segment]
    item = pair.items[line.item] if line.item is not None else None
    if item is None:
        return RowView(line, pair, None, None, None, (), ())
    words_a = _cut([(w.op, w.text) for w in item.words if w.op != "ins"])
    words_b = _cut([(w.op, w.text) for w in item.words if w.op != "del"])
    return RowView(line, pair, item, _side(item.a, compared.a.key), _side(item.b, compared.b.key), words_a, words_b)


def _rows(compared: Compared, start: int, size: int, upto: int | None) -> tuple[list[RowView | Fold], int | None]:
    shown, after = compared.layout.window(start, size, upto=upto)
    return [x if isinstance(x, Fold) else _row(compared, x) for x in shown], after


def _line_json(compared: Compared, entry: Line | Fold) -> dict[str, Any]:
    if isinstance(entry, Fold):
        return {"fold": {"from": entry.start, "to": entry.end, "rows": entry.end - entry.start}}
    pair = compared.comparison.segments[entry.segment]
    # `status`: the row's as the page marks it (a step's head: whether what it recorded differs)
    if entry.item is None:
        return {"status": entry.status, "step": segment_json(pair)}
    item = pair_json(pair.items[entry.item])
    return {"status": entry.status, "item": item, "step": {"a": pair.key_a, "b": pair.key_b}}


# --- choosing the session to compare with ---------------------------------------------


def _candidates(state: WebState, key: str, who: Identity, q: str = "") -> dict[str, Any]:
    """The sessions `who` sees to compare session `key` with, each as the session list shows it (its summary
    once read): its relatives first, then the others, those of its project first, newest first. `q` keeps
    those whose title, first prompt, id, project or path holds it (a title or prompt only once read: the page
    asks for every listed session's read, so a filter typed there finds them)."""
    entry, log = state.session(key, who)
    related = related_sessions(state, entry, log, who)
    project = cwd_of(entry)
    needle = q.strip().casefold()

    def candidate(e: Entry) -> dict[str, Any]:
        listed = listed_row(e, cached_summary(state, e), reads(who, e))
        return {**listed, "sameProject": bool(project) and cwd_of(e) == project, "compare": _compare_url(entry, e)}

    suggested = []
    for r in [*related["parents"], *related["children"]]:
        kin = state.registry.entry(r["key"])
        if kin is not None:
            suggested.append({**candidate(kin), "how": r["how"]})
    taken = {entry.key, *(r["key"] for r in suggested)}
    rest = [e for e in state.entries(who) if e.key not in taken]
    rest.sort(key=lambda e: (cwd_of(e) != project, -created_at(e)))  # a session without a time comes last
    others = [c for c in map(candidate, rest) if _holds(c, needle)]
    return {
        "a": _titled(entry, title_text(log.title)),
        "q": q,
        "suggested": [c for c in suggested if _holds(c, needle)],
        "others": others[:MAX_CANDIDATES],
        "moreOthers": max(0, len(others) - MAX_CANDIDATES),
    }


def _compare_url(a: Entry, b: Entry) -> str:
    return f"/compare?{_query(a.key, b.key)}"


def _holds(candidate: dict[str, Any], needle: str) -> bool:
    """Whether a candidate's text as the reader is shown it (its title, first prompt, id, project, path) holds
    `needle` (casefolded; empty: every one)."""
    summary = candidate["summary"] or {}
    said = (candidate["title"], summary.get("firstPrompt"), candidate["key"], candidate["id"])
    return not needle or any(
        needle in (text or "").casefold() for text in (*said, candidate["project"], candidate["path"])
    )


# --- pages and their twins --------------------------------------------------------------


def _page_context(compared: Compared) -> dict[str, Any]:
    c = compared.comparison
    return {
        "a": _titled(compared.a, compared.title_a),
        "b": _titled(compared.b, compared.title_b),
        "comparison": c,
        "divergences": [(name, d, _divergence_links(compared, d)) for name, d in c.divergences],
        "query": _query(compared.a.key, compared.b.key),
        "url_a": session_url(compared.a.key),
        "url_b": session_url(compared.b.key),
    }


# The page, its rows and its twin keep a handler each: the page takes no `to` (a fold opens through
# `/compare/rows`), and renders the comparison's own rows, not their JSON.
@router.get("/compare", response_class=HTMLResponse, include_in_schema=False)
def compare_page(
    request: Request, state: State, who: Who, a: str, b: str | None = None, start: From = 0, q: Filter = ""
) -> HTMLResponse:
    if b is None:
        return state.page(request, "compare/choose.html", **_candidates(state, a, who, q))
    compared = _compared(state, a, b, who)
    rows, after = _rows(compared, start, state.settings.window_rows, None)
    return state.page(request, "compare/page.html", **_page_context(compared), rows=rows, next_from=after, upto=None)


@router.get("/compare/rows", response_class=HTMLResponse, include_in_schema=False)
def compare_rows(
    request: Request, state: State, who: Who, a: str, b: str, start: From = 0, upto: To = None
) -> HTMLResponse:
    """A window of aligned rows (the next as the reader scrolls, or a fold opened: `to` its end)."""
    compared = _compared(state, a, b, who)
    rows, after = _rows(compared, start, state.settings.window_rows, upto)
    return state.page(request, "compare/rows.html", **_page_context(compared), rows=rows, next_from=after, upto=upto)


@router.get("/api/compare", summary="Two sessions aligned step by step, with where they first part")
def api_compare(
    state: State, who: Who, a: str, b: str | None = None, start: From = 0, upto: To = None, q: Filter = ""
) -> ComparisonJson | ChooserJson:
    if b is None:
        return ChooserJson.model_validate(_candidates(state, a, who, q))
    compared = _compared(state, a, b, who)
    shown, after = compared.layout.window(start, state.settings.window_rows, upto=upto)
    c = compared.comparison
    summary = summary_json(c)
    for name, d in c.divergences:  # each with its links into both model views
        if d is not None:
            summary[f"{name}Divergence"]["links"] = _divergence_links(compared, d)
    return ComparisonJson.model_validate(
        {
            "a": _titled(compared.a, compared.title_a),
            "b": _titled(compared.b, compared.title_b),
            **summary,
            "rows": [_line_json(compared, x) for x in shown],
            "from": start,
            "nextFrom": after,
            "totalRows": len(compared.layout.lines),
        }
    )


def _divergence_links(compared: Compared, d: Divergence | None) -> dict[str, str | None] | None:
    """Each side's model view of the step where a divergence lies (None for a side without that step)."""
    if d is None:
        return None

    def view(entry: Entry, key: str | None) -> str | None:
        return f"{session_url(entry.key)}/steps/{key}" if key and not key.endswith("+") else None

    return {"a": view(compared.a, d.a), "b": view(compared.b, d.b)}
