"""A step's model view as the pages show it: its request derived and its views made once per file
version and language (the latest few steps kept), each call's messages rendered a window at a time.

The last step of a long session read its whole history: its request is derived from a fold over
the log and its message list is thousands of rows. Keeping the views and the rendered windows
makes its first screen cost what the first step's does (docs/product.md Budgets, windowing). A kept view
holds its message rows, not the decoded messages they show (W3's last request: 70,849 of them, about
90 MiB): each is decoded only while its row is made, and a JSON window reads its messages again from the log.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from markupsafe import Markup

from ...history.requests import StepRequests, step_requests
from ...history.session import SessionLog
from ...sessions.caches import Latest
from ...sessions.keys import session_url
from ...sessions.registry import Entry
from ..state import WebState
from .model_views import CallView, Paging, message_paging, step_views
from .request_index import requests_of
from .strings import Strings

STEPS_KEPT = 4  # model views kept per session version: the step read and the few before it
WINDOWS_KEPT = 4  # rendered message windows kept per call: the first screen and the latest scrolled to


@dataclass(frozen=True, slots=True)
class StepModel:
    """One step's model view in one language, with the windows of each call's messages rendered so far."""

    requests: StepRequests  # its calls' messages left out: `calls` holds their rows
    calls: tuple[CallView, ...]
    # per call: (first, stop, direction) → its window
    windows: tuple[Latest[tuple[int, int | None, str], tuple[Markup, Paging]], ...]


@dataclass(frozen=True, slots=True)
class StepModels:
    """The latest few steps of one session version, their model views by language and step key; None:
    no such step."""

    views: Latest[tuple[str, str], StepModel | None]


def _views(requests: StepRequests | None, log: SessionLog, t: Strings) -> StepModel | None:
    if requests is None:
        return None
    calls = tuple(replace(c, request=replace(c.request, messages=())) for c in step_views(requests, log, t))
    kept = replace(requests, calls=tuple(c.request for c in calls))
    return StepModel(kept, calls, tuple(Latest(WINDOWS_KEPT) for _ in calls))


def step_model(state: WebState, entry: Entry, ref: str, t: Strings) -> StepModel | None:
    """Step `ref`'s model view at the log's current file version, in `t`'s language; None: no such step."""
    log, index = requests_of(state, entry)
    models = state.registry.derived(entry.key, "model-views", lambda _: StepModels(Latest(STEPS_KEPT)))
    built = []

    def build() -> StepModel | None:
        built.append(ref)
        return _views(step_requests(log, index, ref), log, t)

    found = models.views.get((t.lang, ref), build)
    if built:  # a new view, kept inside the session's: `cache_mb` weighs it
        state.registry.reweigh(entry.key, "model-views")
    return found


def rendered_messages(
    state: WebState,
    entry: Entry,
    model: StepModel,
    t: Strings,
    number: int,
    start: int | None,
    stop: int | None = None,
    direction: str = "",
) -> tuple[Markup, Paging]:
    """`steps/_messages.html` for call `number`'s window at `start` (None: the newest), no further than
    `stop`, and its paging: rendered once per file version."""
    call = model.calls[number - 1]
    paging = message_paging(len(call.messages), start, state.settings.window_rows, stop)
    first = paging["from"] or 0

    def render() -> tuple[Markup, Paging]:
        template = state.templates.env.get_template("steps/_messages.html")
        html = template.render(
            t=t,
            lang=t.lang,
            base_url=session_url(entry.key),
            step_key=model.requests.step.key,
            call=number,
            messages=call.messages[first : paging["to"]],
            paging=paging,
            direction=direction,
        )
        return Markup(html), paging

    return model.windows[number - 1].get((first, stop, direction), render)
