"""What a live update sends a page when its log grows: the rows that changed, as the reader now sees them."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from dsh_inspect.access import OPEN
from dsh_inspect.history.closers import OUTCOME_UNKNOWN_TEXT
from dsh_inspect.log.writer import append_batch, write_artifact
from dsh_inspect.sessions.registry import Registry
from dsh_inspect.settings import Settings
from dsh_inspect.web.present.strings import strings_for
from dsh_inspect.web.present.windows import rendered_window, transcript
from dsh_inspect.web.routes.live import head_html, signatures, update
from dsh_inspect.web.state import WebState

from tests.support.builders import LogBuilder, header
from tests.support.server import app_client

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})


class SwappedRows(HTMLParser):
    """The text of each row an update swaps in place, by its row key, and the id it now has."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, str] = {}
        self.ids: dict[str, str] = {}
        self._open: list[str | None] = []  # for each open element: the swapped row it starts, if any

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return  # no end tag follows
        found = dict(attrs)
        row = found.get("data-chat-flow-key") if (found.get("hx-swap-oob") or "").startswith("outerHTML") else None
        if row:
            self.rows[row] = ""
            self.ids[row] = found.get("id") or ""
        self._open.append(row)

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for row in filter(None, self._open):
            self.rows[row] += data


def swapped_rows(html: str) -> SwappedRows:
    parser = SwappedRows()
    parser.feed(html)
    return parser


def test_a_result_that_takes_the_seq_of_its_crash_closer_replaces_the_closer(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    events = b.events
    call = next(i for i, e in enumerate(events) if e["type"] == "tool/call")
    result = events[call + 1]
    assert result["type"] == "tool/result"
    path = write_artifact(tmp_path, header("open-call"), [events[: call + 1]], "none")
    state = WebState(settings=Settings(), registry=Registry([str(tmp_path)]))
    strings = strings_for(None)

    entry = state.entry("open-call")
    body = f"/sessions/open-call/row-bodies/{call}"  # the tool row's body, which it sends when opened
    with app_client([str(tmp_path)]) as client:
        _, shown = update(state, entry, strings, [])
        # the open call shows dsh's crash closer until its result arrives
        assert OUTCOME_UNKNOWN_TEXT in client.get(body).text

        append_batch(path, [result])
        html, _ = update(state, entry, strings, shown)
        swapped = swapped_rows(html)
        tool = f"seq-{call}"
        assert tool in swapped.rows, "the tool row whose result arrived is sent again"
        opened = client.get(body).text
        assert "alpha" in opened and OUTCOME_UNKNOWN_TEXT not in opened
    # it now anchors at its result's message id, and replaces the row that had the closer's
    assert swapped.ids[tool] == f"msg-{result['data']['message']['id']}"
    assert f'hx-swap-oob="outerHTML:[data-chat-flow-key=&#34;{tool}&#34;]"' in html


def test_a_run_of_new_sessions_keeps_the_first_screen_each_tail_starts_from(tmp_path: Path) -> None:
    """Each new session moves the registry's version, and a tail's header is made again at each: the first
    screen and the row signatures every tail's start sends stay made once for the watched log's version."""
    b = LogBuilder()
    b.turn(1)
    write_artifact(tmp_path, header("watched"), [b.events], "none")
    state = WebState(settings=Settings(), registry=Registry([str(tmp_path)]))
    strings = strings_for(None)
    entry, log = state.session("watched")
    script = transcript(state, entry)
    first_screen, rows = rendered_window(state, entry, script, strings, 0), signatures(script)
    for i in range(12):
        write_artifact(tmp_path, header(f"more-{i}"), [b.events], "none")
        state.registry.refresh()
        assert len(state.registry.entries()) == i + 2
        assert "watched" in head_html(state, entry, log, script, strings, OPEN)
    assert transcript(state, entry) is script
    assert rendered_window(state, entry, script, strings, 0) is first_screen
    assert signatures(script) is rows
