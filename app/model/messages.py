"""Creating and importing messages (docs/product.md "Identified immutable messages").

Two doors: the `create_*` helpers mint a new id from the current id source
and take none from the caller; `freeze_message` imports a message that
already has one and keeps it. Both detach the value from the caller's
objects and deep-freeze it.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .frozen import freeze, thaw
from .values import ContentBlock, Message, MessageSource, block_from_json

IdSource = Callable[[], str]


def random_ids() -> str:
    return str(uuid.uuid4())


class SeededIds:
    """Deterministic UUID-shaped ids, for demos, benchmarks and tests."""

    def __init__(self, seed: int | str) -> None:
        self._rng = random.Random(seed)

    def __call__(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))


_id_source: ContextVar[IdSource] = ContextVar("dsh_inspect_id_source", default=random_ids)


@contextmanager
def using_id_source(source: IdSource) -> Iterator[IdSource]:
    """Mint ids from `source` inside the block (the default is random UUIDs)."""
    token = _id_source.set(source)
    try:
        yield source
    finally:
        _id_source.reset(token)


def _blocks(content: Iterable[ContentBlock | Mapping[str, Any]]) -> tuple[ContentBlock, ...]:
    if isinstance(content, (str, bytes, Mapping)):
        raise TypeError("content is a list of content blocks")
    return tuple(block_from_json(b.raw if isinstance(b, ContentBlock) else b) for b in content)


def _source(source: object) -> MessageSource:
    """`source` checked whatever its declared type: it may come from untyped code or JSON."""
    if isinstance(source, MessageSource):
        return source
    if not isinstance(source, Mapping) or not isinstance(source.get("kind"), str) or not source["kind"]:
        raise ValueError("source needs a non-empty string kind")
    return MessageSource.of(source)


def create_message(
    *,
    role: str,
    content: Iterable[ContentBlock | Mapping[str, Any]],
    source: MessageSource | Mapping[str, Any],
    id_source: IdSource | None = None,
) -> Message:
    """A new semantic message with a freshly minted id."""
    if role not in ("system", "user", "assistant"):
        raise ValueError(f"role must be system, user or assistant, not {role!r}")
    mint = id_source or _id_source.get()
    return Message(id=mint(), role=role, content=_blocks(content), source=_source(source))


def create_user_message(
    *,
    content: Iterable[ContentBlock | Mapping[str, Any]],
    source: MessageSource | Mapping[str, Any],
    id_source: IdSource | None = None,
) -> Message:
    return create_message(role="user", content=content, source=source, id_source=id_source)


def create_assistant_message(
    *,
    content: Iterable[ContentBlock | Mapping[str, Any]],
    provider: str,
    model: str,
    replay_state: Any = None,
    id_source: IdSource | None = None,
) -> Message:
    """An assistant message; its source kind is always `model`."""
    source: dict[str, Any] = {"kind": "model", "provider": provider, "model": model}
    if replay_state is not None:
        source["replayState"] = thaw(replay_state)
    return create_message(role="assistant", content=content, source=source, id_source=id_source)


def create_tool_result_message(
    *,
    call_id: str,
    content: Iterable[ContentBlock | Mapping[str, Any]],
    is_error: bool,
    id_source: IdSource | None = None,
) -> Message:
    """A user-role message holding one tool-result block for `call_id`."""
    nested = [b.to_json() if isinstance(b, ContentBlock) else thaw(b) for b in content]
    block = {"type": "tool-result", "toolCallId": call_id, "content": nested, "isError": is_error}
    return create_message(role="user", content=[block], source={"kind": "tool", "callId": call_id}, id_source=id_source)


def freeze_message(message: Message | Mapping[str, Any]) -> Message:
    """Import a message that already has an id, keeping the id."""
    if isinstance(message, Message):
        return message
    mid = message.get("id")
    if not isinstance(mid, str) or not mid:
        raise ValueError("an imported message needs a non-empty string id")
    role = message.get("role")
    content = message.get("content")
    source = message.get("source")
    if not isinstance(content, (list, tuple)):
        raise ValueError("message content is not an array")
    if not isinstance(source, Mapping):
        raise ValueError("message source is not an object")
    return Message(
        id=mid,
        role=role if isinstance(role, str) else "",
        content=tuple(block_from_json(b) for b in content),
        source=MessageSource.of(freeze(source)),
    )
