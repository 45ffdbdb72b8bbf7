"""The `dsh_inspect` pytest plugin: a real server over a temporary dsh root, seeded histories,
a Chromium page that fails on page errors, and aria goldens.

    def test_reading_a_history(seed_session, chromium_page):
        url = seed_session("tests/fixtures/session.jsonl")
        chromium_page.goto(url)
        ...

and, from `dsh_inspect.testing`, `conversation_diff` / `assert_same_conversation` to say where two
recorded conversations part (`conversations.py`).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from ..log.writer import Compression, append_batch
from .browser import Chromiums, PageSettings
from .geometry import geometry_text
from .goldens import Substitutions, compare
from .seeding import SeededSession, assign_positions, numbered, seed_events, seed_problem, write_seed
from .server import live_server

Event = dict[str, Any]
COMPRESSIONS: dict[str, Compression] = {"zstd": "zstd", "none": "none"}  # the `dsh_root` marker's choices
CHROMIUMS = pytest.StashKey[Chromiums]()  # the session's browsers, once a test asked for one


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dsh-inspect")
    group.addoption(
        "--refresh-goldens",
        action="store_true",
        default=False,
        help="rewrite the goldens (aria, text, geometry) from what the test sees now",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dsh_root(compression): the seeded root's encoding, 'zstd' (default) or 'none'")
    config.addinivalue_line(
        "markers",
        "dsh_browser(locale='en-US', viewport=(1680, 1000), color_scheme='light', scrollbars=False): "
        "how chromium_page opens",
    )


@dataclass
class _Seeded:
    """A seeded session as the inspector keeps it: its page URL, header, events and placeholder values."""

    url: SeededSession
    header: dict[str, Any]
    events: list[Event]
    values: dict[str, Any]


@dataclass
class Inspector:
    """A running dsh-inspect serving one temporary dsh root; relative paths resolve against `folder` (the
    test file's)."""

    url: str
    root: Path
    compression: Compression
    folder: Path = field(default_factory=Path.cwd)
    _seeded: dict[str, _Seeded] = field(default_factory=dict, repr=False)

    @property
    def sessions(self) -> dict[str, SeededSession]:
        """The sessions seeded so far, by id: their page URLs."""
        return {sid: seeded.url for sid, seeded in self._seeded.items()}

    def seed_session(
        self,
        source: Path | str | Sequence[Event],
        *,
        cwd: str | os.PathLike[str] | None = None,
        placeholders: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        validate: bool = True,
    ) -> SeededSession:
        """Write a fixture log (a path) or a list of events as a real dsh artifact; its page URL. With
        `validate`, events dsh would not load as they are raise `SeedError` and nothing is written."""
        sid = session_id or f"session-{uuid.uuid4()}"
        if isinstance(source, (str, Path)):
            source = resolve(source, self.folder, "seed_session")
        plan = seed_events(source, session_id=sid, cwd=cwd, placeholders=placeholders)
        problem = seed_problem(plan.header, plan.events) if validate else None
        if problem is not None:
            raise problem
        path = write_seed(self.root, plan, self.compression)
        last = plan.events[-1]["time"] if plan.events else plan.header["createdAt"]
        seeded = SeededSession(
            f"{self.url}/sessions/{quote(sid, safe='')}",
            session_id=sid,
            path=path,
            events=len(plan.events),
            last_time=last,
        )
        self._seeded[sid] = _Seeded(seeded, plan.header, list(plan.events), plan.values)
        return seeded

    def append_events(self, session: SeededSession | str, events: Sequence[Event], *, validate: bool = True) -> None:
        """Append events as one batch (a zstd frame, or lines), as a live dsh does. With `validate`, events dsh
        would not load after what was seeded raise `SeedError` and nothing is appended (a final turn left
        open is fine: a live session is mid-turn)."""
        seeded = self._find(session)
        url = seeded.url
        fresh = numbered(events, seeded.values, start=url.events, last_time=url.last_time, keep_times=True)
        whole = assign_positions([*seeded.events, *fresh])
        batch = whole[url.events :]
        problem = seed_problem(seeded.header, whole, first=url.events, open_turn=True) if validate else None
        if problem is not None:
            raise problem
        append_batch(url.path, batch)
        seeded.events = whole
        url.events, url.last_time = len(whole), (batch[-1]["time"] if batch else url.last_time)

    def _find(self, session: SeededSession | str) -> _Seeded:
        for seeded in self._seeded.values():
            if session in (str(seeded.url), seeded.url.id):
                return seeded
        raise KeyError(f"{session!r} was not seeded by this inspector")


def resolve(path: Path | str, folder: Path, what: str) -> Path:
    """`path`, or where it is relative to `folder` (the test file's), which must exist."""
    given = Path(path)
    found = given if given.is_absolute() else folder / given
    if not found.is_file():
        raise FileNotFoundError(
            f"{what}: no file {found} ({str(given)!r}, relative paths resolve against the test file's folder, {folder})"
        )
    return found


@pytest.fixture
def inspector(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspector]:
    """A real dsh-inspect (uvicorn on a free loopback port) over an empty temporary dsh root."""
    marker = request.node.get_closest_marker("dsh_root")
    asked = marker.kwargs.get("compression", "zstd") if marker else "zstd"
    compression = COMPRESSIONS.get(asked) if isinstance(asked, str) else None
    if compression is None:
        raise pytest.UsageError(f"dsh_root compression must be 'zstd' or 'none', not {asked!r}")
    root = tmp_path_factory.mktemp("dsh-home") / "sessions"
    root.mkdir()
    with live_server([str(root)]) as url:
        yield Inspector(url, root, compression, Path(request.node.path).parent)
        # Pages open on this server (in the test's own contexts, or `chromium_page`'s) may hold live tails
        # open: their contexts are closed before the server stops, so that it stops at once and quietly.
        chromiums = request.config.stash.get(CHROMIUMS, None)
        if chromiums:
            chromiums.close_contexts_on(url)


@pytest.fixture
def seed_session(inspector: Inspector) -> Callable[..., SeededSession]:
    """`seed_session(source, *, cwd=None, placeholders=None, session_id=None, validate=True)` → the session's
    page URL (a `SeededSession`); `SeedError` for events dsh would not load, unless `validate=False`."""
    return inspector.seed_session


@pytest.fixture
def append_events(inspector: Inspector) -> Callable[..., None]:
    """`append_events(session, events, *, validate=True)`: grow a seeded session the way dsh appends."""
    return inspector.append_events


@pytest.fixture(scope="session")
def dsh_chromiums(pytestconfig: pytest.Config) -> Iterator[Chromiums]:
    """The session's Chromiums: one with scrollbars hidden (Playwright's default) and, once a test asks for
    `scrollbars=True`, one that draws them."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromiums = Chromiums(playwright)
        pytestconfig.stash[CHROMIUMS] = chromiums
        try:
            yield chromiums
        finally:
            del pytestconfig.stash[CHROMIUMS]
            chromiums.close()


@pytest.fixture(scope="session")
def dsh_chromium(dsh_chromiums: Chromiums) -> Any:
    """One Chromium for the session (Debian's binary, or `$DSH_INSPECT_CHROMIUM`), scrollbars hidden: a
    Playwright `Browser` for tests that open contexts of their own (`chromium_page` is usually enough)."""
    return dsh_chromiums.browser(scrollbars=False)


@dataclass
class PageWatch:
    """What `chromium_page` heard from its page: console errors and uncaught exceptions."""

    page: Any
    problems: list[str] = field(default_factory=list)
    reported: int = 0  # problems already reported by the test's call phase

    def unreported(self) -> list[str]:
        fresh, self.reported = self.problems[self.reported :], len(self.problems)
        return fresh


PAGE_WATCH = pytest.StashKey[PageWatch]()


def _page_errors(problems: list[str]) -> str:
    return "the page reported errors:\n" + "\n".join(problems)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A page error fails the test itself (its call phase), not its teardown: after the test
    function ran, flush the page's pending events and fail when any was an error."""
    try:
        result = yield
    except Exception as exc:
        watch = item.stash.get(PAGE_WATCH, None)
        if watch is not None and watch.problems:
            exc.add_note(_page_errors(watch.unreported()))
        raise
    watch = item.stash.get(PAGE_WATCH, None)
    if watch is not None:
        # A round trip to Playwright delivers events still in flight (it fails once the test closed its page).
        with contextlib.suppress(Exception):
            watch.page.wait_for_timeout(0)
        if watch.problems:
            pytest.fail(_page_errors(watch.unreported()), pytrace=False)
    return result


def page_settings(request: pytest.FixtureRequest) -> PageSettings:
    """The `dsh_browser` marker's settings (the closest one), checked."""
    marker = request.node.get_closest_marker("dsh_browser")
    if marker is not None and marker.args:
        raise pytest.UsageError("dsh_browser takes keyword arguments only: locale, viewport, color_scheme, scrollbars")
    try:
        return PageSettings.of(marker.kwargs if marker else {})
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(f"dsh_browser: {exc}") from None


@pytest.fixture
def chromium_page(request: pytest.FixtureRequest, dsh_chromiums: Chromiums) -> Iterator[Any]:
    """A fresh Chromium page, en-US, 1680×1000, light, scrollbars hidden unless
    `@pytest.mark.dsh_browser(locale=…, viewport=(w, h), color_scheme=…, scrollbars=…)` says otherwise; any
    page error or console error fails the test."""
    settings = page_settings(request)
    context = dsh_chromiums.browser(scrollbars=settings.scrollbars).new_context(**settings.context_options())
    page = context.new_page()
    watch = PageWatch(page)
    page.on("console", lambda m: watch.problems.append(f"console error: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: watch.problems.append(f"page error: {e}"))
    request.node.stash[PAGE_WATCH] = watch
    yield page
    context.close()
    late = watch.unreported()  # errors that arrived after the test function returned (while closing)
    if late:
        pytest.fail(_page_errors(late), pytrace=False)


@pytest.fixture
def dsh_golden_substitutions() -> Substitutions:
    """A test's own `(pattern, replacement)` substitutions for every golden it checks, applied before the
    standard rules (`dsh_inspect.testing.goldens`); override it in a conftest.py or a test module."""
    return ()


class Goldens:
    """The three golden checks, each comparing with a file relative to the test file's folder."""

    def __init__(self, request: pytest.FixtureRequest, substitutions: Substitutions) -> None:
        self.refresh = bool(request.config.getoption("--refresh-goldens"))
        self.folder = Path(request.node.path).parent
        self.substitutions = tuple(substitutions)

    def check(self, actual: str, path: Path | str, what: str, substitutions: Substitutions) -> None:
        golden = Path(path) if Path(path).is_absolute() else self.folder / path
        problem = compare(
            actual, golden, refresh=self.refresh, what=what, substitutions=(*self.substitutions, *substitutions)
        )
        if problem:
            pytest.fail(problem, pytrace=False)


@pytest.fixture
def dsh_goldens(request: pytest.FixtureRequest, dsh_golden_substitutions: Substitutions) -> Goldens:
    return Goldens(request, dsh_golden_substitutions)


@pytest.fixture
def aria_golden(dsh_goldens: Goldens) -> Callable[..., None]:
    """`aria_golden(locator, path, *, substitutions=())`: its aria snapshot must match the golden
    (normalised: `dsh_inspect.testing.goldens`); `--refresh-goldens` rewrites the golden instead."""

    def check(locator: Any, path: Path | str, *, substitutions: Substitutions = ()) -> None:
        dsh_goldens.check(locator.aria_snapshot(), path, "aria snapshot", substitutions)

    return check


@pytest.fixture
def text_golden(dsh_goldens: Goldens) -> Callable[..., None]:
    """`text_golden(text, path, *, substitutions=())`: a text (a locator's `inner_text()`, a twin's JSON, a
    CLI's output) must match the golden, normalised as aria goldens are."""

    def check(text: str, path: Path | str, *, substitutions: Substitutions = ()) -> None:
        dsh_goldens.check(text, path, "text", substitutions)

    return check


@pytest.fixture
def geometry_golden(dsh_goldens: Goldens) -> Callable[..., None]:
    """`geometry_golden(locators, path, *, styles=(), precision=0, substitutions=())`: the boxes of the
    elements each named locator matches (`{"card": page.locator(…)}`), with the computed `styles` named,
    numbers rounded to `precision` decimals, must match the golden."""

    def check(
        locators: Mapping[str, Any],
        path: Path | str,
        *,
        styles: Sequence[str] = (),
        precision: int = 0,
        substitutions: Substitutions = (),
    ) -> None:
        dsh_goldens.check(geometry_text(locators, styles, precision), path, "geometry", substitutions)

    return check
