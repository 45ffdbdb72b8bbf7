"""What the model read: the step model views, the context budget, message bodies.

Pages and their JSON twins side by side. The identity pages live in
`app.web.messages`, whose router this one includes, so the app factory adds
one router for the whole feature.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from ..forms import project_context
from ..forms.message_body import body_parts
from ..history.requests import StepRequests, step_requests
from ..history.session import SessionLog
from ..history.usage import Budget, session_budget
from ..model.values import Message
from . import messages
from .budget_chart import budget_chart
from .model_views import CallView, budget_json, is_context, message_url, role_key, step_json, step_views
from .registry import Entry
from .request_index import requests_of, transcript_anchors, transcript_link
from .state import WebState, session_url, web
from .strings import strings_for

router = APIRouter()
router.include_router(messages.router)

_STEP_KEY = re.compile(r"\d+\.\d+(?:~\d+)?")


# --- the context budget --------------------------------------------------------


def _budget(state: WebState, key: str) -> tuple[Entry, SessionLog, Budget]:
    entry, log, index = requests_of(state, key)
    return entry, log, state.registry.derived(entry.key, "budget", lambda log: session_budget(log, index))


@router.get("/sessions/{key}/steps", response_class=HTMLResponse, include_in_schema=False)
def budget_page(request: Request, key: str) -> HTMLResponse:
    state = web(request)
    entry, log, budget = _budget(state, key)
    base = session_url(entry.key)
    t = strings_for(request.headers.get("accept-language"))
    chart = budget_chart(budget, lambda step: f"{base}/steps/{step}", t)
    return state.page(
        request,
        "steps/index.html",
        session_key=entry.key,
        session_title=log.title or entry.key,
        base_url=base,
        budget=budget,
        chart=chart,
    )


@router.get("/api/sessions/{key}/steps", summary="Every step's model calls, tokens, and the compactions between them")
def api_budget(request: Request, key: str) -> dict[str, Any]:
    _, _, budget = _budget(web(request), key)
    return budget_json(budget)


# --- the model view of one step ----------------------------------------------------


def _step(state: WebState, key: str, ref: str) -> tuple[Entry, SessionLog, StepRequests]:
    if not _STEP_KEY.fullmatch(ref):
        raise HTTPException(404, f"{ref!r} is not a step: use turn.step, as in 2.1")
    entry, log, index = requests_of(state, key)
    found = step_requests(log, index, ref)
    if found is None:
        raise HTTPException(404, f"no step {ref} in this session")
    return entry, log, found


@router.get("/sessions/{key}/steps/{ref}", response_class=HTMLResponse, include_in_schema=False)
def step_page(request: Request, key: str, ref: str) -> HTMLResponse:
    state = web(request)
    entry, log, found = _step(state, key, ref)
    t = strings_for(request.headers.get("accept-language"))
    views: tuple[CallView, ...] = step_views(found, t)
    main = next((v for v in views if v.answered), None)
    base = session_url(entry.key)
    anchors = transcript_anchors(state, entry.key)
    step = found.step
    back = transcript_link(base, anchors, step.message if step.message is not None else step.start)
    return state.page(
        request,
        "steps/step.html",
        session_key=entry.key,
        session_title=log.title or entry.key,
        base_url=base,
        step=step,
        calls=views,
        main=main,
        previous_step=found.previous_step,
        next_step=found.next_step,
        transcript_url=back,
        message_url=message_url,
    )


@router.get("/api/sessions/{key}/steps/{ref}", summary="What the model read at one step: every call's request")
def api_step(request: Request, key: str, ref: str) -> dict[str, Any]:
    state = web(request)
    _, _, found = _step(state, key, ref)
    return step_json(found, step_views(found, strings_for(request.headers.get("accept-language"))))


# --- one message's content, loaded when its row opens -------------------------------


def _message_at(state: WebState, key: str, seq: int) -> Message:
    _, log = state.session(key)
    message = log.event(seq).message if 0 <= seq < log.event_count else None
    if message is None:
        raise HTTPException(404, f"event {seq} holds no message")
    return message


@router.get("/sessions/{key}/message-bodies/{seq}", response_class=HTMLResponse, include_in_schema=False)
def message_body(request: Request, key: str, seq: int) -> HTMLResponse:
    state = web(request)
    message = _message_at(state, key, seq)
    if is_context(message):
        return state.page(request, "forms/body.html", view=project_context(message))
    return state.page(request, "messages/body.html", parts=body_parts(message))


@router.get("/api/sessions/{key}/message-bodies/{seq}", summary="The message an event holds, as the model read it")
def api_message_body(request: Request, key: str, seq: int) -> dict[str, Any]:
    message = _message_at(web(request), key, seq)
    view = project_context(message) if is_context(message) else None
    return {
        "seq": seq,
        "role": message.role,
        "shownAs": role_key(message).removeprefix("role."),
        "renderedForm": (view.rendered_form or "opaque") if view else None,
        "message": message.to_json(),
    }
