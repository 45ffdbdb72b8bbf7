"""A session's outline: its turns with their first prompts, its errors, compactions and subagents, for the margin
beside the transcript (static/outline.js draws a window of it at a time)."""

from __future__ import annotations

from fastapi import APIRouter

from ..present.outline import OutlineJson, outline_json, outline_of
from ..present.windows import transcript
from ..state import ReadSession, State

router = APIRouter()


@router.get(
    "/api/sessions/{key}/outline",
    summary="The session's outline: each turn with its first prompt, and its errors, compactions and subagents",
)
def api_outline(state: State, session: ReadSession) -> OutlineJson:
    """Each entry in the transcript's order: `turn` (its number and first prompt), `error`, `compaction` or
    `subagent` (what the row says), with the row's `index` and `anchor` (as `?at=` takes it) and its `seq`."""
    return outline_json(outline_of(state, session.entry, transcript(state, session.entry)))
