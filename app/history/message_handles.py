"""Message ids as links and anchors spell them: a short id as it is (docs/product.md Interfaces, `#msg-{id}`), a long
one as a short stable handle, so that no link grows with what a log holds (the deviation from the spec's verbatim
anchor: docs/decisions/0010-rewrite-detection.md)."""

from __future__ import annotations

import hashlib
import re

from .session import SessionLog

LONGEST_ID = 128  # characters of a message id that links and anchors spell out as it is
_HANDLE = re.compile(r"~[0-9a-f]{16}")


def message_handle(message_id: str) -> str:
    """The id itself, up to `LONGEST_ID` characters; a longer one, or one spelled like a handle, as `~` and
    16 hex digits of a hash of it (`~` and hex alone: safe in a path, a fragment and an `id` attribute)."""
    if len(message_id) <= LONGEST_ID and not _HANDLE.fullmatch(message_id):
        return message_id
    return "~" + hashlib.sha256(message_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def message_anchor(message_id: str, occurrence: int = 1) -> str:
    """The anchor of a row that stands for message `message_id`: `msg-` and its handle, `~n` for the n-th row of
    an id that repeats (docs/product.md Interfaces)."""
    return f"msg-{message_handle(message_id)}" + (f"~{occurrence}" if occurrence > 1 else "")


def handles_of(log: SessionLog) -> dict[str, str]:
    """Each handle that is not its id itself → the id of `log` it stands for."""
    return {handle: i for i in log.carried_ids if (handle := message_handle(i)) != i}
