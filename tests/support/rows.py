"""Reading rendered rows back out of a page or a window of rows."""

from __future__ import annotations

import re

_ROW = re.compile(r'<div class="flow-item" [^>]*data-chat-flow-kind="([^"]+)" data-seq="(\d+)"')


def flow_items(html: str) -> list[tuple[str, int, str]]:
    """Each row's kind, seq and HTML (the bodies waiting in its <template>s included), in order.

    Rows follow one another at the top level of a window, and log text is escaped, so the
    next row's opening tag is where a row ends."""
    items = []
    for part in re.split(r'(?=<div class="flow-item" )', html)[1:]:
        found = _ROW.match(part)
        assert found, part[:200]
        items.append((found.group(1), int(found.group(2)), part))
    return items
