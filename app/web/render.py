"""`dsh-inspect render PATH -o FILE.html`: one session as one self-contained page.

It is the session page itself (same templates, every row at once; a run row
lists its events, one line each, rather than a row each) in the
`export.html` layout: CSS and two scripts inline (theme.js, run before first
paint, and the rows' ES modules bundled into one, static/export.bundle.js:
docs/decisions/0027-export-bundle.md), each allowed by its hash in the file's
own CSP, every row body inline in a `<template>`, and the images of an export
ZIP inline as `data:` URIs, so it opens from `file://` with working
disclosures and touches no network. Its rows wait in windows, each an inert
`<template data-export-window>` that static/export.js mounts as the reader
nears it and drops when far: the page stays small however long the session.

Nothing in it may need the server: the templates leave out its chrome
(search, live tail, "Show all") and its links (events, model views, identity
pages, the budget, downloads, other sessions) when `standalone` is set; any
root-relative link left in the rows (a model's Markdown link, say) becomes
plain text here, since from `file://` it would open a file of the reader's disk.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, Request
from jinja2 import Environment
from jinja2.filters import do_filesizeformat, do_urlencode
from markupsafe import Markup, escape

from ..history.session import SessionLog
from ..history.transcript import Row
from ..sessions.archive import InlineImages, inline_images, media_of
from ..sessions.registry import Entry, Registry
from ..sessions.transcript import Transcript
from ..settings import Settings
from .present.rows import RowView
from .present.strings import Phrase, phrase, strings_for
from .present.windows import row_macro, transcript, views
from .routes.sessions import page_context
from .state import STATIC, WebState

STYLES = ("inspect.css", "export.css")
THEME_SCRIPT = "theme.js"
# static/export.js and the modules it imports, bundled by tools/js/bundle.sh (`make check` fails when stale)
MODULE_SCRIPT = "export.bundle.js"
# Image bytes one file carries in all: base64 makes them a third larger again, and a page
# much past 30 MB is slow to open; the images past it are named where they appeared.
MEDIA_BUDGET = 24 << 20
# Decoded events a log keeps while its export is written: its facts read every event, then its rows read them
# again, and the log otherwise keeps only its latest few. Enough for W1 long (24,804); each from a record of at
# most KEPT_RECORD_BYTES, so a few tens of MB at most, and the usual few again once the file is written.
EXPORT_EVENTS_KEPT = 1 << 15


class RenderError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Assets:
    css: str
    theme: str  # a classic script: it runs before first paint
    script: str  # an ES module, deferred like the served page's

    @property
    def csp(self) -> str:
        scripts = f"'{_sha256(self.theme)}' '{_sha256(self.script)}'"
        return (
            f"default-src 'none'; script-src {scripts}; style-src '{_sha256(self.css)}'; "
            "img-src data:; base-uri 'none'; form-action 'none'"
        )


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def export_assets() -> Assets:
    css = "\n".join((STATIC / name).read_text(encoding="utf-8") for name in STYLES)
    theme, script = ((STATIC / name).read_text(encoding="utf-8") for name in (THEME_SCRIPT, MODULE_SCRIPT))
    # inlined verbatim, so none may close its own element early
    if "</style" in css.lower() or any("</script" in text.lower() for text in (theme, script)):
        raise RenderError("a static asset contains a closing tag and cannot be inlined")
    return Assets(css, theme, script)


def render_session(registry: Registry, key: str, *, lang: str = "en", media_budget: int = MEDIA_BUDGET) -> str:
    """The page of session `key`, with every row, as one HTML document."""
    return "".join(session_export(registry, key, lang=lang, media_budget=media_budget))


def session_export(
    registry: Registry, key: str, *, lang: str = "en", media_budget: int = MEDIA_BUDGET
) -> Iterator[str]:
    """`render_session`'s document in pieces, its rows drawn a window at a time: a long session is written
    out without its every row view and all of its markup held at once. A session that cannot be read raises
    RenderError here, before any piece."""
    state = WebState(settings=Settings(window_rows=sys.maxsize, body_cap=sys.maxsize), registry=registry)
    try:
        entry, log = state.session(key)
    except HTTPException as exc:
        found = registry.entry(key)
        where = found.source.label if found else key
        what = "not a dsh session log: " if exc.status_code == 422 else ""
        raise RenderError(f"{where}: {what}{exc.detail}") from None
    with ExitStack() as kept:
        kept.enter_context(log.keeping_decoded(EXPORT_EVENTS_KEPT))
        head, windows, draw, tail = _export_parts(state, entry, log, lang, media_budget)
        return _pieces(head, windows, draw, tail, kept.pop_all())


def _export_parts(
    state: WebState, entry: Entry, log: SessionLog, lang: str, media_budget: int
) -> tuple[str, Iterator[list[RowView]], Callable[[list[RowView]], str], str]:
    """The export's head and tail, its windows of rows and how each is drawn."""
    script = transcript(state, entry)
    every_row = script.paging(0, len(script.rows), len(script.rows))  # paging counts rows, a run row as one
    assets = export_assets()
    t = strings_for(lang)
    # `standalone`: no server behind the file, so the templates leave out what only a server answers; a run
    # row lists its events (`run_events`) in place of the rows no server can page from file://
    page = {
        **page_context(state, entry, log, script, every_row),
        "t": t,
        "lang": t.lang,
        "inline_bodies": True,
        "standalone": True,
        "run_events": _text_lines(script),
    }
    env = state.templates.env
    base_url = page["base_url"]
    archive = media_of(entry)
    # which images go inline is known once every row is drawn: the budget keeps those a reader meets first
    if archive:
        draw_all = _rows_drawer(env, page, archive)
        shown = [a for rows in _row_windows(script) for a in _images_shown(draw_all(rows), base_url, archive)]
    else:
        shown = []
    images = inline_images(entry, shown, media_budget)
    carried = {a: archive[a] for a in images.uris} if images.left_out else archive  # the others show their names
    rows_at = secrets.token_hex(16)  # where the rows go: no text of the log can hold it
    head, _, tail = (
        env.get_template("session.html")
        .render(
            request=_plain_get(base_url),
            layout="export.html",
            rows_html=Markup(rows_at),
            images_left_out=_images_left_out(images, media_budget),
            export_css=Markup(assets.css),
            export_theme=Markup(assets.theme),
            export_script=Markup(assets.script),
            export_csp=assets.csp,
            **page,
        )
        .partition(rows_at)
    )
    draw = _rows_drawer(env, page, carried)
    return head, _row_windows(script), lambda rows: _export_rows(draw(rows), base_url, images), tail


def _pieces(
    head: str, windows: Iterator[list[RowView]], draw: Callable[[list[RowView]], str], tail: str, kept: ExitStack
) -> Iterator[str]:
    with kept:  # the log's decoded events, kept until the last piece
        yield head
        yield from map(draw, windows)
        yield tail


def _export_rows(html: str, base_url: str, images: InlineImages) -> str:
    """A window's rows, drawn, with their images inline and no link to a server page."""
    for attachment, uri in images.uris.items():
        html = html.replace(_image_src(base_url, attachment), f'src="{uri}"')
    # inert until static/export.js mounts it near the viewport: the page holds a few windows, as the served one
    return f"<template data-export-window>{unlink_server_pages(html)}</template>"  # by the autoescaping templates


# Rows a window holds: half the served page's (Settings.window_rows), as the export keeps whole windows where
# that page trims their far rows too; three stay under its 3,000 nodes at about 18 nodes a row. A window ends
# where a fold of bookkeeping rows does, or, in a longer fold, at LONGEST_WINDOW: it goes on as another, as a
# server window's would.
EXPORT_WINDOW = Settings().window_rows // 2
LONGEST_WINDOW = 4 * EXPORT_WINDOW


def _row_windows(script: Transcript) -> Iterator[list[RowView]]:
    """Every row's view in windows of about EXPORT_WINDOW, none cut through a fold (rows/_fold.html) of fewer
    than LONGEST_WINDOW rows."""
    window: list[RowView] = []
    for start in range(0, len(script.rows), EXPORT_WINDOW):
        for view in views(script, start, start + EXPORT_WINDOW):
            folding = view.bookkeeping and window and window[-1].bookkeeping
            if len(window) >= LONGEST_WINDOW or (len(window) >= EXPORT_WINDOW and not folding):
                yield window
                window = []
            window.append(view)
    if window:
        yield window


def _text_lines(script: Transcript) -> Callable[[Row], Markup]:
    """`script.run_events` as the text of a `<pre>`, a line `#seq json` each: only `&` and `<` escaped, since a
    bare quote is text there and `&#34;` would make the million lines of a `{}` log half again as long; joined
    here, as a template loop would spend more on each line than the line itself costs."""

    def lines(run: Row) -> Markup:
        text = "".join(f"#{seq} {json}\n" for seq, json in script.run_events(run))
        return Markup(text.replace("&", "&amp;").replace("<", "&lt;"))

    return lines


def _rows_drawer(env: Environment, page: dict[str, Any], media: dict[str, str]) -> Callable[[list[RowView]], str]:
    """How a window's rows are drawn: the folds of rows/window.html, which is all a `standalone` window holds,
    from one module built for every window of the file with the modules of the row kinds it imports, rather
    than some thirty modules built again for each of W1 long's 161 windows (docs/decisions/0039-row-macros.md)."""
    folded = row_macro(env, "rows/_fold.html", "folded", {**page, "media": media})
    return lambda rows: str(folded(rows))


def _image_src(base_url: str, attachment: str) -> str:
    """The `src` attribute the row templates give an archive image, exactly as they write it."""
    return f'src="{escape(base_url)}/media/{escape(do_urlencode(attachment))}"'


def _images_shown(html: str, base_url: str, archive: dict[str, str]) -> list[str]:
    """The archive images the rows show, once per place, in the order a reader meets them."""
    found = sorted((at, a) for a in archive if (at := html.find(_image_src(base_url, a))) >= 0)
    return [a for _, a in found for _ in range(html.count(_image_src(base_url, a)))]


# An anchor to a root-relative URL: a model's Markdown link, or a server page a template failed
# to leave out. Attribute values and text are escaped by the templates, so `>` and `</a>` only
# ever close the tag and the element.
_SERVER_LINK = re.compile(r'<a\b([^>]*?)\s+href="/[^"]*"([^>]*)>(.*?)</a>', re.DOTALL)


def unlink_server_pages(html: str) -> str:
    """Root-relative links turned into plain text: each keeps its text and its other attributes."""
    return _SERVER_LINK.sub(r"<span\1\2>\3</span>", html)


def _images_left_out(images: InlineImages, budget: int) -> Phrase | None:
    """Said only by an export, about its own making."""
    if not images.left_out:
        return None
    return phrase(
        "export.imagesLeftOut",
        count=len(images.left_out),
        size=do_filesizeformat(images.left_out_bytes, binary=True),
        budget=do_filesizeformat(budget, binary=True),
    )


def _plain_get(path: str) -> Request:
    """The request the page would answer, for templates that read it: a bare GET with no query."""
    return Request(
        {
            "type": "http",
            "method": "GET",
            "scheme": "http",
            "server": ("127.0.0.1", 80),
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": [],
        }
    )


def render_path(path: str, *, session: str | None = None, lang: str = "en", media_budget: int = MEDIA_BUDGET) -> str:
    """Render the one session at `path` (or the one named by `session`, an id or key)."""
    return "".join(export_path(path, session=session, lang=lang, media_budget=media_budget))


def export_path(
    path: str, *, session: str | None = None, lang: str = "en", media_budget: int = MEDIA_BUDGET
) -> Iterator[str]:
    """`render_path`'s document in pieces (`session_export`); RenderError before any piece."""
    registry = Registry([path])
    entries = registry.entries()
    if session is not None:
        entries = [e for e in entries if session in (e.key, e.session_id)]
    if len(entries) == 1:
        return session_export(registry, entries[0].key, lang=lang, media_budget=media_budget)
    refused = "; ".join(f"{r.path}: {r.reason}" for r in registry.refused())
    if not entries:
        what = f"no session {session!r}" if session is not None else "no session log"
        raise RenderError(f"{path}: {what}" + (f" ({refused})" if refused else ""))
    keys = ", ".join(e.key for e in entries)
    raise RenderError(f"{path} holds {len(entries)} sessions; choose one with --session ({keys})")
