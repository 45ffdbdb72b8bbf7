"""The session list: header facts at once, the rest from a per-version cache; search, filters, sorting, paging.

Header facts (id, project, created, carrier) answer at once for every session. The facts of a read
(title, first prompt, last activity, counts, tokens, verdict, errors) come from a summary cached per
file version: the page shows those it finds, and asks for the rest (`/sessions-summaries`, posted by htmx),
whose cells come back to be swapped in by id. Only a sort or a filter by such a fact
reads every session first, as a search by title always has.

The order a choice gives and the filters' values are kept per registry version (`WebState.lists`): a warm
request costs its page's rows, not the number of sessions loaded.

Each identity sees its own list (docs/decisions/0020-access-control.md): a token scoped to projects only their
sessions, in the rows, the counts and the filters' values; a token that may list but not read (`metrics`) the
facts without a title, a first prompt or any other text of the log, and a search matches its id, project and
path alone. What is kept per version is kept per `sight` too, so no identity is answered from another's list.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from ...access import Identity
from ...history.prompts import first_prompt
from ...history.row_facts import error_count
from ...history.session import SessionLog, load_session
from ...history.spend.cost import Prices, session_cost
from ...history.spend.timing import session_wall
from ...history.spend.tokens import session_usage
from ...log.plaintext import ReadLimits
from ...log.sources import SessionSource
from ...model.plain_text import title_text
from ...sessions.keys import session_url
from ...sessions.priority import ELSEWHERE_BYTES
from ...sessions.registry import Entry
from ..present.generation_facts import generation_mark
from ..present.listed import (
    cached_summary,
    created_at,
    cwd_of,
    kept_as,
    listed_row,
    reads,
    shown_title,
    stamp,
    withheld,
)
from ..present.spend.overview import models_read, overview, overview_phrases
from ..present.twins import ListingJson
from ..present.wording import UNREADABLE, WORDS
from ..state import State, WebState, Who

router = APIRouter()
PAGE_SIZE = 50
SUMMARIES_AT_ONCE = PAGE_SIZE  # sessions one `/sessions-summaries` answers: a list page's
# sessions/cells.html, filled by a read
SUMMARY_CELLS = ("title", "prompt", "activity", "counts", "tokens", "duration", "cost", "verdict")
SUMMARIES_BODY = 4 << 20  # a page's keys: 50 of them, however long, but not without end
# Log bytes a summary read gets through in a second on a busy machine (a validating read, niced), with margin: a
# list waits only for sessions this fast to read within its wait
READ_PER_SECOND = 8 * 1024 * 1024
REFRESH_MS = 4000  # how often the list page reads itself again for new sessions and facts (a test may set it shorter)

SortColumn = Literal[
    "title",
    "prompt",
    "project",
    "created",
    "activity",
    "turns",
    "steps",
    "tokens",
    "duration",
    "cost",
    "verdict",
    "carrier",
]
Order = Literal["asc", "desc"]
# what a sort by these reads: header facts alone, no session's log
HEADER_SORTS = frozenset({"project", "created", "carrier"})
# columns of text, which a first click sorts A to Z; the others (times, counts, verdicts) start from the most
TEXT_SORTS = frozenset({"title", "prompt", "project", "carrier"})
# the order a verdict sorts in: dsh's best answer first
VERDICT_RANK = {verdict: rank for rank, verdict in enumerate(WORDS.verdicts)}


@dataclass(frozen=True, slots=True)
class ListQuery:
    """What the reader chose: a search, filters, a sort and a page; all of it in the URL."""

    q: str = ""
    sort: SortColumn = "created"
    order: Order = "desc"
    verdict: str = ""
    project: str = ""
    carrier: str = ""
    errors: bool = False
    page: int = 1
    label: str = ""  # only the sessions an upload of which carries it (`push --label`)
    model: str = ""  # only the sessions with a model call answered by this model

    def url(self, **change: Any) -> str:
        """The list's URL for these choices with `change` made; choices left at their default are left out."""
        chosen = replace(self, **change)
        params = {
            name: ("true" if value is True else value)
            for name, value in (
                ("q", chosen.q),
                ("verdict", chosen.verdict),
                ("project", chosen.project),
                ("carrier", chosen.carrier),
                ("label", chosen.label),
                ("model", chosen.model),
                ("errors", chosen.errors),
                ("sort", chosen.sort if (chosen.sort, chosen.order) != ("created", "desc") else ""),
                ("order", chosen.order if (chosen.sort, chosen.order) != ("created", "desc") else ""),
                ("page", chosen.page if chosen.page > 1 else ""),
            )
            if value
        }
        return "/?" + urlencode(params) if params else "/"

    def sorted_by(self, column: str) -> str:
        """A column header's link: sort by `column`; the column sorted by already turns its order round."""
        if column == self.sort:
            return self.url(order="asc" if self.order == "desc" else "desc", page=1)
        return self.url(sort=column, order="asc" if column in TEXT_SORTS else "desc", page=1)

    def aria_sort(self, column: str) -> str:
        if column != self.sort:
            return "none"
        return "ascending" if self.order == "asc" else "descending"

    @property
    def reads_logs(self) -> bool:
        """Whether answering needs every candidate's summary (a sort or filter by a fact of the read)."""
        return self.sort not in HEADER_SORTS or bool(self.verdict) or self.errors or bool(self.model)


def list_query(
    q: Annotated[str, Query(description="text found in the title, first prompt, id, folder or path")] = "",
    sort: Annotated[SortColumn, Query(description="the column to sort by")] = "created",
    order: Annotated[Order, Query(description="`asc` or `desc`")] = "desc",
    verdict: Annotated[str, Query(description="only sessions with this verdict (`accepted`, …, `unreadable`)")] = "",
    project: Annotated[str, Query(description="only sessions whose header `cwd` is this")] = "",
    carrier: Annotated[str, Query(description="only sessions stored in this carrier (`jsonl`, `sqlite`, …)")] = "",
    errors: Annotated[bool, Query(description="only sessions with a row that reports an error")] = False,
    label: Annotated[
        str, Query(description="only uploaded sessions an upload of which carries this label (`push --label`)")
    ] = "",
    model: Annotated[str, Query(max_length=200, description="only sessions with a call this model answered")] = "",
) -> ListQuery:
    if verdict and verdict not in WORDS.verdicts:
        raise HTTPException(422, f"no verdict {verdict!r}; known: {', '.join(WORDS.verdicts)}")
    return ListQuery(q, sort, order, verdict, project, carrier, errors, label=label, model=model)


# the reader's choices, as the page and its JSON twin both take them
Choices = Annotated[ListQuery, Depends(list_query)]


def last_activity(log: SessionLog) -> int | None:
    """The time of the latest stored event that carries one (epoch ms); fixtures carry none."""
    for seq in range(log.stored_count - 1, max(log.stored_count - 64, 0) - 1, -1):
        time = log.event(seq).time
        if time > 0:
            return time
    return None


def summary_of(log: SessionLog, prices: Prices) -> dict[str, Any]:
    """What the list shows of a read log; `tokens` is every call's billed input and its output summed; `cost`
    its calls priced, `models` the models that answered them, `durations` its wall time."""
    usage = session_usage(log)
    active = last_activity(log)
    cost = session_cost(log, prices)
    wall, backwards = session_wall(log)
    return {
        "title": log.title,  # as logged: Markdown, maybe
        "plainTitle": title_text(log.title),  # as the list shows it
        "turns": log.turns,
        "steps": log.steps,
        "events": log.stored_count,
        "verdict": log.verdict.category,
        "firstPrompt": first_prompt(log),
        "lastActivityAt": active,
        "lastActivity": stamp(active),
        "tokens": usage.context + usage.output if usage else None,
        "errors": error_count(log),
        "durations": {"wallMs": wall, "clockBackwards": backwards},
        "cost": cost.to_json(),
        "models": sorted({c.model for c in cost.calls}),
    }


def summary(state: WebState, entry: Entry) -> dict[str, Any]:
    """The summary, read once per file version (a log that cannot be read: unreadable, and read again next time).
    A large log is read by the process for heavy reads (`WebState.elsewhere`), and only its summary kept."""
    kept = kept_as(state, entry)
    prices = state.settings.prices()
    read = partial(summary_of, prices=prices)
    try:
        if kept is None:
            return state.registry.derived(entry.key, "summary", read)
        if read_elsewhere(state, entry) and state.registry.peek(entry.key, "summary") is None:
            limits = state.registry.limits
            return state.summaries.get(kept, lambda: state.elsewhere.run(read_summary, entry.source, limits, prices))
        return state.summaries.get(kept, lambda: state.registry.derived(entry.key, "summary", read))
    except Exception as exc:
        return unreadable_summary(exc)


def read_elsewhere(state: WebState, entry: Entry) -> bool:
    """Whether the session's log is large enough to be read by the process for heavy reads."""
    return (state.size_of(entry) or 0) >= ELSEWHERE_BYTES


def read_summary(source: SessionSource, limits: ReadLimits, prices: Prices) -> dict[str, Any]:
    """The summary of the log `source` holds, read afresh: what the process for heavy reads hands back."""
    try:
        return summary_of(load_session(source, limits=limits), prices)
    except Exception as exc:
        return unreadable_summary(exc)


def unreadable_summary(exc: Exception) -> dict[str, Any]:
    return {
        "title": None,
        "plainTitle": None,
        "turns": None,
        "steps": None,
        "events": None,
        "verdict": UNREADABLE,
        "firstPrompt": None,
        "lastActivityAt": None,
        "lastActivity": None,
        "tokens": None,
        "errors": None,
        "durations": None,
        "cost": None,
        "models": [],
        "error": str(exc),
    }


def summaries_within(state: WebState, entries: Sequence[Entry]) -> tuple[dict[str, dict[str, Any]], int]:
    """Each session's summary by key, those not read yet read in the background and waited for at most
    `list_wait_ms` if they are small enough to be read by then (`read_ahead.py`); and how many are still being
    read, left out."""
    found: dict[str, dict[str, Any]] = {}
    unread: dict[str, Callable[[], dict[str, Any]]] = {}
    for e in entries:
        kept = cached_summary(state, e)
        if kept is not None:
            found[e.key] = kept
        else:
            unread[e.key] = partial(summary, state, e)
    seconds = state.settings.list_wait_ms / 1000
    large = {e.key for e in entries if e.key in unread and read_elsewhere(state, e)}
    read, pending = state.read_ahead.gather(unread, seconds, soon_read(state, entries, unread, seconds), large)
    return {**found, **read}, pending


def soon_read(state: WebState, entries: Sequence[Entry], unread: Collection[str], seconds: float) -> set[str]:
    """The keys of the `unread` sessions worth waiting for: the smallest first, as many as could be read within
    `seconds` by their size (a size not known is not waited for)."""
    sizes = sorted((size, e.key) for e in entries if e.key in unread and (size := state.size_of(e)) is not None)
    budget, waited = seconds * READ_PER_SECOND, set()
    for size, key in sizes:
        if size > budget:
            break
        budget -= size
        waited.add(key)
    return waited


def _header_matches(entry: Entry, needle: str) -> bool:
    """Whether `needle` is in the session's key, id, path or project: what most searches are answered by,
    without reading the log."""
    facts = [entry.key, entry.session_id or "", entry.source.label, cwd_of(entry)]
    return any(needle in f.lower() for f in facts)


def _text_matches(found: dict[str, Any], needle: str) -> bool:
    """Whether `needle` is in the session's title or first prompt."""
    return any(needle in (found.get(name) or "").lower() for name in ("plainTitle", "title", "firstPrompt"))


# A sort's value of a session; None sorts last whichever the order.
SortValue = Callable[[Entry, dict[str, Any] | None], Any]
SORT_VALUES: dict[str, SortValue] = {
    "title": lambda e, s: shown_title(e, s).casefold(),
    "prompt": lambda e, s: ((s or {}).get("firstPrompt") or "").casefold() or None,
    "project": lambda e, s: cwd_of(e) or None,
    "created": lambda e, s: created_at(e),
    "activity": lambda e, s: (s or {}).get("lastActivityAt"),
    "turns": lambda e, s: (s or {}).get("turns"),
    "steps": lambda e, s: (s or {}).get("steps"),
    "tokens": lambda e, s: (s or {}).get("tokens"),
    "duration": lambda e, s: ((s or {}).get("durations") or {}).get("wallMs"),
    "cost": lambda e, s: ((s or {}).get("cost") or {}).get("total"),
    "verdict": lambda e, s: VERDICT_RANK.get((s or {}).get("verdict", "")),
    "carrier": lambda e, s: (e.source.kind, e.source.label),
}


def _ordered(entries: list[Entry], summaries: dict[str, dict[str, Any]], choice: ListQuery) -> list[Entry]:
    """`entries` by the chosen column (newest first among equals), sessions without a value last."""
    newest = sorted(entries, key=lambda e: (-created_at(e), e.key))
    value = SORT_VALUES[choice.sort]
    keyed = [(value(e, summaries.get(e.key)), e) for e in newest]
    known = sorted(
        (pair for pair in keyed if pair[0] is not None), key=lambda pair: pair[0], reverse=choice.order == "desc"
    )
    return [e for _, e in known] + [e for v, e in keyed if v is None]


def _kept(found: dict[str, Any] | None, choice: ListQuery) -> bool:
    if choice.verdict and (found or {}).get("verdict") != choice.verdict:
        return False
    if choice.model and choice.model not in (found or {}).get("models", ()):
        return False
    return not choice.errors or bool((found or {}).get("errors"))


@dataclass(frozen=True, slots=True)
class Loaded:
    """What the filters offer of the loaded sessions, and how many there are: counted once per version."""

    count: int
    projects: tuple[str, ...]  # sorted
    carriers: tuple[str, ...]  # sorted


def loaded_facts(entries: Sequence[Entry]) -> Loaded:
    return Loaded(
        len(entries),
        tuple(sorted({cwd_of(e) for e in entries} - {""})),
        tuple(sorted({e.source.kind for e in entries} - {""})),
    )


def _offered(values: tuple[str, ...], chosen: str) -> list[str]:
    """`values` with the one chosen in its sorted place when they lack it."""
    offered = list(values)
    if chosen and chosen not in values:
        bisect.insort(offered, chosen)
    return offered


def _choices(loaded: Loaded, choice: ListQuery) -> dict[str, list[str]]:
    """The values each filter offers: every verdict, the loaded sessions' projects and carriers, and the one
    chosen even when no session has it (any more), so the form shows what the list is filtered by."""
    return {
        "verdicts": list(WORDS.verdicts),
        "projects": _offered(loaded.projects, choice.project),
        "carriers": _offered(loaded.carriers, choice.carrier),
    }


@dataclass(frozen=True, slots=True)
class Chosen:
    """The sessions a choice keeps, in its order, and how many it could not tell of yet (being read)."""

    entries: tuple[Entry, ...]
    reading: int


def chosen(state: WebState, loaded: list[Entry], choice: ListQuery, who: Identity) -> Chosen:
    """The loaded sessions `choice` keeps (its page aside), in its order; sorted and searched by what a reader
    of `content` or not is shown, so neither the order nor the matches tell a title it may not read. A session
    still being read is left out of a search or filter by what the read tells, and sorted last."""
    needle = choice.q.strip().lower()
    entries = [
        e
        for e in loaded
        if (not choice.project or cwd_of(e) == choice.project)
        and (not choice.carrier or e.source.kind == choice.carrier)
        and (not choice.label or choice.label in e.labels)
    ]
    by_header = {e.key for e in entries if not needle or _header_matches(e, needle)}
    # a title search reads the sessions their header does not answer for, once; a sort or filter by a fact of
    # the read, every one
    wanted = [e for e in entries if choice.reads_logs or (e.key not in by_header and reads(who, e))]
    found, reading = summaries_within(state, wanted)
    entries = [
        e
        for e in entries
        if e.key in by_header or (reads(who, e) and e.key in found and _text_matches(found[e.key], needle))
    ]
    summaries: dict[str, dict[str, Any]] = {}
    if choice.reads_logs:
        summaries = {e.key: withheld(found[e.key], reads(who, e)) for e in entries if e.key in found}
        filtered = bool(choice.verdict or choice.errors or choice.model)
        entries = [e for e in entries if (_kept(summaries[e.key], choice) if e.key in summaries else not filtered)]
    return Chosen(tuple(_ordered(entries, summaries, choice)), reading)


def sight(identity: Identity) -> Hashable:
    """What of the list an identity's answer depends on, as `WebState.lists` keeps it: its grants (the projects
    each sees, and whether it may read titles and prompts there). Identities alike share what is kept; no
    identity is answered from a list made for another sight."""
    return (identity.everything, identity.grants)


def listing(state: WebState, choice: ListQuery, who: Identity, size: int | None = PAGE_SIZE) -> dict[str, Any]:
    """Sessions as chosen (newest first unless sorted otherwise), `size` a page (None: every one on one page),
    of those `who` sees and as it may see them."""
    state.registry.refresh()
    version = state.registry.version  # read before what is made of it: a change meanwhile shows next request
    seen = sight(who)
    loaded = state.lists.get((version, ("loaded", seen)), lambda: loaded_facts(state.entries(who)))
    # made again once a read under way for it has ended, as well as when the sessions moved
    picked: Chosen = state.lists.get(
        (version, state.read_ahead.ended, (replace(choice, page=1), seen)),
        lambda: chosen(state, state.entries(who), choice, who),
    )
    # what the summaries read so far tell of the chosen sessions and of every one (a look-up in the summaries
    # kept per session, no read): made again once one more summary is kept, as a session's cells are read a page
    # at a time, not at each request (a warm list of 10,000 uploads spent 35 ms of its 40 on it)
    totals, models = state.lists.get(
        (version, state.read_ahead.ended, state.summaries.stored, ("overview", replace(choice, page=1), seen)),
        lambda: (overview(state, picked.entries), models_read(state, state.entries(who))),
    )
    entries = picked.entries
    size = size or max(1, len(entries))
    pages = max(1, -(-len(entries) // size))
    page = min(max(choice.page, 1), pages)
    shown = entries[(page - 1) * size : page * size]
    return {
        "query": choice.q,
        "sort": choice.sort,
        "order": choice.order,
        "filters": {
            "verdict": choice.verdict,
            "project": choice.project,
            "carrier": choice.carrier,
            "errors": choice.errors,
            "label": choice.label,
            "model": choice.model,
        },
        "choices": {**_choices(loaded, choice), "models": _offered(models, choice.model)},
        "overview": totals,
        "page": page,
        "pages": pages,
        "total": len(entries),
        "loaded": loaded.count,  # every session loaded, chosen or not
        # a choice that read every summary shows them all; else the page's that were read, the rest filled in later
        "sessions": [
            {
                **listed_row(e, cached_summary(state, e), reads(who, e)),  # a choice that read them: every one
                "generation": generation_mark(state, e),  # an earlier generation says it is one
            }
            for e in shown
        ],
        # files that hold no session have no project: only an identity that sees every project sees them
        "refused": [] if who.scoped else [{"path": r.path, "reason": r.reason} for r in state.registry.refused()],
        "unavailable": down.role if (down := state.registry.unavailable) is not None else None,
        "reading": picked.reading,
    }


# The list and its twin keep a handler each, sharing the reader's choices (`Choices`) and `listing`: without
# `page` the list shows the first 50 and the twin every session, which `summaries` may read at once.
@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def index(request: Request, state: State, who: Who, choice: Choices, page: int = Query(1, ge=1)) -> HTMLResponse:
    chosen = replace(choice, page=page)
    data = listing(state, chosen, who)
    shown = replace(chosen, page=data["page"])
    words = overview_phrases(data["overview"], state.settings.prices())
    currency = data["overview"]["cost"]["currency"]
    return state.page(
        request, "index.html", **data, choice=shown, refresh_ms=REFRESH_MS, overview_words=words, currency=currency
    )


@router.get(
    "/api/sessions", summary="The loaded sessions (header facts; summaries once read), searched, filtered, sorted"
)
def api_sessions(
    state: State,
    who: Who,
    choice: Choices,
    page: int | None = Query(None, ge=1, description="a page of 50, as `/?page=N` shows; without it, every session"),
    summaries: bool = False,
) -> ListingJson:
    chosen, size = replace(choice, page=page or 1), PAGE_SIZE if page is not None else None
    data = listing(state, chosen, who, size)
    if summaries:
        for item in data["sessions"]:
            entry = state.registry.entry(item["key"])
            found = summary(state, entry) if entry else None
            item.update(listed_row(entry, found, reads(who, entry)) if entry else {"summary": None})
        # the overview and the model choices were made before these reads: made again, they count them too
        counted = listing(state, chosen, who, size)
        data["overview"], data["choices"] = counted["overview"], counted["choices"]
    return ListingJson.model_validate(data)


@router.post("/sessions-summaries", response_class=HTMLResponse, include_in_schema=False)
async def summaries_partial(request: Request, state: State, who: Who) -> HTMLResponse:
    """A page's titles, counts, verdicts and the other facts of a read, each cell to be swapped in out of band
    by its id: every one of SUMMARY_CELLS, or those the page has (`cell=…`, the uploads page's title and
    verdict). The page's keys come in the body, as a form posts them (`key=…&key=…`): keys
    are log data, as long as a log makes them, and a URL is not (a page of long keys was a request line the
    server refuses). A key the identity may not see answers nothing, as an unknown one."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > SUMMARIES_BODY:
            raise HTTPException(413, f"a summaries request carries at most {SUMMARIES_BODY} bytes of keys")
    form = parse_qs(body.decode("utf-8", "replace"))
    keys = form.get("key", [])[:SUMMARIES_AT_ONCE]
    shown = [cell for cell in SUMMARY_CELLS if cell in form.get("cell", SUMMARY_CELLS)]
    items = await run_in_threadpool(summary_items, state, keys, who)
    return state.page(request, "sessions/summaries.html", items=items, shown=shown, swap_oob=True)


def summary_items(state: WebState, keys: list[str], who: Identity) -> list[dict[str, Any]]:
    items = []
    for key in keys:
        entry = state.visible(state.registry.entry(key), who)
        if entry is not None:
            items.append(
                {**listed_row(entry, summary(state, entry), reads(who, entry)), "key": key, "url": session_url(key)}
            )
    return items
