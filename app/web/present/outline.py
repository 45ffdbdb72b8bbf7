"""A session's outline (issue 39, item 3): the rows a reader finds their way by, in order, beside the transcript.

Each turn with its first prompt, and every error, compaction and subagent, as the row views show them; each with
the row's index and anchor, so the page opens it in place as `?at=` would (static/outline.js). Built once per file
version; the page draws a window of it at a time, so it stays small however long the session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from ...model.text import one_line
from ...sessions.registry import Entry
from ...sessions.transcript import Transcript
from ...sessions.wire import Twin
from ..state import WebState
from .rows import RowView, ToolView
from .windows import view

OutlineKind = Literal["turn", "error", "compaction", "subagent"]
TEXT_CHARS = 120  # an entry's text: one line, this long at most (the margin shows its start)
COMPACTIONS = frozenset({"compaction", "manual-compaction"})


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    kind: OutlineKind
    index: int  # the row's index in the transcript: the window that holds it
    anchor: str  # the row's anchor, as `?at=` takes it
    seq: int  # the row's seq: the page marks the entry of the row in view by it
    turn: int | None  # the turn's number, for a turn
    text: str  # a turn's first prompt; what an error, a compaction or a subagent says; the log's words


class OutlineEntryJson(Twin):
    kind: OutlineKind
    index: int
    anchor: str
    seq: int
    turn: int | None
    text: str


class OutlineJson(Twin):
    """The outline's entries in the transcript's order."""

    entries: list[OutlineEntryJson]


def outline_of(state: WebState, entry: Entry, t: Transcript) -> tuple[OutlineEntry, ...]:
    """The session's outline, built once per file version."""
    return state.registry.derived(entry.key, "outline", lambda _: tuple(_entries(t)))


def outline_json(entries: tuple[OutlineEntry, ...]) -> OutlineJson:
    return OutlineJson(
        entries=[
            OutlineEntryJson(kind=e.kind, index=e.index, anchor=e.anchor, seq=e.seq, turn=e.turn, text=e.text)
            for e in entries
        ]
    )


def _entries(t: Transcript) -> Iterator[OutlineEntry]:
    turn: OutlineEntry | None = None  # the turn whose first prompt is still to come
    for i, row in enumerate(t.rows):
        if row.kind == "turn":
            if turn is not None:
                yield turn
            shown = view(t, i)
            turn = OutlineEntry("turn", i, shown.anchor, row.seq, _number(str(shown.title)), "")
            continue
        if row.kind == "user" and turn is not None and not turn.text:
            message = t.readable.event(row.seq).message
            if message is not None and message.text().strip():
                yield OutlineEntry("turn", turn.index, turn.anchor, turn.seq, turn.turn, _line(message.text()))
                turn = None
            continue
        marked = _marked(i, view(t, i)) if row.kind != "user" else None
        if marked is not None:
            if turn is not None:
                yield turn
                turn = None
            yield marked
    if turn is not None:
        yield turn


def _marked(index: int, shown: RowView) -> OutlineEntry | None:
    """The entry a row other than a turn or a prompt makes, if it is one the outline lists."""
    row = shown.row
    kind: OutlineKind | None = None
    if row.kind in COMPACTIONS:
        kind = "compaction"
    elif isinstance(shown.part, ToolView) and shown.part.child_session:
        kind = "subagent"
    elif shown.error:
        kind = "error"
    if kind is None:
        return None
    said = str(shown.summary) or str(shown.title)
    return OutlineEntry(kind, index, shown.anchor, row.seq, None, _line(said))


def _line(text: str) -> str:
    return one_line(text, TEXT_CHARS)


def _number(title: str) -> int | None:
    return int(title) if title.isdigit() else None
