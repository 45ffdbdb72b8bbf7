"""Event lines decoded straight from their bytes into what the verdict reads of them, and no more
(docs/decisions/0040-verdict-views.md, 0041-view-fast-paths.md).

The validating read parses every line of a log but reads a few fields of each: its envelope, a turn and a step,
a call id, a message's id and source and the types of its blocks. Building the whole value (every text of
every block) cost more than all the rules together. A *view* is the event as msgspec Structs that hold the
fields the fast path of `history.reading` reads, with their values as stored, where the event is in the shape
dsh writes: each view's type below says that shape exactly, and a line of any other shape (another type, a key
the shape does not name where the reader counts keys, a value of another type, a number past the safe
integers, a message `rules.message_problem` would refuse) is no view, and is parsed whole as before. A reader
that must judge a view's event further parses its line whole.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, UnsetType

from ..log.jsonvalues import MAX_SAFE_INTEGER

# an integer as orjson reads one and the rules' `type(x) is int` tests take it; past the safe range, a line is
# parsed whole (orjson reads an integer past 64 bits as a double, msgspec as an int)
SafeInt = Annotated[int, msgspec.Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]


class _Event(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, kw_only=True, gc=False):
    """The envelope: exactly type, seq, time and data (the fast path counts an event's keys)."""

    kind: ClassVar[str]  # the type, as `_KINDS` holds it
    seq: SafeInt
    time: SafeInt
    # a dict of the keys of the data the rules read, as stored (absent where absent), decoded as such in C
    data: Any


# -- plain events: type, seq, time and data -------------------------------------------------------------


class _Turned(msgspec.Struct, gc=False):
    """A turn and a step (absent or null alike: a fast path takes only ints, where absent and null differ)."""

    turn: SafeInt | None = None
    step: SafeInt | None = None


class Chunk(_Event, tag="assistant/chunk", kw_only=True):
    """Half of a typical log: its turn and step compared at once."""

    kind = "assistant/chunk"
    data: _Turned


class StepStart(_Event, tag="step/start", kw_only=True):
    kind = "step/start"
    data: _Turned


class StepEnd(_Event, tag="step/end", kw_only=True):
    kind = "step/end"
    data: _Turned


class _TurnStart(msgspec.Struct, gc=False):
    turn: SafeInt | None = None
    trigger: Any = UNSET  # a legacy turn start's, which the upgrade reads whole


class TurnStart(_Event, tag="turn/start", kw_only=True):
    kind = "turn/start"
    data: _TurnStart


class TurnEnd(_Event, tag="turn/end", kw_only=True):
    """Its data whole (two small keys), which `turn_is_current` counts: a number past the safe integers is read
    as msgspec reads it, but only a turn within them is current, and any other is parsed whole."""

    kind = "turn/end"
    data: dict[str, Any]


class _ToolCall(_Turned, gc=False):
    callId: str | None = None


class ToolCall(_Event, tag="tool/call", kw_only=True):
    kind = "tool/call"
    data: _ToolCall


class _Inserted(msgspec.Struct, gc=False):
    """An inserted message: an object, its id a string where it has one."""

    id: str | None = None


class _Inbox(msgspec.Struct, gc=False):
    inserted: list[_Inserted] = []


class InboxSplice(_Event, tag="agent/inbox/spliced", kw_only=True):
    kind = "agent/inbox/spliced"
    data: _Inbox


# -- surface events: an appended message, well formed ------------------------------------------------------
# Each message type says all that `rules.message_problem` asks of its kind's message, but that a tool result's
# block answers its source's call: a message of any other shape has no view, and is parsed whole.

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


class _Object(msgspec.Struct, gc=False):
    """An object whose keys the verdict does not read (any keys)."""


class _Source(msgspec.Struct, gc=False):
    kind: NonEmpty


class _Prompt(msgspec.Struct, gc=False):
    id: NonEmpty
    role: Literal["user"]
    source: _Source
    content: list[_Object]


class Surface(_Event, kw_only=True):
    """A surface event appended, with `sourceEventSeqs` or without (UNSET)."""

    surfaceOp: Literal["append"]
    sourceEventSeqs: list[SafeInt] | UnsetType = UNSET


class UserMessage(Surface, tag="user/message", kw_only=True):
    kind = "user/message"
    data: _Prompt


class _Block(msgspec.Struct, gc=False):
    """A reply's block, as the crash tracker reads it: a tool call's id (absent or null alike)."""

    type: str | None = None
    id: str | None = None


class _ModelSource(msgspec.Struct, gc=False):
    kind: Literal["model"]
    provider: NonEmpty
    model: NonEmpty


class _Reply(msgspec.Struct, gc=False):
    id: NonEmpty
    role: Literal["assistant"]
    source: _ModelSource
    content: list[_Block]


class _Said(_Turned, gc=False, kw_only=True):
    message: _Reply


class AssistantMessage(Surface, tag="assistant/message", kw_only=True):
    kind = "assistant/message"
    data: _Said


class _ToolSource(msgspec.Struct, gc=False):
    kind: Literal["tool"]
    callId: NonEmpty


class _ResultBlock(msgspec.Struct, gc=False):
    type: Literal["tool-result"]
    toolCallId: str  # its source's callId, compared by the reader
    content: list[_Object]


class _Result(msgspec.Struct, gc=False):
    id: NonEmpty
    role: Literal["user"]
    source: _ToolSource
    content: Annotated[list[_ResultBlock], msgspec.Meta(min_length=1, max_length=1)]


class _Answered(_Turned, gc=False, kw_only=True):
    message: _Result


class ToolResult(Surface, tag="tool/result", kw_only=True):
    kind = "tool/result"
    data: _Answered


View = (
    Chunk
    | StepStart
    | StepEnd
    | TurnStart
    | TurnEnd
    | ToolCall
    | InboxSplice
    | UserMessage
    | AssistantMessage
    | ToolResult
)
_decode = msgspec.json.Decoder(View).decode


def verdict_views(lines: list[bytes]) -> list[View | None]:
    """Each line's view, or None for a line that has none. The lines must be valid UTF-8 and nest at most
    MAX_DEPTH deep: a view skips the values it does not read, and so does not see bad UTF-8 or deep nesting in
    them, which a whole parse warns about."""
    try:
        return list(map(_decode, lines))  # (nearly every batch of a log, each of its lines a view)
    except (msgspec.DecodeError, RecursionError):
        pass
    out: list[View | None] = []
    append = out.append
    for line in lines:
        try:
            append(_decode(line))
        except (msgspec.DecodeError, RecursionError):  # (a ValidationError is one; msgspec reads so deep)
            append(None)
    return out
