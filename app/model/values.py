"""The frozen values every layer above storage works with (docs/format.md §2-§4).

Each keeps its stored JSON in `raw`, so nothing a log holds is lost, not even
fields this version does not know; typed fields are read from it. Each is a frozen msgspec Struct: a
page or an index decodes thousands of events, and a Struct is made in a tenth of a frozen dataclass's
time; holding no cycle, none is tracked by the collector.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

import msgspec

from .frozen import FrozenDict, freeze, thaw
from .payloads import Payload

# What shape of information a context message declares it is (`source.form`, docs/format.md §4.4).
ContextForm = Literal["instructions", "catalog", "snapshot", "notice", "relay", "recall"]
CONTEXT_FORMS: tuple[ContextForm, ...] = get_args(ContextForm)


class ContentBlock(msgspec.Struct, frozen=True, gc=False):
    type: str
    raw: FrozenDict

    def to_json(self) -> dict[str, Any]:
        return thaw(self.raw)


class TextBlock(ContentBlock, frozen=True, gc=False):
    text: str


class ReasoningBlock(ContentBlock, frozen=True, gc=False):
    text: str


class ImageBlock(ContentBlock, frozen=True, gc=False):
    attachment: FrozenDict


class ToolCallBlock(ContentBlock, frozen=True, gc=False):
    id: str
    name: str
    arguments: str


class ToolResultBlock(ContentBlock, frozen=True, gc=False):
    tool_call_id: str
    content: tuple[ContentBlock, ...]
    is_error: bool | None


class UnknownBlock(ContentBlock, frozen=True, gc=False):
    """A block of a type this version does not know, or a known type in a
    shape it cannot read: preserved whole, shown as JSON."""


def block_from_json(value: Any) -> ContentBlock:
    raw = freeze(value) if isinstance(value, Mapping) else FrozenDict({"type": None, "value": freeze(value)})
    kind = raw.get("type")
    if kind in ("text", "reasoning") and isinstance(raw.get("text"), str):
        cls = TextBlock if kind == "text" else ReasoningBlock
        return cls(kind, raw, raw["text"])
    if kind == "image" and isinstance(raw.get("attachment"), Mapping):
        return ImageBlock(kind, raw, raw["attachment"])
    if kind == "tool-call" and all(isinstance(raw.get(k), str) for k in ("id", "name", "arguments")):
        return ToolCallBlock(kind, raw, raw["id"], raw["name"], raw["arguments"])
    if (
        kind == "tool-result"
        and isinstance(raw.get("toolCallId"), str)
        and isinstance(raw.get("content"), tuple)
        and isinstance(raw.get("isError", False), bool)
    ):
        nested = tuple(block_from_json(b) for b in raw["content"])
        return ToolResultBlock(kind, raw, raw["toolCallId"], nested, raw.get("isError"))
    return UnknownBlock(kind if isinstance(kind, str) else "", raw)


class MessageSource(msgspec.Struct, frozen=True, gc=False):
    """Who produced a message (`kind`) and, for context, its declared `form`.

    `raw` holds every field, unknown ones included (sources are merge-extensible)."""

    kind: str
    raw: FrozenDict

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> MessageSource:
        raw = freeze(value)
        kind = raw.get("kind")
        return cls(kind if isinstance(kind, str) else "", raw)

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    @property
    def form(self) -> str | None:
        form = self.raw.get("form")
        return form if isinstance(form, str) and form else None

    def to_json(self) -> dict[str, Any]:
        return thaw(self.raw)


class Message(msgspec.Struct, frozen=True, gc=False):
    """One identified, immutable message: `{id, role, content, source}`."""

    id: str
    role: str
    content: tuple[ContentBlock, ...]
    source: MessageSource

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "role": self.role,
            "content": [b.to_json() for b in self.content],
            "source": self.source.to_json(),
        }

    @property
    def is_checkpoint(self) -> bool:
        """A compaction checkpoint: the message a compaction put in place of what it shadowed (docs/format.md §5.6)."""
        return self.source.kind == "plugin" and self.source.get("plugin") == "compact"

    @property
    def is_context(self) -> bool:
        """Injected context: a user-role message that neither a person nor a tool wrote (docs/format.md §5.5),
        a checkpoint included."""
        return self.role == "user" and self.source.kind not in ("user", "tool")

    def text(self) -> str:
        """Adjacent text blocks joined without separator, as adapters do."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


class Header(msgspec.Struct, frozen=True, gc=False):
    """The session header (docs/format.md §2.1); `raw` keeps unknown keys."""

    id: str | None
    version: int | None
    created_at: int | None
    cwd: str | None
    parent_session: str | None
    seed_length: int | None
    origin: str | None
    delegation_depth: int | None
    agent_preset: str | None
    raw: FrozenDict

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> Header:
        raw = freeze(value)

        def text(key: str) -> str | None:
            v = raw.get(key)
            return v if isinstance(v, str) else None

        def integer(key: str) -> int | None:
            v = raw.get(key)
            return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() else None

        return cls(
            id=text("id"),
            version=integer("version"),
            created_at=integer("createdAt"),
            cwd=text("cwd"),
            parent_session=text("parentSession"),
            seed_length=integer("seedLength"),
            origin=text("origin"),
            delegation_depth=integer("delegationDepth"),
            agent_preset=text("agentPreset"),
            raw=raw,
        )

    def to_json(self) -> dict[str, Any]:
        return thaw(self.raw)


class Event(msgspec.Struct, frozen=True, gc=False):
    """One session event after legacy upgrades (docs/format.md §2.2).

    `payload` is `data` typed (`payloads.decode_payload`), what every view reads; `data` is the stored
    value itself, for the views that show it as JSON. `message` is the frozen message of a surface event;
    `source_event_seqs` is decoded from either the list or the range form; `raw` is the event as stored
    (after upgrades), for the raw-JSON view.
    """

    seq: int
    time: int
    type: str
    data: Any
    payload: Payload | None
    surface_op: Any
    source_event_seqs: tuple[int, ...] | None
    ignorable: bool
    message: Message | None
    synthetic: bool
    raw: FrozenDict

    def to_json(self) -> dict[str, Any]:
        return thaw(self.raw)
