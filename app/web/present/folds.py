"""Bookkeeping folds: each run of consecutive bookkeeping rows (`RowView.bookkeeping`) shown as one compact row
that opens to show them (docs/ui.md, Folds and runs). The rule lives here once: the windows, a run row's pages
and the one-file export draw their folds from it (`templates/rows/_fold.html`), and the live tail words the
head of the fold its rows join with it, so a fold followed live reads as the same fold on a fresh page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .rows import RowView
from .strings import Phrase, count, phrase

TYPES_NAMED = 3  # the types a fold's head names; its title names every one


@dataclass(frozen=True, slots=True)
class Fold:
    """One run of bookkeeping rows, in order; never empty."""

    rows: tuple[RowView, ...]

    @property
    def id(self) -> str:
        """The id of the element holding its rows (its head's `aria-controls`)."""
        return f"fold-{self.rows[0].anchor}"

    @property
    def events(self) -> int:
        """The events its rows stand for: a run row among them counts each of its events."""
        return sum(view.row.count for view in self.rows)

    @property
    def types(self) -> tuple[str, ...]:
        """Its rows' event types, each once, in order of first appearance."""
        return tuple(dict.fromkeys(view.type for view in self.rows if view.type))

    @property
    def head(self) -> Phrase:
        """ "6 events: request/header, request/context, …": how many events, and the first types."""
        named = ", ".join(self.types[:TYPES_NAMED]) + (", …" if len(self.types) > TYPES_NAMED else "")
        if self.events == 1:
            return phrase("fold.one", types=named)
        return phrase("fold.many", count=count(self.events), types=named)

    @property
    def title(self) -> str:
        return ", ".join(self.types)


def fold_runs(views: Iterable[RowView]) -> list[RowView | Fold]:
    """`views` in order, each run of consecutive bookkeeping rows made one fold (a run of one too, so no
    bookkeeping row ever stands unfolded among the conversation)."""
    shown: list[RowView | Fold] = []
    run: list[RowView] = []
    for view in views:
        if view.bookkeeping:
            run.append(view)
            continue
        if run:
            shown.append(Fold(tuple(run)))
            run = []
        shown.append(view)
    if run:
        shown.append(Fold(tuple(run)))
    return shown
