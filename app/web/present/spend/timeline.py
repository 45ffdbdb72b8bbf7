"""Where a session's time and money went, as its pages and twins give it: its spans and its cost kept per file
version, the header's figures, the timeline's spans with the row each opens (`?at=`), and the slowest steps and
tool runs (history/spend/ works them out)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ....history.calls import CallIndex, call_index
from ....history.spend.cost import Cost, session_cost
from ....history.spend.timing import SPAN_KINDS, Span, SpanKind, Timing, session_timing
from ....model.plain_text import title_text
from ....sessions.registry import Entry, SessionGone
from ....sessions.transcript import Transcript
from ...state import WebState
from ..rows import duration
from ..strings import Phrase, Strings, phrase
from ..windows import transcript
from ..wording import WORDS

SLOWEST = 10  # steps and tool runs the ranking names
# spans the page carries at most (about 100 bytes each): a log's length may not make a page of any size; the
# twin gives them all
DRAWN_MOST = 20_000
# subagent sessions a timeline opens in place (each costs its own spans and rows); the rest each on its own timeline
NESTED_MOST = 50
HEADER_KINDS: tuple[SpanKind, ...] = ("model", "tool", "wait")  # what the session header sums besides the wall time


def calls_of(state: WebState, entry: Entry) -> CallIndex:
    """The session's model calls, once per file version: its spans and its cost both read them."""
    return state.registry.derived(entry.key, "calls", call_index)


def cost_of(state: WebState, entry: Entry) -> Cost:
    """The session's calls priced with the server's prices (`--prices`, `--currency`), once per file version."""
    prices, calls = state.settings.prices(), calls_of(state, entry)
    return state.registry.derived(entry.key, "cost", lambda log: session_cost(log, prices, calls))


def timing_of(state: WebState, entry: Entry) -> Timing:
    """The session's spans, worked out once per file version."""
    calls = calls_of(state, entry)
    return state.registry.derived(entry.key, "timing", lambda log: session_timing(log, calls))


def anchor_finder(t: Transcript) -> Callable[[int], str | None]:
    """Event seq → the anchor of the row that shows it: the row it heads or a row it belongs to (a tool call's
    row holds its result), else the row before it in the log; None before the first row."""
    shown: dict[int, str] = {}
    for row, anchor in zip(t.rows, t.anchors, strict=True):
        if row.kind == "diagnostic":
            continue  # a finding sits before the row of its event
        for seq in (row.seq, *row.related):
            shown.setdefault(seq, anchor)

    def find(seq: int) -> str | None:
        if seq in shown:
            return shown[seq]
        if (run := t.run_holding(seq)) is not None:
            return f"seq-{seq}" if t.rows[run.index].key.startswith("seq-") else t.anchors[run.index]
        i = bisect_right(t.rows, seq, key=lambda row: row.seq) - 1
        return t.anchors[i] if i >= 0 else None

    return find


def anchors_of(state: WebState, entry: Entry) -> Callable[[int], str | None]:
    t = transcript(state, entry)
    return state.registry.derived(entry.key, "anchor-finder", lambda _: anchor_finder(t))


@dataclass(frozen=True, slots=True)
class Figure:
    """One of the header's durations: what it is and how long, worded."""

    name: str  # `wall` or a span kind
    label: Phrase
    value: Phrase


def header_figures(timing: Timing) -> list[Figure]:
    """Wall, model, tool and waiting-for-the-user time, those the log's times give; and how often the clock ran
    backwards (a session resumed on another machine), which the wall time counts as nothing."""
    if timing.wall_ms is None:
        return []
    totals = [("wall", timing.wall_ms), *((kind, timing.total(kind)) for kind in HEADER_KINDS)]
    figures = [
        Figure(name, phrase(WORDS.timings[name]), value)
        for name, ms in totals
        if (value := duration(ms)) is not None and (ms or name == "wall")
    ]
    if timing.backwards:
        figures.append(Figure("backwards", phrase("timing.backwards"), phrase("timing.times", count=timing.backwards)))
    return figures


def span_json(span: Span, anchor: str | None) -> dict[str, Any]:
    """One span as the timeline's twin gives it (times in ms since the epoch)."""
    return {
        "kind": span.kind,
        "start": span.start,
        "end": span.end,
        "durationMs": span.duration_ms,
        "state": span.state,
        "at": anchor,
        "seq": span.seq,
        "label": span.label,
        "step": span.step,
        "ttftMs": span.ttft_ms if span.kind == "model" else None,
        "decodingMs": span.decoding_ms if span.kind == "model" else None,
        "child": span.child,
    }


def slowest_json(timing: Timing, anchor: Callable[[int], str | None]) -> dict[str, Any]:
    """The slowest steps and tool runs, each with the row it opens."""
    return {
        "steps": [{**s.to_json(), "at": anchor(s.seq)} for s in timing.slowest_steps(SLOWEST)],
        "tools": [span_json(s, anchor(s.seq)) for s in timing.slowest("tool", SLOWEST)],
    }


@dataclass(frozen=True, slots=True)
class Nested:
    """A subagent session the timeline opens in place: which it is, its page, and its spans with the row each
    opens on that page."""

    key: str
    id: str  # the session id its parent's subagent spans name (`Span.child`)
    title: str
    url: str
    timing: Timing
    anchor: Callable[[int], str | None]


def nested_sessions(state: WebState, children: list[dict[str, Any]]) -> list[Nested]:
    """The first `NESTED_MOST` of the subagent sessions loaded with a session (`related_sessions`' children: those
    its reader may see), each with its spans, in the order they began; one gone meanwhile is left out."""
    found: list[Nested] = []
    for child in children[:NESTED_MOST]:
        entry, log = state.registry.entry(child["key"]), state.registry.log(child["key"])
        if entry is None or log is None:
            continue
        try:
            timing, anchor = timing_of(state, entry), anchors_of(state, entry)
        except SessionGone:
            continue
        title = title_text(log.title) or entry.key
        found.append(Nested(entry.key, str(child["id"] or entry.key), title, str(child["url"]), timing, anchor))
    return sorted(found, key=lambda c: (c.timing.first is None, c.timing.first or 0))  # in the order they began


def timeline_json(timing: Timing, anchor: Callable[[int], str | None], nested: list[Nested]) -> dict[str, Any]:
    """The timeline's twin: every span with its row, the totals and the slowest; and `children`, each subagent
    session opened in place with its own spans (each `at` a row of its own page)."""
    return {
        "spans": [span_json(s, anchor(s.seq)) for s in timing.spans],
        "totals": timing.totals_json(),
        "first": timing.first,
        "last": timing.last,
        "slowest": slowest_json(timing, anchor),
        "children": [
            {
                "key": c.key,
                "id": c.id,
                "title": c.title,
                "url": c.url,
                "spans": [span_json(s, c.anchor(s.seq)) for s in c.timing.spans],
                "totals": c.timing.totals_json(),
            }
            for c in nested
        ],
    }


def span_title(span: Span, t: Strings) -> str:
    """What hovering or focusing a span says, in the reader's language: what ran, how long, and a model call's
    first token."""
    parts = [t(WORDS.span_kinds[span.kind])]
    if span.label:
        parts.append(span.label)
    took = duration(span.duration_ms)
    parts.append(t(took) if took is not None else t(WORDS.span_states[span.state]))
    if span.kind == "model" and (ttft := duration(span.ttft_ms)) is not None:
        parts.append(t(phrase("row.ttft", duration=t(ttft))))
    return " · ".join(parts)


def page_spans(timing: Timing, anchor: Callable[[int], str | None], t: Strings, nested: list[Nested]) -> dict[str, Any]:
    """The spans as the page's canvas draws them: a lane per kind the session has (its colour's number, its
    name), and each span's lane, times in ms from the session's first event, the row it opens and its figures
    worded. Each subagent session opened in place is a lane of its own (its colour's, its title, its place in
    `children`) holding the subagent spans that name it; `children` gives its lanes and spans the same way,
    drawn beneath it once opened. `DRAWN_MOST` spans at most in all, the session's own first."""
    origin = timing.first or 0
    opened = {c.id: i for i, c in enumerate(nested)}  # a session's id → its place in `children`
    own = timing.spans[:DRAWN_MOST]
    lanes, kinds = _kind_lanes([s for s in own if s.kind != "subagent" or s.child not in opened], t)
    header = len(lanes)  # each opened session's lane follows the kinds'
    lanes += [[SPAN_KINDS.index("subagent"), c.title, i] for i, c in enumerate(nested)]

    def lane(s: Span) -> int:
        if s.kind == "subagent" and s.child is not None and s.child in opened:
            return header + opened[s.child]
        return kinds.index(s.kind)

    spans = [_drawn(s, lane(s), origin, anchor, t) for s in own]
    room, children = DRAWN_MOST - len(spans), []
    for c in nested:
        theirs = c.timing.spans[: max(room, 0)]
        room -= len(theirs)
        child_lanes, child_kinds = _kind_lanes(list(theirs), t)
        children.append(
            {
                "title": c.title,
                "url": c.url,
                "lanes": child_lanes,
                "spans": [_drawn(s, child_kinds.index(s.kind), origin, c.anchor, t, c.title) for s in theirs],
            }
        )
    return {
        "lanes": lanes,
        "end": (timing.last or origin) - origin,
        "total": len(timing.spans) + sum(len(c.timing.spans) for c in nested),
        "shown": len(spans) + sum(len(c["spans"]) for c in children),
        "spans": spans,
        "children": children,
    }


def _kind_lanes(spans: list[Span], t: Strings) -> tuple[list[list[Any]], list[SpanKind]]:
    """A lane per kind `spans` has, in `SPAN_KINDS`' order (its colour's number, its name), and those kinds."""
    kinds = [kind for kind in SPAN_KINDS if any(s.kind == kind for s in spans)]
    return [[SPAN_KINDS.index(kind), t(WORDS.lanes[kind])] for kind in kinds], kinds


def _drawn(
    s: Span, lane: int, origin: int, anchor: Callable[[int], str | None], t: Strings, session: str = ""
) -> list[Any]:
    """One span as the canvas draws it; a subagent session's figures say whose they are."""
    said = span_title(s, t)
    return [
        lane,
        s.start - origin,
        None if s.end is None else s.end - origin,
        None if s.first_token is None or s.ttft_ms is None else s.first_token - origin,
        anchor(s.seq),
        f"{session} · {said}" if session else said,
    ]


@dataclass(frozen=True, slots=True)
class Ranked:
    """One of the slowest: what it was, how long it took, and the row it opens."""

    label: str
    took: Phrase
    at: str | None


def ranking(timing: Timing, anchor: Callable[[int], str | None]) -> dict[str, list[Ranked]]:
    """The slowest steps and tool runs, as the timeline page lists them."""
    return {
        "steps": [
            Ranked(s.key, took, anchor(s.seq))
            for s in timing.slowest_steps(SLOWEST)
            if (took := duration(s.duration_ms))
        ],
        "tools": [
            Ranked(f"{s.step} {s.label}" if s.step else s.label, took, anchor(s.seq))
            for s in timing.slowest("tool", SLOWEST)
            if (took := duration(s.duration_ms))
        ],
    }


@dataclass(frozen=True, slots=True)
class SubagentLane:
    """A child session the timeline opens: its id, its timeline, and what the spans that ran it took."""

    id: str
    url: str
    took: Phrase | None


def subagent_lanes(timing: Timing, children: list[dict[str, Any]]) -> list[SubagentLane]:
    """The subagent sessions loaded with this one (`related_sessions`' children), each with its timeline's URL
    and the time of the subagent spans that name it (None when none does: a child the log names otherwise)."""
    spent: dict[str, int] = {}
    for span in timing.spans:
        if span.kind == "subagent" and span.child is not None and span.duration_ms is not None:
            spent[span.child] = spent.get(span.child, 0) + span.duration_ms
    return [
        SubagentLane(str(c["id"] or c["key"]), f"{c['url']}/timeline", duration(spent.get(str(c["id"]))))
        for c in children
    ]
