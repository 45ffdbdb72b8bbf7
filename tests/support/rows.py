"""Reading rendered pages back with a real HTML parser: rows, their attributes, what a reader sees."""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
from bs4 import BeautifulSoup, CData, NavigableString, Tag, TemplateString


def parse(html: str) -> BeautifulSoup:
    """The page as a reader meets it: a one-file export's windows of rows (`template[data-export-window]`,
    mounted by static/export.js as the reader nears them) read as the rows they hold, in order."""
    page = BeautifulSoup(html, "html.parser")
    for window in page.find_all("template", attrs={"data-export-window": True}):
        for string in window.find_all(string=True):  # its text is a row's, shown, unless a template of the row's
            if string.find_parent("template") is window:
                string.replace_with(NavigableString(str(string)))
        window.unwrap()
    return page


def opened(client: httpx.Client, html: str, session: str, headers: dict[str, str] | None = None) -> str:
    """A served page or window of session `session`'s rows (its URL, `/sessions/<key>`) with the body each row
    leaves out until it first opens (`[data-lazy-body]`) fetched as static/inspect.js fetches it, from
    `/row-bodies/`, and put in the row's <template>, where a one-file export sends it."""
    page = BeautifulSoup(html, "html.parser")
    for header in page.select("[data-lazy-body]"):
        row = header.find_parent(class_="flow-item")
        assert row is not None and header.parent is not None, header
        url = f"{session}/row-bodies/{row['data-seq']}?n={header['data-lazy-body']}"
        answer = client.get(url, headers=headers)
        assert answer.status_code == 200, (url, answer.status_code)
        body = page.new_tag("template", attrs={"data-disclosure-body": ""})
        body.append(BeautifulSoup(answer.text, "html.parser"))
        header.parent.append(body)
    return str(page)


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
    def bookkeeping(self) -> bool:
        """The row is marked as the harness's bookkeeping (`data-bookkeeping`)."""
        return self.element.has_attr("data-bookkeeping")

    @property
    def dot(self) -> str | None:
        """The state dot the row's header shows (`error` red, `stopped` amber), if any."""
        return next((str(t["data-dot"]) for t in self.header() if t.get("data-dot")), None)

    @property
    def red_dot(self) -> bool:
        """The row shows a red state dot (it reports an error)."""
        return self.dot == "error"


Markup = str | Tag
"""A page or fragment as the server answered it, or an element of one already parsed."""


def _root(markup: Markup) -> Tag:
    return markup if isinstance(markup, Tag) else parse(markup)


def flow_rows(markup: Markup) -> list[FlowRow]:
    """The rows of a page or a window, in order (a long export's page parsed once and passed as a `Tag`)."""
    return [FlowRow(tag) for tag in _root(markup).select(".flow-item")]


def flow_items(html: str) -> list[tuple[str, int, str]]:
    """Each row's kind, seq and markup (the bodies waiting in its <template>s included), in order."""
    return [(row.kind, row.seq, row.html) for row in flow_rows(html)]


def _value(value: str | list[str]) -> str:
    """An attribute's value as written: the parser splits `class` and `rel` into words."""
    return " ".join(value) if isinstance(value, list) else str(value)


def position(tag: Tag) -> tuple[int, int]:
    """Where an element starts in the markup it was parsed from (line, column): of two elements of
    one parse, the earlier has the smaller position."""
    assert tag.sourceline is not None and tag.sourcepos is not None, tag.name
    return (tag.sourceline, tag.sourcepos)


def text_of(tag: Tag) -> str:
    """What a reader sees of an element once it is open: its text, the bodies waiting in its <template>s
    included (`get_text()` leaves out the text of an element inside a <template>)."""
    return tag.get_text(types=(NavigableString, CData, TemplateString))


def select(markup: Markup, selector: str) -> list[Tag]:
    """The elements matching the CSS selector, the bodies waiting in <template>s included, in document order.

    A selector does not reach into a <template> (its content is a fragment of its own, as a browser
    holds it, and `.select` skips it), so each template's content is searched as a fragment too."""
    root = _root(markup)
    found = root.select(selector)  # from a <template> itself, this searches its content
    for template in root.find_all("template"):
        for child in template.find_all(True, recursive=False):
            if child.name != "template":  # a nested template is searched on its own
                found += [child] if child.css.match(selector) else []
                found += child.select(selector)
    return sorted(found, key=position)


def one(markup: Markup, selector: str) -> Tag:
    """The one element matching the CSS selector (see `select`); it fails unless there is exactly one."""
    found = select(markup, selector)
    assert len(found) == 1, (selector, len(found))
    return found[0]


def text(markup: Markup, selector: str) -> str:
    """What a reader sees of the one element matching the CSS selector (see `text_of`)."""
    return text_of(one(markup, selector))


def texts(markup: Markup, selector: str) -> list[str]:
    """What a reader sees of each element matching the CSS selector (see `select`, `text_of`), in order."""
    return [text_of(tag) for tag in select(markup, selector)]


def attrs(markup: Markup, selector: str, name: str) -> list[str]:
    """The attribute `name` of each element matching the CSS selector (see `select`) that has it, in order."""
    return [_value(tag[name]) for tag in select(markup, selector) if tag.has_attr(name)]


def asks(markup: Markup) -> list[dict[str, list[str]]]:
    """What a list or uploads page posts to `/sessions-summaries` for its unread sessions: each
    `[data-summaries-ask]`'s `hx-vals`, a form's fields as htmx posts them (`key`, and `cell` when it names some)."""
    return [json.loads(vals) for vals in attrs(markup, "[data-summaries-ask]", "hx-vals")]


def asked_keys(markup: Markup) -> list[str]:
    """The keys of the sessions a list or uploads page asks `/sessions-summaries` for (its unread ones), in order."""
    return [key for ask in asks(markup) for key in ask["key"]]


def attributes(markup: Markup) -> list[tuple[str, str, str]]:
    """Every element's every attribute, the bodies waiting in <template>s included, as (element name,
    attribute name, value), in document order: for checks that no element anywhere carries something."""
    root = _root(markup)
    tags = root.find_all(True) if isinstance(root, BeautifulSoup) else [root, *root.find_all(True)]
    return [(tag.name, name, _value(value)) for tag in tags for name, value in tag.attrs.items()]


def definitions(markup: Markup) -> list[tuple[str, str]]:
    """Each <dt>'s text with the text of the <dd> right after it, in document order."""
    out = []
    for term in select(markup, "dt"):
        description = term.find_next_sibling()
        assert description is not None and description.name == "dd", term
        out.append((text_of(term), text_of(description)))
    return out
