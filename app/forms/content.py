"""The model-facing content ("MFC") a context body shows (docs/ui.md §3).

Bodies show what the model saw, in block order: adjacent text blocks make one
run with no separator (adapters flatten them that way), and any other block
breaks the run and shows in place as JSON, so nothing is hidden or reordered.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..model.values import ContentBlock, Message, TextBlock
from .jsformat import TEXT_LIMIT, cap_utf16, pretty_json_head, utf16_len
from .readers import is_array, is_record


@dataclass(frozen=True, slots=True)
class Bounded:
    """A text cut to the 20,000-unit bound.

    When `truncated`, the template appends "\\n" and the `json.truncated`
    footer with `total`, the full length in UTF-16 units (JS `.length`).
    """

    text: str
    truncated: bool
    total: int


def bound(text: str, limit: int = TEXT_LIMIT) -> Bounded:
    head, truncated = cap_utf16(text, limit)
    return Bounded(head, truncated, utf16_len(text))


def bound_json(value: Any, limit: int = TEXT_LIMIT) -> Bounded:
    """`bound(pretty_json(value), limit)`, without printing more of a huge value than is shown."""
    return Bounded(*pretty_json_head(value, limit))


@dataclass(frozen=True, slots=True)
class TextPart:
    """One `pre[data-context-text]` run."""

    text: Bounded
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class JsonPart:
    """One `▸ Unknown content block` toggle: the block as 2-space JSON."""

    json: Bounded
    kind: Literal["json"] = "json"


ContentPart = TextPart | JsonPart
# A message, its frozen blocks, or the `content` value exactly as logged.
Content = Message | Iterable[ContentBlock | Any] | Any


def _pieces(content: Content) -> Iterator[str | JsonPart]:
    """Each block as its text (text blocks) or as a JSON toggle (everything else).

    Accepts a message, frozen blocks or logged JSON. Content that is not an
    array (which dsh's loader refuses) still shows, as one toggle, rather than
    being dropped: the inspector shows what the log holds.
    """
    if isinstance(content, Message):
        content = content.content
    if not is_array(content):
        yield _json_part(content)
        return
    for block in content:
        if isinstance(block, ContentBlock):
            yield block.text if isinstance(block, TextBlock) else _json_part(block.raw)
        elif is_record(block) and block.get("type") == "text" and isinstance(block.get("text"), str):
            yield block["text"]
        else:
            yield _json_part(block)


def _json_part(value: Any) -> JsonPart:
    return JsonPart(bound_json(value))


def content_parts(content: Content) -> tuple[ContentPart, ...]:
    """Text runs and JSON toggles in block order; empty runs show nothing."""
    parts: list[ContentPart] = []
    run: list[str] = []

    def flush() -> None:
        text = "".join(run)
        run.clear()
        if text:
            parts.append(TextPart(bound(text)))

    for piece in _pieces(content):
        if isinstance(piece, str):
            run.append(piece)
        else:
            flush()
            parts.append(piece)
    flush()
    return tuple(parts)


def unknown_parts(content: Content) -> tuple[JsonPart, ...]:
    """Only the non-text blocks: a catalog hides its prose but keeps the rest."""
    return tuple(p for p in _pieces(content) if isinstance(p, JsonPart))
