"""Latest-wins session state at any point of a log (docs/format.md §5.5).

Each setting is the data of the last event of its type at or before the
point; none means dsh's default. Only the deciding event is decoded: a small
index (`TypeIndex`) gives the seqs of each state type.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from ..model.frozen import FrozenDict
from ..model.payloads import GoalChange, RequestContext, TodoWrite
from ..model.payloads import Setting as SettingData
from .session import SessionLog

# The types whose seqs the per-log index keeps: the state settings, the
# request header, and the lifecycle marker that separates inherited history.
INDEXED_TYPES = (
    "plan/mode",
    "sandbox/mode",
    "approval/policy",
    "permission/preset",
    "agent-preset/selected",
    "todo/write",
    "goal/change",
    "request/context",
    "request/header",
    "session/end-seed",
)

# The settings the model view lists, in order, and the event type deciding each.
SETTINGS = (
    ("planMode", "plan/mode"),
    ("sandboxMode", "sandbox/mode"),
    ("approvalPolicy", "approval/policy"),
    ("permissionPreset", "permission/preset"),
    ("agentPreset", "agent-preset/selected"),
    ("todos", "todo/write"),
    ("goal", "goal/change"),
    ("modelRoute", "request/context"),
)


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    value: Any  # frozen JSON; None when unset
    seq: int | None  # the deciding event; None for the default or the header's value
    detail: str | None = None  # `source: delegation`, a goal operation, "header"...


@dataclass(frozen=True, slots=True)
class SessionState:
    at: int
    settings: tuple[Setting, ...]

    def get(self, name: str) -> Setting:
        return next(s for s in self.settings if s.name == name)


@dataclass(frozen=True, slots=True)
class TypeIndex:
    """The seqs of each of INDEXED_TYPES, ascending."""

    seqs: dict[str, array[int]]

    def last(self, kind: str, at: int) -> int | None:
        """The last `kind` event at or before `at`."""
        seqs = self.seqs[kind]
        i = bisect_right(seqs, at)
        return seqs[i - 1] if i else None

    def between(self, kind: str, after: int, upto: int) -> list[int]:
        """The `kind` events in (after, upto]."""
        seqs = self.seqs[kind]
        return list(seqs[bisect_right(seqs, after) : bisect_right(seqs, upto)])


def type_index(log: SessionLog) -> TypeIndex:
    out: dict[str, array[int]] = {t: array("q") for t in INDEXED_TYPES}
    for seq, kind in enumerate(log.types):
        seqs = out.get(kind)
        if seqs is not None:
            seqs.append(seq)
    return TypeIndex(out)


def _setting(log: SessionLog, name: str, seq: int | None) -> Setting:
    if seq is None:
        if name == "planMode":
            return Setting(name, False, None)
        if name == "agentPreset" and log.header is not None and log.header.agent_preset is not None:
            return Setting(name, log.header.agent_preset, None, "header")
        return Setting(name, None, None)
    payload = log.event(seq).payload
    if isinstance(payload, TodoWrite):
        return Setting(name, payload.todos if payload.todos is not None else (), seq)
    if isinstance(payload, GoalChange):
        goal = None if payload.operation == "clear" else payload.goal
        return Setting(name, goal, seq, payload.operation)
    if isinstance(payload, RequestContext):
        route = {"provider": payload.provider, "model": payload.model, "contextWindow": payload.context_window}
        return Setting(name, FrozenDict({k: v for k, v in route.items() if v is not None}), seq)
    if name == "todos":
        return Setting(name, (), seq)
    if name == "modelRoute":
        return Setting(name, FrozenDict(), seq)
    chosen = payload if isinstance(payload, SettingData) else SettingData()
    delegation = f"source: {chosen.source}" if chosen.source is not None else None
    if name == "planMode":
        return Setting(name, chosen.active is True, seq)
    if name == "sandboxMode":
        return Setting(name, chosen.mode, seq, delegation)
    if name == "approvalPolicy":
        return Setting(name, chosen.policy, seq, delegation)
    if name == "permissionPreset":
        return Setting(name, chosen.preset, seq)
    if name == "agentPreset":
        return Setting(name, chosen.agent_preset, seq)
    return Setting(name, None, seq)  # a goal change whose data is no object


def state_at(log: SessionLog, types: TypeIndex, at: int) -> SessionState:
    """The state in force after event `at`."""
    return SessionState(at, tuple(_setting(log, name, types.last(kind, at)) for name, kind in SETTINGS))


@dataclass(frozen=True, slots=True)
class StateChange:
    name: str
    before: Setting
    after: Setting


def state_changes(before: SessionState, after: SessionState) -> tuple[StateChange, ...]:
    """Settings whose value differs between two points (a re-logged equal value is no change)."""
    return tuple(
        StateChange(a.name, a, b)
        for a, b in zip(before.settings, after.settings, strict=True)
        if a.value != b.value or a.detail != b.detail
    )
