"""What every router shares: settings, the session registry, templates, page rendering, and the
FastAPI dependencies for the reader's language and for "this session, or a 404"."""

from __future__ import annotations

import os
import site
import sys
from collections import Counter
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from jinja2.bccache import Bucket, BytecodeCache

from ..access import ANONYMOUS, OPEN, AccessControl, Identity
from ..access.shares import ClientSlots, ServerShares
from ..forms import RENDERED_FORMS
from ..history.session import SessionLog
from ..history.transcript import ROW_KINDS
from ..log.records import NotASessionLog
from ..model.rules import DSH_RELEASE
from ..sessions.caches import Latest
from ..sessions.priority import Elsewhere
from ..sessions.registry import Entry, Registry
from ..settings import Settings
from ..store import UploadStore
from .present.clock import WallClock
from .present.folds import Fold, fold_runs
from .present.model_views import message_url
from .present.rows import duration
from .present.spend.cost import cost_cell
from .present.strings import LANGUAGES, Strings, count, element_text, strings_for
from .present.wording import WORDS
from .read_ahead import ReadAhead
from .sign_in import SignIn

PROJECT = Path(__file__).resolve().parents[2]
DATA = Path("share") / "dsh-inspect"  # where a built wheel puts templates/ and static/ (pyproject.toml data-files)


def _asset_roots() -> Iterator[Path]:
    """Where templates/ and static/ may be, most specific first: the repo root (a checkout or an
    editable install), the files this distribution installed, then `<prefix>/share/dsh-inspect`."""
    yield PROJECT
    try:
        files = metadata.distribution("dsh-inspect").files or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.parts[-3:] == (DATA.name, "static", "inspect.css"):
            yield Path(str(file.locate())).resolve().parents[1]
    for prefix in (sys.prefix, site.getuserbase(), sys.base_prefix):
        yield Path(prefix) / DATA


def asset_root() -> Path:
    """The first of `_asset_roots()` holding both templates/ and static/ (the repo root when none does,
    so that the error names the expected place)."""
    for root in _asset_roots():
        if (root / "templates").is_dir() and (root / "static").is_dir():
            return root
    return PROJECT


ASSETS = asset_root()
TEMPLATES = ASSETS / "templates"
STATIC = ASSETS / "static"
HTMX = "htmx-2.0.11.min.js"
HTMX_SSE = "htmx-ext-sse-2.2.4.js"
IDIOMORPH = "idiomorph-ext-0.8.0.min.js"  # idiomorph and its htmx extension, `hx-swap="morph"` (npm idiomorph)


class CompiledOnce(BytecodeCache):
    """Each template's compiled code, kept for every app this process makes: each app has an environment of
    its own (its globals), and without this compiled anew what it renders (the test suite makes hundreds of
    apps; a tenth of a second each). Keyed by the template's name and checked against its source."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


COMPILED = CompiledOnce()


def _templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(TEMPLATES))
    templates.env.bytecode_cache = COMPILED
    # the templates ship with the package: not stat'ed again at each include (a fifth of an export's time)
    templates.env.auto_reload = False
    templates.env.trim_blocks = True
    templates.env.lstrip_blocks = True
    templates.env.globals["htmx_js"] = HTMX
    templates.env.globals["htmx_sse_js"] = HTMX_SSE
    templates.env.globals["idiomorph_js"] = IDIOMORPH
    templates.env.globals["row_kinds"] = ROW_KINDS
    templates.env.globals["rendered_forms"] = RENDERED_FORMS
    templates.env.globals["words"] = WORDS
    templates.env.globals["dsh_release"] = DSH_RELEASE
    templates.env.globals["wall_clock"] = WallClock.of
    templates.env.globals["took"] = duration  # a duration in ms, worded (None: none to show)
    templates.env.globals["cost_cell"] = cost_cell  # a `cost` JSON worded for a column (None: nothing to price)
    templates.env.globals["message_url"] = message_url  # a row's link to its message's identity page
    templates.env.filters["count"] = count
    templates.env.filters["text"] = element_text  # a body's text as element content (quotes unescaped)
    templates.env.globals["fold_runs"] = fold_runs  # rows/_fold.html: the fold rule
    templates.env.tests["fold"] = lambda item: isinstance(item, Fold)
    return templates


def compile_templates(templates: Jinja2Templates) -> None:
    """Compile every template now: a served process does this before it listens, so its
    first visitor does not wait half a second for Jinja (docs/product.md Budgets, W2 cold first screen)."""
    env = templates.env
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)


KEPT_LISTS = 32  # session-list choices (search, filters, sort) kept; the least recently asked go first
# what `elsewhere`'s process reads with, imported once by its fork server
ELSEWHERE_PRELOAD = ("dsh_inspect.sessions.search_index", "dsh_inspect.web.routes.listing")
KEPT_SUMMARIES = 20_000  # sessions' list facts kept (a few hundred bytes each)


@dataclass
class WebState:
    settings: Settings
    registry: Registry
    store: UploadStore | None = None  # None: this server takes no uploads
    access: AccessControl | None = None  # tokens and the audit trail, kept in the store's catalog
    sign_in: SignIn | None = None  # people signed in through an OpenID Connect provider
    streams: Counter[str] = field(default_factory=Counter)  # live tails open, by client address
    templates: Jinja2Templates = field(default_factory=_templates)
    # What the session list made of one registry version, by (version, choice): each recent choice's sessions
    # in order, the filters' values. Sorting every loaded session costs ~5 µs a session; kept, a warm request
    # only slices its page, and a moved version asks afresh (the old ones age out).
    lists: Latest[tuple[Hashable, ...], Any] = field(default_factory=lambda: Latest(KEPT_LISTS))
    # What the list shows of each session read, by (key, file version): kept apart from the read logs, which
    # the read cache lets go (a large upload pushes out many), so a list never reads a log twice for them
    summaries: Latest[tuple[str, Hashable], dict[str, Any]] = field(default_factory=lambda: Latest(KEPT_SUMMARIES))
    read_ahead: ReadAhead[dict[str, Any]] = field(default_factory=ReadAhead)
    # the process that reads large logs for the list and the search index (`sessions/priority.py`)
    elsewhere: Elsewhere = field(default_factory=lambda: Elsewhere(ELSEWHERE_PRELOAD))
    # and the one that diffs costly pairs of texts for a comparison: a reader's waits behind no large read
    diffing: Elsewhere = field(default_factory=lambda: Elsewhere(ELSEWHERE_PRELOAD))
    # each client's share of this process's time (`fair_share.py` counts requests, `routes/live.py` a tail's work)
    shares: ServerShares = field(init=False)
    slots: ClientSlots = field(init=False)  # each client's requests at work at once (`fair_share.py`)

    def __post_init__(self) -> None:
        self.shares = ServerShares(self.settings.server_seconds_per_minute)
        self.slots = ClientSlots(self.settings.requests_per_client)
        # Row views carry their bodies whole; the row templates cut them to this (`capped`, rows/_parts.html).
        self.templates.env.globals["body_cap"] = self.settings.body_cap
        # The most rows a window holds: the page's script asks for fewer when it has less room (static/session.js)
        self.templates.env.globals["window_rows"] = self.settings.window_rows

    def page(self, request: Request, name: str, **context: Any) -> HTMLResponse:
        t = language(request)
        context = {"t": t, "lang": t.lang, "who": identity(request), **context}
        response = self.templates.TemplateResponse(request, name, context)
        asked = request.query_params.get(LANG_PARAM)
        if asked in LANGUAGES and request.cookies.get(LANG_COOKIE) != asked:  # the reader's choice, remembered
            response.set_cookie(
                LANG_COOKIE,
                asked,
                max_age=LANG_DAYS * 86_400,
                httponly=True,
                samesite="lax",
                secure=request.url.scheme == "https",
            )
        return response

    def size_of(self, entry: Entry) -> int | None:
        """The bytes of the session's log: its upload's as catalogued, else its file's on disk; None when
        neither is known (a file gone)."""
        found = self.store.size_of(entry.upload) if entry.upload is not None and self.store is not None else None
        if found is None:
            try:
                found = os.stat(entry.source.path).st_size
            except OSError:
                return None
        return found

    def entry(self, key: str, identity: Identity = OPEN) -> Entry:
        """The entry for `key` (looking again on disk once); a chooser (AmbiguousKey) when several loaded
        copies share that short key; else 404. A session `identity` may not see answers as one never loaded."""
        entry = self.visible(self.registry.entry(key), identity)
        if entry is None:
            self.registry.refresh()
            entry = self.visible(self.registry.entry(key), identity)
        if entry is None:
            copies = tuple(e for e in self.registry.copies(key) if identity.sees_header(e.header))
            if len(copies) == 1 and identity.scoped:  # the others hidden: the one it sees, as if alone
                return copies[0]
            if copies:
                raise AmbiguousKey(key, copies)
            raise HTTPException(404, f"no session {key!r}")
        return entry

    @staticmethod
    def visible(entry: Entry | None, identity: Identity) -> Entry | None:
        return entry if entry is not None and identity.sees_header(entry.header) else None

    def entries(self, identity: Identity) -> list[Entry]:
        """The loaded sessions `identity` may see."""
        every = self.registry.entries()
        return list(every) if not identity.scoped else [e for e in every if identity.sees_header(e.header)]

    def session(self, key: str, identity: Identity = OPEN) -> tuple[Entry, SessionLog]:
        """The entry and its log at the current file version, or 404/422."""
        entry = self.entry(key, identity)
        try:
            log = self.registry.log(entry.key)
        except NotASessionLog as exc:
            raise HTTPException(422, f"{exc.reason} ({exc.location.describe()})") from None
        # the log read for the key: the key was looked up again to read it, and what it names now must be
        # a session `identity` may see, as the entry checked was
        if log is None or not identity.sees_header(log.header.raw if log.header else None):
            raise HTTPException(404, f"no session {key!r}")
        return entry, log


def web(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


# The reader's language: `?lang=en|zh` on any page or twin (the top bar's switch), remembered by a page in a
# cookie; without either, the browser's `Accept-Language`.
LANG_PARAM = "lang"
LANG_COOKIE = "dsh-inspect-lang"
LANG_DAYS = 365


def language(request: Request) -> Strings:
    """The interface language: the one `?lang=` asks for, else the one the reader chose before, else the one
    the browser prefers (`Accept-Language`). An unknown code is no choice."""
    for chosen in (request.query_params.get(LANG_PARAM), request.cookies.get(LANG_COOKIE)):
        if chosen in LANGUAGES:
            return LANGUAGES[chosen]
    return strings_for(request.headers.get("accept-language"))


def identity(request: Request) -> Identity:
    """Who the request acts as, as the access dependency found (web/access.py). Where it did not run: OPEN on a
    server without access control, else nobody (fail closed)."""
    found: Identity | None = getattr(request.state, "identity", None)
    if found is not None:
        return found
    return ANONYMOUS if web(request).settings.access_control else OPEN


async def session_entry(request: Request, key: str) -> Entry:
    """The session at `/sessions/{key}`, or 404 (also for one the request's identity may not see): its entry,
    the log not read. Without a store a known key answers at once, and only an unknown one looks on disk again,
    in the thread pool; with one, the look is made there: after any upload it finds every stored session
    again, and it may bring an upload's bytes to this machine, either of which on the event loop held up every
    request of the process (issue 33)."""
    state = web(request)
    who = identity(request)
    if state.store is not None:
        return await run_in_threadpool(state.entry, key, who)
    entry = state.visible(state.registry.entry(key), who)
    return entry if entry is not None else await run_in_threadpool(state.entry, key, who)


class AmbiguousKey(Exception):
    """A short key that more than one loaded copy could mean: answered with a chooser (HTTP 300)."""

    def __init__(self, key: str, copies: tuple[Entry, ...]) -> None:
        super().__init__(key)
        self.key = key
        self.copies = copies


@dataclass(frozen=True, slots=True)
class Session:
    entry: Entry
    log: SessionLog


def session_of(request: Request, key: str) -> Session:
    """The session at `/sessions/{key}` read at its current file version, or 404 (422 for a file that is no log)."""
    return Session(*web(request).session(key, identity(request)))


async def _state(request: Request) -> WebState:
    return web(request)


async def _language(request: Request) -> Strings:
    return language(request)


async def _identity(request: Request) -> Identity:
    return identity(request)


# The dependencies routes declare, so each is written once. The cheap ones are coroutines, so a
# request does not pay a thread hop for each; the ones that may read a disk run in the thread pool.
State = Annotated[WebState, Depends(_state)]
Lang = Annotated[Strings, Depends(_language)]
SessionEntry = Annotated[Entry, Depends(session_entry)]
Who = Annotated[Identity, Depends(_identity)]
ReadSession = Annotated[Session, Depends(session_of)]
