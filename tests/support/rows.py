"""Reading rendered pages back with a real HTML parser: rows, their attributes, what a reader sees."""

from __future__ import annotations

from dataclasses import dataclass

from bs4 import BeautifulSoup, Tag


def parse(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


@dataclass(frozen=True)
class FlowRow:
    """One transcript row of a page or window (`.flow-item`)."""

    element: Tag

    @property
    def kind(self) -> str:
        return str(self.element["data-chat-flow-kind"])

    @property
    def seq(self) -> int:
        return int(str(self.element["data-seq"]))

    @property
    def key(self) -> str:
        return str(self.element["data-chat-flow-key"])

    @property
    def anchor(self) -> str:
        return str(self.element["id"])

    @property
    def html(self) -> str:
        """The row's markup, the bodies waiting in its <template>s included."""
        return str(self.element)

    def header(self) -> list[Tag]:
        """The row's elements a reader sees before opening anything: those outside its <template>s."""
        return [t for t in self.element.find_all(True) if t.find_parent("template") is None]

    @property
    def red_dot(self) -> bool:
        """The row shows a red state dot (it reports an error)."""
        return any(t.get("data-dot") == "error" for t in self.header())


def flow_rows(html: str) -> list[FlowRow]:
    """The rows of a page or a window, in order."""
    return [FlowRow(tag) for tag in parse(html).select(".flow-item")]


def flow_items(html: str) -> list[tuple[str, int, str]]:
    """Each row's kind, seq and markup (the bodies waiting in its <template>s included), in order."""
    return [(row.kind, row.seq, row.html) for row in flow_rows(html)]
