"""Request reconstruction (docs/format.md §5.4): what the model read at each call.

A request is the latest `request/header` snapshot at or before the call
(canonicalized) plus the model-visible messages (§5.3) of the log prefix at
dispatch. The model view of a step lists each of its calls with its own
request and outcome, and what changed since the call before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..model.frozen import FrozenDict
from ..model.payloads import AssistantChunk, AssistantMessage, FinishReason, Retry, StreamChunk, TurnEnd, payload_as
from ..model.payloads import RequestHeader as RequestHeaderData
from ..model.values import Message
from .calls import CallIndex, ModelCall, Step, call_index
from .replacements import Replacement, removals, replacement
from .session import SessionLog
from .spend.tokens import Usage, usage_from
from .state import SessionState, StateChange, TypeIndex, state_at, state_changes, type_index


@dataclass(frozen=True, slots=True)
class RequestIndex:
    """What every request view of one log needs; kept per file version by the caller."""

    calls: CallIndex
    types: TypeIndex
    removed_at: dict[int, int]  # shadowed seq → the replace that took it off the surface


def request_index(log: SessionLog) -> RequestIndex:
    return RequestIndex(call_index(log), type_index(log), removals(log))


# --- the request header ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolSchema:
    name: str
    description: str | None
    schema: Any  # the whole logged entry, frozen


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """One `request/header` snapshot in canonical form (docs/format.md §3.3 `EpochHeader`)."""

    seq: int
    reason: str | None
    config: FrozenDict
    adapter_defaults: FrozenDict | None
    system: str | None
    tools: tuple[ToolSchema, ...] | None
    # `tools` as logged when it is not a list (fixtures hold "{{tools}}"), else None
    tools_unread: Any

    @property
    def provider(self) -> Any:
        return self.config.get("provider")

    @property
    def model(self) -> Any:
        return self.config.get("model")

    @property
    def reasoning_effort(self) -> Any:
        return self.config.get("reasoningEffort")

    @property
    def other_config(self) -> tuple[tuple[str, Any], ...]:
        return tuple((k, v) for k, v in self.config.items() if k not in ("provider", "model", "reasoningEffort"))

    def canonical(self) -> dict[str, Any]:
        """The snapshot the fold keeps: empty system and tools dropped, as are unmarked adapter defaults."""
        out: dict[str, Any] = {"config": self.config}
        if self.adapter_defaults is not None:
            out["adapterDefaults"] = self.adapter_defaults
        if self.system is not None:
            out["system"] = self.system
        if self.tools is not None:
            out["tools"] = tuple(t.schema for t in self.tools)
        elif self.tools_unread is not None:
            out["tools"] = self.tools_unread
        return out


def _tool(value: Any) -> ToolSchema:
    name = value.get("name") if isinstance(value, Mapping) else None
    description = value.get("description") if isinstance(value, Mapping) else None
    return ToolSchema(
        name if isinstance(name, str) else "?", description if isinstance(description, str) else None, value
    )


def header_from(log: SessionLog, seq: int) -> RequestHeader:
    logged = payload_as(log.event(seq).payload, RequestHeaderData)
    header = logged.header if isinstance(logged.header, Mapping) else FrozenDict()
    config = header.get("config")
    config = config if isinstance(config, FrozenDict) else FrozenDict()
    defaults = header.get("adapterDefaults")
    marked = isinstance(defaults, Mapping) and any(v is True for v in defaults.values())
    system = header.get("system")
    tools = header.get("tools")
    return RequestHeader(
        seq=seq,
        reason=logged.reason,
        config=config,
        adapter_defaults=defaults if marked else None,
        system=system if isinstance(system, str) and system else None,
        tools=tuple(_tool(t) for t in tools) if isinstance(tools, tuple) and tools else None,
        tools_unread=tools if tools is not None and not isinstance(tools, tuple) else None,
    )


def header_at(log: SessionLog, types: TypeIndex, at: int) -> RequestHeader | None:
    """The header in force after event `at` (latest wins)."""
    seq = types.last("request/header", at)
    return header_from(log, seq) if seq is not None else None


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str  # "config.model", "adapterDefaults", "system", "tool:read"
    before: Any  # frozen JSON, None when absent
    after: Any


@dataclass(frozen=True, slots=True)
class HeaderChange:
    seq: int
    reason: str | None
    first: bool  # no header was in force before it: every field is new, none is listed
    fields: tuple[FieldChange, ...]  # empty on a later snapshot: logged again unchanged


def _field_changes(before: RequestHeader, after: RequestHeader) -> tuple[FieldChange, ...]:
    old = before.canonical()
    new = after.canonical()
    changes: list[FieldChange] = []
    old_config, new_config = old["config"], new["config"]
    for key in [*old_config, *(k for k in new_config if k not in old_config)]:
        if old_config.get(key) != new_config.get(key) or (key in old_config) != (key in new_config):
            changes.append(FieldChange(f"config.{key}", old_config.get(key), new_config.get(key)))
    for key in ("adapterDefaults", "system"):
        if old.get(key) != new.get(key):
            changes.append(FieldChange(key, old.get(key), new.get(key)))
    old_tools = {t.name: t.schema for t in (before.tools or ())}
    new_tools = {t.name: t.schema for t in (after.tools or ())}
    for name in [*old_tools, *(n for n in new_tools if n not in old_tools)]:
        if old_tools.get(name) != new_tools.get(name):
            changes.append(FieldChange(f"tool:{name}", old_tools.get(name), new_tools.get(name)))
    if before.tools_unread != after.tools_unread:
        changes.append(FieldChange("tools", before.tools_unread, after.tools_unread))
    return tuple(changes)


def header_changes(log: SessionLog, types: TypeIndex, after: int, upto: int) -> tuple[HeaderChange, ...]:
    """Each `request/header` in (after, upto], with what it changed against the one before."""
    current = header_at(log, types, after)
    out = []
    for seq in types.between("request/header", after, upto):
        header = header_from(log, seq)
        first = current is None
        out.append(HeaderChange(seq, header.reason, first, () if current is None else _field_changes(current, header)))
        current = header
    return tuple(out)


# --- the model-visible messages ------------------------------------------


@dataclass(frozen=True, slots=True)
class VisibleMessage:
    """One message of a request, decoded when it is read: the last request of a long session holds
    its whole history (W3's: 70,849 messages, about 90 MiB decoded at once)."""

    seq: int
    replaced: bool  # it joined the surface by a replace (compaction, pruning, rewrite)
    inherited: bool  # it came with a fork or resume seed

    def read(self, log: SessionLog) -> Message:
        message = log.event(self.seq).message
        assert message is not None  # the surface holds only events whose message is well shaped
        return message


def surfaces_at(log: SessionLog, points: Iterable[int]) -> dict[int, tuple[int, ...]]:
    """The model-visible surface seqs after each point, in one fold (docs/format.md §5.2, §5.3)."""
    wanted = sorted(set(points))
    out: dict[int, tuple[int, ...]] = {}
    nodes: list[int] = []
    i = 0

    def visible() -> tuple[int, ...]:
        return tuple(s for s in nodes if s not in log.empty_assistant)

    for seq, op in log.surface_ops.items():  # kept in seq order
        while i < len(wanted) and wanted[i] < seq:
            out[wanted[i]] = visible()
            i += 1
        if i == len(wanted):
            break
        if op == "append":
            nodes.append(seq)
        else:
            start, end = nodes.index(op[0]), nodes.index(op[1])
            nodes[start : end + 1] = [seq]
    rest = visible()
    for point in wanted[i:]:
        out[point] = rest
    return out


def seed_boundary(log: SessionLog, types: TypeIndex, at: int) -> int | None:
    """Seqs below this came with a seed: the last `session/end-seed`, else the fork's seedLength."""
    seq = types.last("session/end-seed", at)
    if seq is not None:
        return seq
    length = log.header.seed_length if log.header else None
    return length if length and at >= length else None


def visible_messages(log: SessionLog, seqs: tuple[int, ...], boundary: int | None) -> tuple[VisibleMessage, ...]:
    ops = log.surface_ops
    return tuple(VisibleMessage(s, ops.get(s) != "append", boundary is not None and s < boundary) for s in seqs)


# --- one call's request, outcome, and what changed -------------------------


@dataclass(frozen=True, slots=True)
class CallRef:
    step_key: str
    turn: int
    step: int
    number: int
    request_at: int


def call_ref(step: Step, call: ModelCall) -> CallRef:
    return CallRef(step.key, step.turn, step.step, call.number, call.request_at)


@dataclass(frozen=True, slots=True)
class RequestDiff:
    previous: CallRef | None  # None: this is the log's first model call
    added: tuple[int, ...]  # appended since, still model-visible
    replaced: tuple[Replacement, ...]
    header: tuple[HeaderChange, ...]
    state: tuple[StateChange, ...]

    @property
    def empty(self) -> bool:
        return not (self.added or self.replaced or self.header or self.state)


OutcomeKind = Literal["answered", "interrupted", "empty", "retried", "failed", "unfinished"]


@dataclass(frozen=True, slots=True)
class CallOutcome:
    kind: OutcomeKind
    finish: str | None  # the `finish` chunk's reason kind
    failure: FrozenDict | None  # `LlmFailure` from the finish chunk, the retry or the turn's end
    usage: Usage | None
    message_id: str | None


@dataclass(frozen=True, slots=True)
class CallRequest:
    call: ModelCall
    header: RequestHeader | None
    state: SessionState
    messages: tuple[VisibleMessage, ...]
    diff: RequestDiff
    outcome: CallOutcome
    seed_boundary: int | None


@dataclass(frozen=True, slots=True)
class StepRequests:
    """The model view of one step."""

    step: Step
    calls: tuple[CallRequest, ...]
    previous_step: str | None
    next_step: str | None

    @property
    def answered(self) -> CallRequest | None:
        answered = self.step.answered
        return self.calls[answered.number - 1] if answered is not None else None


def _turn_error(log: SessionLog, step: Step) -> FrozenDict | None:
    """The failure of a turn that ended with an error right after this step."""
    for seq in range(step.end + 1, log.event_count):
        kind = log.types[seq]
        if kind == "turn/end":
            reason = payload_as(log.event(seq).payload, TurnEnd).reason
            error = reason.error if reason is not None and reason.kind == "error" else None
            return error if isinstance(error, FrozenDict) else None
        if kind in ("step/start", "turn/start"):
            return None
    return None


def _outcome(log: SessionLog, step: Step, call: ModelCall) -> CallOutcome:
    finish: str | None = None
    failure: FrozenDict | None = None
    usage: Usage | None = None
    if call.first_chunk is not None and call.last_chunk is not None:
        # The finish and usage chunks close a stream: read backwards until the content starts.
        for seq in range(call.last_chunk, call.first_chunk - 1, -1):
            if log.types[seq] != "assistant/chunk":
                continue
            chunk = payload_as(log.event(seq).payload, AssistantChunk).chunk or StreamChunk()
            kind = chunk.type
            if kind == "finish" and finish is None:
                reason = chunk.reason or FinishReason()
                finish = reason.kind
                failure = reason.failure if isinstance(reason.failure, FrozenDict) else None
            elif kind == "usage" and usage is None:
                usage = usage_from(chunk.usage)
            elif kind not in ("finish", "usage"):
                break
    if call.message is not None:
        event = log.event(call.message)
        message_id = event.message.id if event.message else None
        kind_: OutcomeKind = "answered"
        if payload_as(event.payload, AssistantMessage).interrupted is True:
            kind_ = "interrupted"
        elif call.message in log.empty_assistant:
            kind_ = "empty"
        return CallOutcome(kind_, finish, failure, call.usage or usage, message_id)
    if call.retry is not None:
        retry_failure = payload_as(log.event(call.retry).payload, Retry).failure
        return CallOutcome(
            "retried", finish, retry_failure if isinstance(retry_failure, FrozenDict) else failure, usage, None
        )
    if call is step.calls[-1]:
        error = _turn_error(log, step)
        if error is not None:
            return CallOutcome("failed", finish, failure or error, usage, None)
    if finish in ("error", "aborted"):
        return CallOutcome("failed", finish, failure, usage, None)
    return CallOutcome("unfinished", finish, failure, usage, None)


def _diff(
    log: SessionLog,
    types: TypeIndex,
    previous: CallRef | None,
    call: ModelCall,
    surfaces: dict[int, tuple[int, ...]],
    state: SessionState,
) -> RequestDiff:
    after = previous.request_at if previous else -1
    upto = call.request_at
    before_nodes = set(surfaces[after]) if previous else set()
    added = tuple(s for s in surfaces[upto] if s not in before_nodes and log.surface_ops.get(s) == "append")
    replaced = tuple(
        r for r in (replacement(log, seq) for seq in sorted(log.shadowed_by) if after < seq <= upto) if r is not None
    )
    return RequestDiff(
        previous,
        added,
        replaced,
        header_changes(log, types, after, upto),
        state_changes(state_at(log, types, after), state),
    )


def step_requests(log: SessionLog, requests: RequestIndex, key: str) -> StepRequests | None:
    """Every model call of step `key` with its request, its outcome and its diff."""
    index, types = requests.calls, requests.types
    step = index.step(key)
    if step is None:
        return None
    previous = [index.previous_call(step, call) for call in step.calls]
    refs = [call_ref(*p) if p else None for p in previous]
    points = [c.request_at for c in step.calls] + [r.request_at for r in refs if r is not None]
    surfaces = surfaces_at(log, points)
    calls = []
    for call, ref in zip(step.calls, refs, strict=True):
        state = state_at(log, types, call.request_at)
        boundary = seed_boundary(log, types, call.request_at)
        calls.append(
            CallRequest(
                call=call,
                header=header_at(log, types, call.request_at),
                state=state,
                messages=visible_messages(log, surfaces[call.request_at], boundary),
                diff=_diff(log, types, ref, call, surfaces, state),
                outcome=_outcome(log, step, call),
                seed_boundary=boundary,
            )
        )
    i = index.by_key[key]
    return StepRequests(
        step=step,
        calls=tuple(calls),
        previous_step=index.steps[i - 1].key if i > 0 else None,
        next_step=index.steps[i + 1].key if i + 1 < len(index.steps) else None,
    )
