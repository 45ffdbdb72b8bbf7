"""Where a session's time went: its timeline page (a canvas, static/timeline.js) and the twin of its spans."""

from __future__ import annotations

from fastapi import APIRouter, Request

from ..present.entries import related_sessions
from ..present.request_index import page_head
from ..present.spend.timeline import (
    anchors_of,
    header_figures,
    nested_sessions,
    page_spans,
    ranking,
    subagent_lanes,
    timeline_json,
    timing_of,
)
from ..present.twins import TimelineJson
from ..state import Lang, ReadSession, State, Who
from ..views import Served, page_and_twin, wants_twin

router = APIRouter()


@page_and_twin(
    router,
    "/sessions/{key}/timeline",
    twin=TimelineJson,
    summary="Where a session's time went: its spans, their totals, its slowest steps and tool runs",
    name="api_timeline",
)
def timeline(request: Request, state: State, session: ReadSession, t: Lang, who: Who) -> Served[TimelineJson]:
    """Every span (`model`, `tool`, `command`, `wait`, `compaction`, `idle`, `subagent`), times in ms since the
    epoch, each with the row anchor `?at=` opens; the totals and the slowest steps and tool runs; and `children`,
    each subagent session loaded with it and its own spans."""
    timing, anchor = timing_of(state, session.entry), anchors_of(state, session.entry)
    # its subagents' sessions loaded with it, those its reader may see: each opens in place, and each links a
    # timeline of its own
    children = related_sessions(state, session.entry, session.log, who)["children"]
    nested = nested_sessions(state, children)
    if wants_twin(request):
        return TimelineJson.model_validate(timeline_json(timing, anchor, nested))
    # the page draws the spans from data it carries, each span's figures already worded in the reader's
    # language: worded once per file version (its own and its subagents'), language and subagents seen
    seen = tuple(c.key for c in nested)
    drawn = state.registry.derived(
        session.entry.key,
        f"timeline-{t.lang}-" + "|".join(seen),
        lambda _: page_spans(timing, anchor, t, nested),
        also=seen,
    )
    return state.page(
        request,
        "timeline.html",
        **page_head(session.entry, session.log),
        figures=header_figures(timing),
        drawn=drawn,
        ranked=ranking(timing, anchor),
        subagents=subagent_lanes(timing, children),
    )
