"""What a surface `replace` did (docs/format.md §5.2, §5.6, §5.7).

A replace either keeps the id of what it shadows (a pruned tool result, a
rewritten message: the same semantic message in a new representation) or
brings a new id (a compaction checkpoint, any other new message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..model.payloads import Compaction, payload_as
from .session import SessionLog

ReplaceKind = Literal["compaction", "prune", "rewrite", "replace"]


@dataclass(frozen=True, slots=True)
class Replacement:
    seq: int
    kind: ReplaceKind
    message_id: str | None
    start: int
    end: int
    shadowed: tuple[int, ...]
    shadowed_ids: tuple[str, ...]
    # dsh's estimate of what the shadowed span cost, from the event right before
    shadowed_tokens: int | None


def replacement(log: SessionLog, seq: int) -> Replacement | None:
    """The replace at `seq`, or None when that event is not a valid replace."""
    op = log.surface_ops.get(seq)
    if not isinstance(op, tuple):
        return None
    shadowed = tuple(log.shadowed_by.get(seq, ()))
    shadowed_ids = tuple(i for i in (log.message_ids.get(s) for s in shadowed) if i is not None)
    message_id = log.message_ids.get(seq)
    kind: ReplaceKind
    if log.types[seq] == "tool/result":
        kind = "prune"
    elif message_id is not None and message_id in shadowed_ids:
        kind = "rewrite"
    else:
        message = log.event(seq).message
        kind = "compaction" if message is not None and message.is_checkpoint else "replace"
    tokens = None
    if seq > 0 and log.types[seq - 1] in ("compaction/summary", "compaction/prune"):
        tokens = payload_as(log.event(seq - 1).payload, Compaction).shadowed_token_count
    return Replacement(seq, kind, message_id, op[0], op[1], shadowed, shadowed_ids, tokens)


def removals(log: SessionLog) -> dict[int, int]:
    """Shadowed seq → the replace that took it off the surface."""
    return {s: seq for seq, shadowed in log.shadowed_by.items() for s in shadowed}
