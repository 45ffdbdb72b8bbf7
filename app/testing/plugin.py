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
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from ..log.writer import Compression
from .browser import CHROMIUM_ARGS, VIEWPORT, chromium_path
from .conversations import SCAFFOLD_CWD
from .goldens import compare
from .seeding import SeededSession, append, seed_events, write_seed
from .server import live_server

Event = dict[str, Any]
COMPRESSIONS: dict[str, Compression] = {"zstd": "zstd", "none": "none"}  # the `dsh_root` marker's choices


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dsh-inspect")
    group.addoption(
        "--refresh-goldens",
        action="store_true",
        default=False,
        help="rewrite aria goldens from what the page shows now",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dsh_root(compression): the seeded root's encoding, 'zstd' (default) or 'none'")


@dataclass
class Inspector:
    """A running dsh-inspect serving one temporary dsh root."""

    url: str
    root: Path
    compression: Compression
    sessions: dict[str, SeededSession] = field(default_factory=dict)

    def seed_session(
        self,
        source: Path | str | Sequence[Event],
        *,
        placeholders: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> SeededSession:
        """Write a fixture log (a path) or a list of events as a real dsh artifact; its page URL."""
        sid = session_id or f"session-{uuid.uuid4()}"
        plan = seed_events(source, session_id=sid, cwd=SCAFFOLD_CWD, placeholders=placeholders)
        path = write_seed(self.root, plan, self.compression)
        last = plan.events[-1]["time"] if plan.events else plan.header["createdAt"]
        seeded = SeededSession(
            f"{self.url}/sessions/{quote(sid, safe='')}",
            session_id=sid,
            path=path,
            events=len(plan.events),
            last_time=last,
        )
        self.sessions[sid] = seeded
        return seeded

    def append_events(self, session: SeededSession | str, events: Sequence[Event]) -> None:
        """Append events as one batch (a zstd frame, or lines), as a live dsh does."""
        seeded = self.sessions[session.id] if isinstance(session, SeededSession) else self._by_url(session)
        count, last = append(seeded.path, events, next_seq=seeded.events, last_time=seeded.last_time)
        seeded.events, seeded.last_time = count, last

    def _by_url(self, session: str) -> SeededSession:
        for seeded in self.sessions.values():
            if session in (str(seeded), seeded.id):
                return seeded
        raise KeyError(f"{session!r} was not seeded by this inspector")


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
        yield Inspector(url, root, compression)


@pytest.fixture
def seed_session(inspector: Inspector) -> Callable[..., SeededSession]:
    """`seed_session(source, *, placeholders=None, session_id=None)` → the session's page URL."""
    return inspector.seed_session


@pytest.fixture
def append_events(inspector: Inspector) -> Callable[[SeededSession | str, Sequence[Event]], None]:
    """`append_events(session, events)`: grow a seeded session the way dsh appends."""
    return inspector.append_events


@pytest.fixture(scope="session")
def dsh_chromium() -> Iterator[Any]:
    """One Chromium for the session (Debian's binary, or `$DSH_INSPECT_CHROMIUM`)."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        pytest.fail("no Chromium found: install Debian's chromium package or set DSH_INSPECT_CHROMIUM")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=list(CHROMIUM_ARGS))
        yield browser
        browser.close()


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


@pytest.fixture
def chromium_page(request: pytest.FixtureRequest, dsh_chromium: Any) -> Iterator[Any]:
    """A fresh en-US, 1680×1000, light page; any page error or console error fails the test."""
    context = dsh_chromium.new_context(viewport=VIEWPORT, locale="en-US", color_scheme="light")
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
def aria_golden(request: pytest.FixtureRequest) -> Callable[[Any, Path | str], None]:
    """`aria_golden(locator, path)`: its aria snapshot must match the golden (ids, clocks,
    durations and paths normalized); `--refresh-goldens` rewrites the golden instead."""
    refresh = bool(request.config.getoption("--refresh-goldens"))

    def check(locator: Any, path: Path | str) -> None:
        golden = Path(path)
        if not golden.is_absolute():
            golden = Path(request.node.fspath).parent / golden
        problem = compare(locator.aria_snapshot(), golden, refresh=refresh)
        if problem:
            pytest.fail(problem, pytrace=False)

    return check
