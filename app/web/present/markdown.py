"""Markdown for assistant text and compaction summaries: raw HTML off, safe links only.

markdown-it escapes any HTML in the source when `html` is off and refuses
`javascript:`-style link targets; images become plain links, because the
page's CSP would block a remote image and a log must not make the reader's
browser fetch anything.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markupsafe import Markup

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_MD.enable(["table", "strikethrough"])
_MD.disable("image")


def render_markdown(text: str) -> Markup:
    """Sanitized HTML for untrusted Markdown text."""
    return Markup(_MD.render(text))
