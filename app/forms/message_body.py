"""A model-visible message's content as the model read it, block by block.

Unlike the transcript, nothing is merged away: reasoning, tool calls (with the
arguments exactly as the model wrote them) and tool results all show, in
order. Adjacent text blocks make one run with no separator, as adapters send
them; every text is bounded (docs/ui.md §1.6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..model.values import Message, ReasoningBlock, TextBlock, ToolCallBlock, ToolResultBlock
from .content import Bounded, ContentPart, bound, bound_json, content_parts

PartKind = Literal["text", "reasoning", "tool-call", "tool-result", "json"]


@dataclass(frozen=True, slots=True)
class BodyPart:
    kind: PartKind
    text: Bounded | None = None  # text, reasoning, tool-call arguments, or the JSON of another block
    name: str | None = None  # the tool a call names
    call_id: str | None = None  # a tool call's id, or the call a result answers
    is_error: bool = False
    nested: tuple[ContentPart, ...] = ()  # a tool result's own content


def body_parts(message: Message) -> tuple[BodyPart, ...]:
    parts: list[BodyPart] = []
    run: list[str] = []

    def flush() -> None:
        text = "".join(run)
        run.clear()
        if text:
            parts.append(BodyPart("text", bound(text)))

    for block in message.content:
        if isinstance(block, TextBlock):
            run.append(block.text)
            continue
        flush()
        if isinstance(block, ReasoningBlock):
            parts.append(BodyPart("reasoning", bound(block.text)))
        elif isinstance(block, ToolCallBlock):
            parts.append(BodyPart("tool-call", bound(block.arguments), name=block.name, call_id=block.id))
        elif isinstance(block, ToolResultBlock):
            parts.append(
                BodyPart(
                    "tool-result",
                    call_id=block.tool_call_id,
                    is_error=block.is_error is True,
                    nested=content_parts(block.content),
                )
            )
        else:
            parts.append(BodyPart("json", bound_json(block.raw)))
    flush()
    return tuple(parts)


# What a one-line summary prefers: the answer's prose first, reasoning last.
_SUMMARY_ORDER: tuple[PartKind, ...] = ("text", "tool-call", "tool-result", "reasoning", "json")


def _line(part: BodyPart) -> str:
    if part.kind == "tool-call":
        text = f"{part.name}({part.text.text if part.text else ''})"
    elif part.kind == "tool-result":
        text = next((p.text.text for p in part.nested if p.kind == "text"), "")
    else:
        text = part.text.text if part.text else ""
    return text.strip().split("\n", 1)[0]


def first_line(message: Message, limit: int = 160) -> str:
    """A one-line summary: the first line of its text, else of a call, a result or its reasoning."""
    parts = body_parts(message)
    for kind in _SUMMARY_ORDER:
        for part in parts:
            line = _line(part) if part.kind == kind else ""
            if line:
                return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""
