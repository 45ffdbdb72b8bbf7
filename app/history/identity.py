"""Everything one message id went through (docs/format.md §5.7, docs/product.md "Identified immutable messages").

The id is minted once and travels: the inbox splice that queued the message,
the message event, a rewrite that kept the id (a pruned result), and every
request that carried it. A replacement with a new id (a checkpoint) names
the ids it shadowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from ..model.messages import freeze_message
from ..model.payloads import InboxSplice, decode_payload, payload_as
from ..model.values import Message
from .replacements import Replacement, replacement
from .requests import CallRef, RequestIndex, call_ref
from .session import SessionLog

InboxFate = Literal["claimed", "canceled", "pending"]


@dataclass(frozen=True, slots=True)
class InboxCarrier:
    """A splice that queued the message (`agent/inbox/spliced.inserted[]`)."""

    role: ClassVar[str] = "inbox"
    seq: int
    target: str | None
    message: Message | None  # the queued copy, as the splice holds it
    fate: InboxFate
    taken_at: int | None  # the splice that took it off the list


@dataclass(frozen=True, slots=True)
class MessageCarrier:
    """A surface event holding the message."""

    role: ClassVar[str] = "message"
    seq: int
    type: str
    message: Message | None
    appended: bool
    replacement: Replacement | None  # when it joined the surface by a replace
    keeps_id_of: tuple[int, ...]  # the shadowed events with this same id (a rewrite)
    shadowed_by: int | None  # the replace that later took it off the surface
    visible: bool  # False for an assistant message with empty content (docs/format.md §5.3)
    requests: tuple[CallRef, ...]  # model calls whose request included this event


Carrier = InboxCarrier | MessageCarrier


@dataclass(frozen=True, slots=True)
class MessageIdentity:
    id: str
    carriers: tuple[Carrier, ...]  # in seq order

    @property
    def requests(self) -> tuple[CallRef, ...]:
        seen: dict[tuple[str, int], CallRef] = {}
        for carrier in self.carriers:
            if isinstance(carrier, MessageCarrier):
                for ref in carrier.requests:
                    seen.setdefault((ref.step_key, ref.number), ref)
        return tuple(sorted(seen.values(), key=lambda r: r.request_at))


def _fates(log: SessionLog) -> dict[tuple[int, str], tuple[InboxFate, int]]:
    """(splice seq, id) → how the queued message left its list, replaying every splice."""
    lists: dict[str, list[tuple[int, str]]] = {}
    out: dict[tuple[int, str], tuple[InboxFate, int]] = {}
    for seq, kind in enumerate(log.types):
        if kind != "agent/inbox/spliced":
            continue
        splice = _splice(log, seq)
        if splice.target is None:
            continue
        items = lists.setdefault(splice.target, [])
        start, removed = splice.start or 0, splice.removed_count or 0
        fate: InboxFate = "canceled" if splice.outcome == "canceled" else "claimed"
        for item in items[start : start + removed]:
            out[item] = (fate, seq)
        inserted = [(seq, m["id"]) for m in splice.inserted if isinstance(m, dict) and isinstance(m.get("id"), str)]
        items[start : start + removed] = inserted
    return out


def _splice(log: SessionLog, seq: int) -> InboxSplice:
    """An `agent/inbox/spliced` event's data, decoded from the stored event (its message not frozen)."""
    return payload_as(decode_payload("agent/inbox/spliced", log.raw_event(seq).get("data")), InboxSplice)


def _inserted(log: SessionLog, seq: int, message_id: str) -> Message | None:
    for value in _splice(log, seq).inserted:
        if isinstance(value, Mapping) and value.get("id") == message_id:
            try:
                return freeze_message(value)
            except ValueError:
                return None
    return None


def _requests(log: SessionLog, index: RequestIndex, seq: int) -> tuple[CallRef, ...]:
    """The calls made while `seq` was on the surface: from its append until the replace that shadowed it."""
    if seq not in log.surface_ops or seq in log.empty_assistant:
        return ()
    gone = index.removed_at.get(seq)
    return tuple(
        call_ref(step, call)
        for step, call in index.calls.ordered_calls()
        if seq <= call.request_at and (gone is None or call.request_at < gone)
    )


def _message_carrier(log: SessionLog, index: RequestIndex, seq: int, message_id: str) -> MessageCarrier:
    replaced = replacement(log, seq)
    keeps = tuple(s for s in replaced.shadowed if log.message_ids.get(s) == message_id) if replaced else ()
    return MessageCarrier(
        seq=seq,
        type=log.types[seq],
        message=log.event(seq).message,
        appended=log.surface_ops.get(seq) == "append",
        replacement=replaced,
        keeps_id_of=keeps,
        shadowed_by=index.removed_at.get(seq),
        visible=seq not in log.empty_assistant,
        requests=_requests(log, index, seq),
    )


def message_identity(log: SessionLog, index: RequestIndex, message_id: str) -> MessageIdentity | None:
    """Every carrier of `message_id`, or None when no event of the log carries it."""
    entries = log.carriers_of(message_id)
    if not entries:
        return None
    fates = _fates(log) if any(e.role == "inbox" for e in entries) else {}
    carriers: list[Carrier] = []
    unfated: tuple[InboxFate, int | None] = ("pending", None)  # still on its list: no splice took it
    for entry in sorted(entries, key=lambda e: (e.seq, e.role)):
        if entry.role == "inbox":
            fate, taken = fates.get((entry.seq, message_id), unfated)
            target = _splice(log, entry.seq).target
            carriers.append(InboxCarrier(entry.seq, target, _inserted(log, entry.seq, message_id), fate, taken))
        else:
            carriers.append(_message_carrier(log, index, entry.seq, message_id))
    return MessageIdentity(message_id, tuple(carriers))
