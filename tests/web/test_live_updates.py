"""What a live update sends a page when its log grows: the rows that changed, as the reader now sees them."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from app.history.closers import OUTCOME_UNKNOWN_TEXT
from app.log.writer import append_batch, write_artifact
from app.web.live import update
from app.web.registry import Registry
from app.web.settings import Settings
from app.web.state import WebState
from app.web.strings import strings_for
from tests.support.builders import LogBuilder, header

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})


class SwappedRows(HTMLParser):
    """The text of each row an update swaps in place, by the id it replaces."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, str] = {}
        self._open: list[str | None] = []  # for each open element: the swapped row it starts, if any

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return  # no end tag follows
        found = dict(attrs)
        row = found.get("id") if found.get("hx-swap-oob") == "outerHTML" else None
        if row:
            self.rows[row] = ""
        self._open.append(row)

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for row in filter(None, self._open):
            self.rows[row] += data


def swapped_rows(html: str) -> dict[str, str]:
    parser = SwappedRows()
    parser.feed(html)
    return parser.rows


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

    first, shown = update(state, "open-call", strings, [])
    assert OUTCOME_UNKNOWN_TEXT in first  # the open call shows dsh's crash closer until its result arrives

    append_batch(path, [result])
    html, _ = update(state, "open-call", strings, shown)
    rows = swapped_rows(html)
    tool = f"seq-{call}"
    assert tool in rows, "the tool row whose result arrived is sent again"
    assert "alpha" in rows[tool]
    assert OUTCOME_UNKNOWN_TEXT not in html
