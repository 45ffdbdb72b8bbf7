"""What the model read: the step model views, the context budget, message bodies.

Pages and their JSON twins side by side; the identity pages are `messages.py`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from ...forms import project_context
from ...forms.message_body import body_parts
from ...history.spend.timing import StepTime
from ...history.usage import Budget, StepBudget, session_budget
from ...model.values import Message
from ...sessions.keys import session_url
from ..present.budget_chart import budget_chart
from ..present.model_views import (
    Paging,
    budget_json,
    message_paging,
    messages_json,
    role_key,
    step_json,
)
from ..present.request_index import page_head, requests_of, transcript_anchors, transcript_link
from ..present.rows import duration
from ..present.spend.timeline import cost_of, timing_of
from ..present.step_models import StepModel, rendered_messages, step_model
from ..present.strings import Strings
from ..present.twins import BudgetJson, MessageBodyJson, MessagesJson, StepJson
from ..state import Lang, ReadSession, State, WebState
from ..views import Direction, From, MaybeFrom, Served, To, page_and_twin, wants_twin

router = APIRouter()

_STEP_KEY = re.compile(r"\d+\.\d+(?:~\d+)?")
# Steps the budget page draws and lists at once: about 250 KB of HTML; a 15,000-step session whole is 20 MB.
STEPS_SHOWN = 200


# --- the context budget --------------------------------------------------------


def _budget(state: WebState, session: ReadSession) -> Budget:
    _, index = requests_of(state, session.entry)
    return state.registry.derived(session.entry.key, "budget", lambda log: session_budget(log, index))


def _window(budget: Budget, start: int | None) -> tuple[Budget, Paging]:
    """The steps from `start` (None: the newest), `STEPS_SHOWN` of them, with the shrinks placed before
    them (and those after the last step, on the last page); `before_step` stays an index into all steps."""
    total = len(budget.steps)
    paging = message_paging(total, start, STEPS_SHOWN)
    first, end = paging["from"] or 0, paging["to"] or 0
    shrinks = tuple(s for s in budget.shrinks if first <= s.before_step < end or s.before_step == end == total)
    return Budget(budget.steps[first:end], shrinks, budget.context_window), paging


# `?sort=`: the steps slowest or costliest first, by their duration, their answer's time to first token or their
# calls' cost (history/spend/)
StepSort = Annotated[
    str, Query(pattern="^(|duration|ttft|cost)$", description="`duration`, `ttft` or `cost`: the most first")
]


def _sorted(budget: Budget, figures: Mapping[str, float | None]) -> Budget:
    """The steps by their figure, the most first, those without one last; a sorted table places no shrinks."""

    def figure(step: StepBudget) -> float:
        value = figures.get(step.key)
        return -1 if value is None else value

    return Budget(tuple(sorted(budget.steps, key=figure, reverse=True)), (), budget.context_window)


def _figures(times: Mapping[str, StepTime], costs: Mapping[str, dict[str, Any]], by: str) -> dict[str, float | None]:
    """Each step's figure `by` (`duration`, `ttft`, `cost`) sorts by."""
    if by == "cost":
        return {key: c["total"] for key, c in costs.items()}
    return {key: t.duration_ms if by == "duration" else t.ttft_ms for key, t in times.items()}


def _step_paging(paging: Paging) -> dict[str, int | None]:
    """`message_paging`'s window, counted in steps."""
    return {("totalSteps" if name == "totalMessages" else name): value for name, value in paging.items()}


@page_and_twin(
    router,
    "/sessions/{key}/steps",
    twin=BudgetJson,
    summary="The model calls, tokens, and compactions of a window of steps",
    name="api_budget",
)
def budget_window(
    request: Request, state: State, session: ReadSession, t: Lang, start: MaybeFrom = None, sort: StepSort = ""
) -> Served[BudgetJson]:
    """The page's window: `from` its first step's index, else the newest steps (with `sort`, the slowest);
    `beforeStep` counts all steps. Each step's `durationMs` and `ttftMs` are null when the log has no times."""
    # `STEPS_SHOWN` steps at a time, the newest by default; the page's chart keeps the whole session's scale,
    # so pages compare
    budget = _budget(state, session)
    times = {s.key: s for s in timing_of(state, session.entry).steps}
    priced = cost_of(state, session.entry).detail_json()
    costs = {s["key"]: {"total": s["total"], "unknownCalls": s["unknownCalls"]} for s in priced["steps"]}
    if sort:
        budget = _sorted(budget, _figures(times, costs, sort))
    window, paging = _window(budget, 0 if sort and start is None else start)
    if wants_twin(request):
        found = budget_json(window)
        for step in found["steps"]:
            if (timed := times.get(step["key"])) is not None:
                step.update(durationMs=timed.duration_ms, ttftMs=timed.ttft_ms)
            step["cost"] = costs.get(step["key"])
        return BudgetJson.model_validate({**_step_paging(paging), **found, "currency": priced["currency"]})
    base = session_url(session.entry.key)
    first = paging["from"] or 0
    chart = None if sort else budget_chart(window, first, budget.peak, lambda step: f"{base}/steps/{step}", t)
    return state.page(
        request,
        "steps/index.html",
        **page_head(session.entry, session.log),
        budget=window,
        first=first,
        paging=_step_paging(paging),
        chart=chart,
        sort=sort,
        took={key: (duration(s.duration_ms), duration(s.ttft_ms)) for key, s in times.items()},
        costs=costs,
        currency=priced["currency"],
    )


# --- the model view of one step ----------------------------------------------------


def _step(state: WebState, session: ReadSession, ref: str, t: Strings) -> StepModel:
    if not _STEP_KEY.fullmatch(ref):
        raise HTTPException(404, f"{ref!r} is not a step: use turn.step, as in 2.1")
    found = step_model(state, session.entry, ref, t)
    if found is None:
        raise HTTPException(404, f"no step {ref} in this session")
    return found


def _call(model: StepModel, number: int) -> int:
    if not 1 <= number <= len(model.calls):
        raise HTTPException(404, f"step {model.requests.step.key} made no model call {number}")
    return number


Call = Annotated[int, Query(ge=1)]  # `?call=`: a step's model call, counted from 1


@page_and_twin(
    router,
    "/sessions/{key}/steps/{ref}",
    twin=StepJson,
    summary="What the model read at one step: every call's request",
    name="api_step",
)
def model_view(
    request: Request, state: State, session: ReadSession, t: Lang, ref: str, start: MaybeFrom = None
) -> Served[StepJson]:
    """Each call's messages are a window: `from` its first message's index, else the newest window."""
    # the page shows the header, the state and the diff at once, and each call's messages a window at a time
    model = _step(state, session, ref, t)
    if wants_twin(request):
        twin = step_json(model.requests, model.calls, start, state.settings.window_rows, session.log)
        return StepJson.model_validate(twin)
    views = model.calls
    windows = [rendered_messages(state, session.entry, model, t, n, start)[0] for n in range(1, len(views) + 1)]
    main = next((v for v in views if v.answered), None)
    anchors = transcript_anchors(state, session.entry)
    step = model.requests.step
    head = page_head(session.entry, session.log)
    back = transcript_link(head["base_url"], anchors, step.message if step.message is not None else step.start)
    return state.page(
        request,
        "steps/step.html",
        **head,
        step=step,
        calls=views,
        main=main,
        message_windows=windows,
        added_shown=state.settings.window_rows,  # a resumed log's first call adds its whole history
        previous_step=model.requests.previous_step,
        next_step=model.requests.next_step,
        transcript_url=back,
    )


# The page's script asks for the next window of a call's messages in HTML, saying which way it pages (the
# loader it swaps in); the twin pages by `from` and `to` alone: the two keep a handler each.
@router.get("/sessions/{key}/steps/{ref}/messages", response_class=HTMLResponse, include_in_schema=False)
def messages_partial(
    state: State,
    session: ReadSession,
    t: Lang,
    ref: str,
    call: Call = 1,
    start: From = 0,
    stop: To = None,
    direction: Direction = "",
) -> HTMLResponse:
    model = _step(state, session, ref, t)
    html, _ = rendered_messages(state, session.entry, model, t, _call(model, call), start, stop, direction)
    return HTMLResponse(html)


@router.get("/api/sessions/{key}/steps/{ref}/messages", summary="A window of one model call's messages")
def api_messages(
    state: State, session: ReadSession, t: Lang, ref: str, call: Call = 1, start: From = 0, stop: To = None
) -> MessagesJson:
    """The window of call `call`'s messages `from` an index, no further than `to`."""
    model = _step(state, session, ref, t)
    view = model.calls[_call(model, call) - 1]
    paging = message_paging(len(view.messages), start, state.settings.window_rows, stop)
    window = slice(paging["from"], paging["to"])
    messages = messages_json(view.messages[window], session.log)
    return MessagesJson.model_validate({"call": call, **paging, "messages": messages})


# --- one message's content, loaded when its row opens -------------------------------


def _message_at(session: ReadSession, seq: int) -> Message:
    log = session.log
    message = log.event(seq).message if 0 <= seq < log.event_count else None
    if message is None:
        raise HTTPException(404, f"event {seq} holds no message")
    return message


@page_and_twin(
    router,
    "/sessions/{key}/message-bodies/{seq}",
    twin=MessageBodyJson,
    summary="The message an event holds, as the model read it",
    name="api_message_body",
)
def message_body(request: Request, state: State, session: ReadSession, seq: int) -> Served[MessageBodyJson]:
    # the page renders the message's content block by block, or an injected context's rendered form
    message = _message_at(session, seq)
    view = project_context(message) if message.is_context else None
    if wants_twin(request):
        return MessageBodyJson(
            seq=seq,
            role=message.role,
            shown_as=role_key(message).removeprefix("role."),
            rendered_form=view.form if view else None,
            message=message.to_json(),
        )
    if view is not None:
        return state.page(request, "forms/body.html", view=view)
    return state.page(request, "messages/body.html", parts=body_parts(message))
