"""Each event type's `data`, declared once as typed frozen values (docs/format.md §3;
docs/decisions/0038-typed-payloads.md).

`decode_payload` is the one place a payload becomes typed. Every field is optional: a log may omit a key or
write a value of another type, and then the field holds its default (None, or what readers took for missing)
while the fields that fit keep their values. Nothing here judges a log: the verdict pipeline reads the raw
data (`Event.raw`), and so does the raw-JSON view. Sub-values that readers only pass on or show as JSON are
`Any`: the frozen value as stored.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any, TypeVar, Union, get_args, get_origin

import msgspec

P = TypeVar("P", bound="Payload")


class Payload(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """An event's data, typed; unknown keys are left in the raw event."""


class LlmFailure(Payload, frozen=True):
    """A failure object (`LlmFailure`), typed by `failure_of`; payloads hold it as stored, since views show
    it whole."""

    message: str | None = None
    code: str | int | float | None = None  # a string in dsh's types; a log may write the HTTP status


class TurnEndReason(Payload, frozen=True):
    kind: str | None = None
    error: Any = None  # LlmFailure, as stored


class TurnStart(Payload, frozen=True):
    turn: int | None = None


class TurnEnd(Payload, frozen=True):
    turn: int | None = None
    reason: TurnEndReason | None = None


class Step(Payload, frozen=True):
    """`step/start` and `step/end`."""

    turn: int | None = None
    step: int | None = None


class FinishReason(Payload, frozen=True):
    kind: str | None = None
    failure: Any = None  # LlmFailure, as stored


class StreamChunk(Payload, frozen=True):
    type: str | None = None
    text: str | None = None
    arguments_delta: str | None = None
    reason: FinishReason | None = None  # a `finish` chunk's
    usage: Any = None  # a `usage` chunk's TokenUsage


class AssistantChunk(Step, frozen=True):
    chunk: StreamChunk | None = None


class AssistantMessage(Step, frozen=True):
    """The message itself is `Event.message`."""

    usage: Any = None  # TokenUsage, read by name (`spend.tokens.usage_from`)
    interrupted: bool | None = None


class ToolCall(Step, frozen=True):
    call_id: str | None = None
    name: str | None = None
    arguments: Any = ""  # the string the model wrote; shown as logged whatever it is


class ToolError(Payload, frozen=True):
    name: str | None = None
    code: str | int | float | None = None  # a string in dsh's types; a tool may write a number (HTTP 500)


class ToolResult(Step, frozen=True):
    """The message itself is `Event.message`."""

    error: ToolError | None = None
    meta: Any = None  # tool-private presentation payload, opaque


class TodoWrite(Payload, frozen=True):
    todos: tuple[Any, ...] | None = None


class RequestHeader(Payload, frozen=True):
    header: Any = None  # EpochHeader: judged raw by `rules.request_header_problem`, read by `requests`
    reason: str | None = None


class RequestContext(Payload, frozen=True):
    provider: str | None = None
    model: str | None = None
    context_window: int | None = None
    base_url: str | None = None


class InboxSplice(Payload, frozen=True):
    """`agent/inbox/spliced`; `inserted` are whole messages, frozen as stored."""

    target: str | None = None
    start: int | None = None
    removed_count: int | None = None
    inserted: tuple[Any, ...] = ()
    outcome: str | None = None


class Setting(Payload, frozen=True):
    """The last-wins settings: `plan/mode`, `sandbox/mode`, `approval/policy`, `permission/preset`,
    `agent-preset/selected`, each its own field."""

    active: bool | None = None
    mode: str | None = None
    policy: str | None = None
    preset: str | None = None
    agent_preset: str | None = None
    source: str | None = None


class GoalChange(Payload, frozen=True):
    operation: str | None = None
    goal: Any = None  # GoalSnapshot, shown as logged


class ApprovalAsked(Payload, frozen=True):
    id: str | None = None
    tool_name: str | None = None
    call_id: str | None = None
    reason: str | None = None


class ApprovalDecided(Payload, frozen=True):
    id: str | None = None
    outcome: str | None = None


class Hook(Payload, frozen=True):
    """`hook/invoked` and `hook/result` (`decision`, `stderrSummary`: the result's)."""

    turn: int | None = None
    point: str | None = None
    handler_id: str | None = None
    call_id: str | None = None  # not in dsh's catalog: a hook that names its call is tied to it
    decision: str | None = None
    stderr_summary: str | None = None


class CommandRun(Payload, frozen=True):
    command_id: str | None = None
    name: str | None = None
    args: Any = ""  # the verbatim rest of the line


class CommandDone(Payload, frozen=True):
    command_id: str | None = None
    kind: str | None = None
    text: str | None = None


class Compaction(Payload, frozen=True):
    """`compaction/start`, `compaction/summary`, `compaction/end` and `compaction/prune`."""

    compaction_id: str | None = None
    source_command_id: str | None = None
    turn: int | None = None
    summary: tuple[Any, ...] | None = None  # ContentBlock[]
    shadowed_seqs: tuple[Any, ...] | None = None
    shadowed_token_count: int | None = None
    provider: str | None = None
    model: str | None = None
    usage: Any = None
    llm_stream_call: bool | None = None


class Retry(Step, frozen=True):
    """`llm/retry` and `llm/retry-started`."""

    retry_id: str | None = None
    retry: int | None = None
    max_retries: int | None = None
    delay_ms: int | None = None
    failure: Any = None  # LlmFailure, as stored


class CodeDispatch(Payload, frozen=True):
    """`tool/code-dispatch-start`; `tool/code-dispatch` adds `isError` and `content`."""

    root_call_id: str | None = None
    parent_call_id: str | None = None
    sub_call_id: str | None = None
    name: str | None = None
    arguments: Any = None  # already parsed JSON
    is_error: bool | None = None
    content: tuple[Any, ...] | None = None  # ContentBlock[]


class WorkflowAgent(Payload, frozen=True):
    """`tool-workflow/agent-start` and `-end` (`seq` is a member number, not an event's)."""

    run_id: str | None = None
    seq: int | None = None
    label: str | None = None
    child_id: str | None = None
    outcome: str | None = None


class SessionTitle(Payload, frozen=True):
    title: str | None = None


PAYLOADS: Mapping[str, type[Payload]] = {
    "turn/start": TurnStart,
    "turn/end": TurnEnd,
    "step/start": Step,
    "step/end": Step,
    "assistant/chunk": AssistantChunk,
    "assistant/message": AssistantMessage,
    "tool/call": ToolCall,
    "tool/result": ToolResult,
    "todo/write": TodoWrite,
    "request/header": RequestHeader,
    "request/context": RequestContext,
    "agent/inbox/spliced": InboxSplice,
    "plan/mode": Setting,
    "sandbox/mode": Setting,
    "approval/policy": Setting,
    "permission/preset": Setting,
    "agent-preset/selected": Setting,
    "goal/change": GoalChange,
    "approval/asked": ApprovalAsked,
    "approval/decided": ApprovalDecided,
    "hook/invoked": Hook,
    "hook/result": Hook,
    "command/run": CommandRun,
    "command/done": CommandDone,
    "compaction/start": Compaction,
    "compaction/summary": Compaction,
    "compaction/end": Compaction,
    "compaction/prune": Compaction,
    "llm/retry": Retry,
    "llm/retry-started": Retry,
    "tool/code-dispatch-start": CodeDispatch,
    "tool/code-dispatch": CodeDispatch,
    "tool-workflow/agent-start": WorkflowAgent,
    "tool-workflow/agent-end": WorkflowAgent,
    "session/title": SessionTitle,
}


def decode_payload(kind: str, data: Any) -> Payload | None:
    """The typed payload of an event of type `kind` whose data is `data` (frozen, as `Event.data`); None for a
    type declared here without one, or data that is no object. Ill-typed fields keep their defaults."""
    declared = PAYLOADS.get(kind)
    if declared is None or not isinstance(data, Mapping):
        return None
    try:
        return msgspec.convert(data, declared)
    except msgspec.ValidationError:
        return _fitting(data, declared)


def _fitting(data: Mapping[str, Any], declared: type[P]) -> P:
    """`declared` from the fields of `data` that fit their types; a sub-value that is itself a payload is
    fitted the same way. The rare path: only an ill-typed payload comes here."""
    kept: dict[str, Any] = {}
    for field in msgspec.structs.fields(declared):
        if field.encode_name not in data:
            continue
        value = data[field.encode_name]
        try:
            kept[field.name] = msgspec.convert(value, field.type)
        except msgspec.ValidationError:
            nested = _payload_type(field.type)
            if nested is not None and isinstance(value, Mapping):
                kept[field.name] = _fitting(value, nested)
    return declared(**kept)


def _payload_type(declared: Any) -> type[Payload] | None:
    """The payload class a field of type `declared` (`X | None`) holds, if it holds one."""
    options = get_args(declared) if get_origin(declared) in (Union, types.UnionType) else (declared,)
    return next((o for o in options if isinstance(o, type) and issubclass(o, Payload)), None)


def payload_as(payload: Payload | None, declared: type[P]) -> P:
    """`payload` if it is a `declared`, else `declared`'s defaults: what a reader of that type sees of an event
    whose data is no object."""
    return payload if isinstance(payload, declared) else declared()


def failure_of(value: Any) -> LlmFailure:
    """A failure object as stored (`failure`, `error`), typed; its defaults when it is no object."""
    return payload_as(_fitting(value, LlmFailure) if isinstance(value, Mapping) else None, LlmFailure)
