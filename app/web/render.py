"""`dsh-inspect render PATH -o FILE.html`: one session as one self-contained page.

It is the session page itself (same templates, every row at once) in the
`export.html` layout: CSS and one script inline, each allowed by its hash
in the file's own CSP, and every row body inline in a `<template>`, so it
opens from `file://` with working disclosures and touches no network. The
pages only a server can answer (model views, identity pages, the budget)
are not linked; the message ids stay as text.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from dataclasses import dataclass

from fastapi import HTTPException, Request
from markupsafe import Markup

from app.web.registry import Registry
from app.web.sessions import session_page_context
from app.web.settings import Settings
from app.web.state import STATIC, WebState
from app.web.strings import strings_for

STYLES = ("inspect.css", "export.css")
SCRIPTS = ("theme.js", "inspect.js")


class RenderError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Assets:
    css: str
    script: str

    @property
    def csp(self) -> str:
        return (f"default-src 'none'; script-src '{_sha256(self.script)}'; style-src '{_sha256(self.css)}'; "
                "img-src data:; base-uri 'none'; form-action 'none'")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def export_assets() -> Assets:
    css = "\n".join((STATIC / name).read_text(encoding="utf-8") for name in STYLES)
    script = "\n".join((STATIC / name).read_text(encoding="utf-8") for name in SCRIPTS)
    # inlined verbatim, so neither may close its own element early
    if "</style" in css.lower() or "</script" in script.lower():
        raise RenderError("a static asset contains a closing tag and cannot be inlined")
    return Assets(css, script)


def render_session(registry: Registry, key: str, *, lang: str = "en") -> str:
    """The page of session `key`, with every row, as one HTML document."""
    state = WebState(settings=Settings(window_rows=sys.maxsize), registry=registry)
    try:
        context = session_page_context(state, key, 0)
    except HTTPException as exc:
        entry = registry.entry(key)
        where = entry.source.label if entry else key
        what = "not a dsh session log: " if exc.status_code == 422 else ""
        raise RenderError(f"{where}: {what}{exc.detail}") from None
    assets = export_assets()
    t = strings_for(lang)
    template = state.templates.env.get_template("session.html")
    return template.render(
        request=_plain_get(context["base_url"]), t=t, lang=t.lang, layout="export.html", inline_bodies=True,
        standalone=True,  # no server behind the file: links to the model views and identity pages are left out
        export_css=Markup(assets.css), export_script=Markup(assets.script), export_csp=assets.csp, **context)


def _plain_get(path: str) -> Request:
    """The request the page would answer, for templates that read it: a bare GET with no query."""
    return Request({"type": "http", "method": "GET", "scheme": "http", "server": ("127.0.0.1", 80), "path": path,
                    "raw_path": path.encode(), "root_path": "", "query_string": b"", "headers": []})


def render_path(path: str, *, session: str | None = None, lang: str = "en") -> str:
    """Render the one session at `path` (or the one named by `session`, an id or key)."""
    registry = Registry([path])
    entries = registry.entries()
    if session is not None:
        entries = [e for e in entries if session in (e.key, e.session_id)]
    if len(entries) == 1:
        return render_session(registry, entries[0].key, lang=lang)
    refused = "; ".join(f"{r.path}: {r.reason}" for r in registry.refused())
    if not entries:
        what = f"no session {session!r}" if session is not None else "no session log"
        raise RenderError(f"{path}: {what}" + (f" ({refused})" if refused else ""))
    keys = ", ".join(e.key for e in entries)
    raise RenderError(f"{path} holds {len(entries)} sessions; choose one with --session ({keys})")
