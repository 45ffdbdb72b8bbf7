"""What the model-view, identity and budget templates show, settled in Python.

The derivation (`app.history.requests`, `identity`, `usage`) decides what a
log means; this module only words it: one-line value texts, role labels,
transcript anchors and the JSON twins' shapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ...forms import ContextView, compact_json, project_context
from ...forms.content import Bounded, bound_json
from ...forms.message_body import first_line
from ...history.identity import InboxCarrier, MessageCarrier, MessageIdentity
from ...history.message_handles import message_handle
from ...history.replacements import Replacement
from ...history.requests import CallRef, CallRequest, HeaderChange, RequestHeader, StepRequests, VisibleMessage
from ...history.session import SessionLog
from ...history.spend.tokens import Usage
from ...history.state import SessionState, Setting, StateChange
from ...history.transcript import Row
from ...history.usage import Budget
from ...model.frozen import thaw
from ...model.values import Message
from .strings import Strings, count

SHORT = 160


def short(value: Any) -> str:
    """A JSON value on one line, cut to SHORT characters."""
    text = value if isinstance(value, str) else compact_json(thaw(value))
    text = text.replace("\n", "⏎")
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def role_key(message: Message) -> str:
    if message.role == "assistant":
        return "role.assistant"
    if message.source.kind == "tool":
        return "role.toolResult"
    if message.source.kind == "user":
        return "role.user"
    if message.is_checkpoint:
        return "role.checkpoint"
    return "role.context" if message.role == "user" else "role.other"


def message_url(base_url: str, message_id: str) -> str:
    """The identity page of `message_id`, named by its handle: a long id makes no long URL."""
    return f"{base_url}/messages/{quote(message_handle(message_id), safe='')}"


# --- message rows -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessageRow:
    position: int  # 1-based place in the request
    seq: int
    id: str
    role: str
    kind: str  # source kind
    label_key: str
    context: ContextView | None  # the rendered form, for injected context
    summary: str
    replaced: bool
    inherited: bool


def message_row(
    position: int, seq: int, message: Message, *, replaced: bool = False, inherited: bool = False
) -> MessageRow:
    context = project_context(message) if message.is_context else None
    return MessageRow(
        position,
        seq,
        message.id,
        message.role,
        message.source.kind,
        role_key(message),
        context,
        first_line(message),
        replaced,
        inherited,
    )


def message_rows(messages: tuple[VisibleMessage, ...], log: SessionLog) -> tuple[MessageRow, ...]:
    """One row per message, each decoded only while its row is made."""
    return tuple(
        message_row(i, m.seq, m.read(log), replaced=m.replaced, inherited=m.inherited)
        for i, m in enumerate(messages, 1)
    )


def message_json(row: MessageRow, message: Message) -> dict[str, Any]:
    return {
        "position": row.position,
        "seq": row.seq,
        "id": row.id,
        "role": row.role,
        "sourceKind": row.kind,
        "renderedForm": row.context.form if row.context else None,
        "replaced": row.replaced,
        "inherited": row.inherited,
        "message": message.to_json(),
    }


# --- windows of a request's messages ------------------------------------------

Paging = dict[str, int | None]  # from, to, totalMessages, previousFrom, nextFrom


def message_paging(total: int, start: int | None, size: int, stop: int | None = None) -> Paging:
    """Where the window of `size` messages from `start` lies (moved inside the list), no further than
    `stop` (an earlier window ends where the one after it begins), and where its neighbours start.
    No `start`: the newest window, the end of what the model read, which the diff above it leads to."""
    first = max(0, total - size) if start is None else max(0, min(start, max(total - 1, 0)))
    end = min(first + size, total, total if stop is None else max(stop, first))
    return {
        "from": first,
        "to": end,
        "totalMessages": total,
        "previousFrom": max(0, first - size) if first > 0 else None,
        "nextFrom": end if end < total else None,
    }


def messages_json(rows: tuple[MessageRow, ...], log: SessionLog) -> list[dict[str, Any]]:
    """Each row with its message read again from `log`, the log the rows were made from: a kept model
    view holds its rows, not the messages (a long session's last request holds 70,000 of them)."""
    return [message_json(row, _visible(log, row.seq)) for row in rows]


def _visible(log: SessionLog, seq: int) -> Message:
    message = log.event(seq).message
    if message is None:  # its row was made from this very event's message
        raise LookupError(f"event {seq} holds no message")
    return message


# --- header, state and diff texts -------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolLine:
    name: str
    description: str | None
    schema: Bounded


@dataclass(frozen=True, slots=True)
class HeaderView:
    header: RequestHeader
    config: tuple[Line, ...]  # everything but provider, model and effort
    adapter_defaults: str | None
    tools: tuple[ToolLine, ...]
    tools_unread: str | None


def header_view(header: RequestHeader | None) -> HeaderView | None:
    if header is None:
        return None
    tools = tuple(ToolLine(tool.name, tool.description, bound_json(tool.schema)) for tool in header.tools or ())
    return HeaderView(
        header,
        tuple(Line(k, short(v)) for k, v in header.other_config),
        short(header.adapter_defaults) if header.adapter_defaults is not None else None,
        tools,
        short(header.tools_unread) if header.tools_unread is not None else None,
    )


def header_json(header: RequestHeader | None) -> dict[str, Any] | None:
    if header is None:
        return None
    return {"seq": header.seq, "reason": header.reason, **thaw(header.canonical())}


def _field_text(name: str, before: Any, after: Any, t: Strings) -> str:
    if name == "system":
        return t("diff.systemChange", before=count(len(before or "")), after=count(len(after or "")))
    if name.startswith("tool:"):
        return t("diff.toolAdded" if before is None else "diff.toolRemoved" if after is None else "diff.toolChanged")
    absent = t("diff.absent")
    return f"{short(before) if before is not None else absent} → {short(after) if after is not None else absent}"


@dataclass(frozen=True, slots=True)
class HeaderChangeView:
    change: HeaderChange
    lines: tuple[Line, ...]


def header_change_views(changes: tuple[HeaderChange, ...], t: Strings) -> tuple[HeaderChangeView, ...]:
    return tuple(
        HeaderChangeView(c, tuple(Line(f.field, _field_text(f.field, f.before, f.after, t)) for f in c.fields))
        for c in changes
    )


@dataclass(frozen=True, slots=True)
class SettingView:
    name: str
    text: str
    seq: int | None
    detail: str | None  # where the value came from: `state.fromHeader` worded, or as the log says
    items: tuple[str, ...]  # a todo list, one line per item


def setting_view(setting: Setting, t: Strings) -> SettingView:
    value = setting.value
    items: tuple[str, ...] = ()
    if setting.name == "planMode":
        text = t("state.on") if value else t("state.off")
    elif value is None:
        text = t("state.cleared") if setting.name == "goal" and setting.seq is not None else t("state.unset")
    elif setting.name == "todos":
        todos = [v for v in value if isinstance(v, Mapping)] if isinstance(value, tuple) else []
        text = t("state.todoCount", count=count(len(todos)))
        items = tuple(f"[{short(v.get('status'))}] {short(v.get('content'))}" for v in todos)
    elif setting.name == "goal" and isinstance(value, Mapping):
        text = f"{short(value.get('objective'))} · {short(value.get('phase'))}"
    elif setting.name == "modelRoute" and isinstance(value, Mapping):
        text = " · ".join(short(value[k]) for k in ("provider", "model") if k in value)
        if "contextWindow" in value:
            window = value["contextWindow"]
            text += " · " + t("state.window", tokens=count(window) if isinstance(window, int) else short(window))
    else:
        text = short(value)
    detail = t("state.fromHeader") if setting.detail == "header" else setting.detail
    return SettingView(setting.name, text, setting.seq, detail, items)


def state_views(state: SessionState, t: Strings) -> tuple[SettingView, ...]:
    return tuple(setting_view(s, t) for s in state.settings)


def state_json(state: SessionState) -> dict[str, Any]:
    return {s.name: {"value": thaw(s.value), "seq": s.seq, "detail": s.detail} for s in state.settings}


def state_change_lines(changes: tuple[StateChange, ...], t: Strings) -> tuple[Line, ...]:
    return tuple(Line(c.name, f"{setting_view(c.before, t).text} → {setting_view(c.after, t).text}") for c in changes)


def replacement_json(r: Replacement) -> dict[str, Any]:
    return {
        "seq": r.seq,
        "kind": r.kind,
        "messageId": r.message_id,
        "range": {"start": r.start, "end": r.end},
        "shadowed": [{"seq": s, "id": i} for s, i in zip(r.shadowed, r.shadowed_ids, strict=True)],
        "shadowedTokenCount": r.shadowed_tokens,
    }


def call_ref_json(ref: CallRef | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return {
        "step": ref.step_key,
        "turn": ref.turn,
        "stepNumber": ref.step,
        "call": ref.number,
        "requestAt": ref.request_at,
    }


def usage_json(usage: Usage | None) -> dict[str, Any] | None:
    return usage.to_json() if usage is not None else None


# --- one call and one step --------------------------------------------------


SHADOWED_SHOWN = 12  # the messages a replace shadowed that its diff line lists, by role and first line


@dataclass(frozen=True, slots=True)
class ShadowedView:
    """A replace in a call's diff, with the messages it shadowed as the reader knows them: role and first line."""

    replacement: Replacement
    messages: tuple[MessageRow, ...]  # the first SHADOWED_SHOWN
    more: int  # how many more it shadowed


def shadowed_view(replacement: Replacement, log: SessionLog) -> ShadowedView:
    shown = replacement.shadowed[:SHADOWED_SHOWN]
    messages = ((seq, log.event(seq).message) for seq in shown)
    rows = tuple(message_row(0, seq, message) for seq, message in messages if message is not None)
    return ShadowedView(replacement, rows, len(replacement.shadowed) - len(shown))


@dataclass(frozen=True, slots=True)
class DiffView:
    previous: CallRef | None
    added: tuple[MessageRow, ...]
    replaced: tuple[ShadowedView, ...]
    header: tuple[HeaderChangeView, ...]
    state: tuple[Line, ...]
    empty: bool


@dataclass(frozen=True, slots=True)
class CallView:
    request: CallRequest
    messages: tuple[MessageRow, ...]
    diff: DiffView
    header: HeaderView | None
    state: tuple[SettingView, ...]
    failure: str | None
    answered: bool


def call_view(request: CallRequest, answered: bool, log: SessionLog, t: Strings) -> CallView:
    rows = message_rows(request.messages, log)
    by_seq = {r.seq: r for r in rows}
    d = request.diff
    diff = DiffView(
        d.previous,
        tuple(by_seq[s] for s in d.added if s in by_seq),
        tuple(shadowed_view(r, log) for r in d.replaced),
        header_change_views(d.header, t),
        state_change_lines(d.state, t),
        d.empty,
    )
    failure = request.outcome.failure
    failure_text = None
    if failure is not None:
        failure_text = " · ".join(short(failure[k]) for k in ("message", "code", "status") if k in failure)
    return CallView(
        request, rows, diff, header_view(request.header), state_views(request.state, t), failure_text, answered
    )


def step_views(requests: StepRequests, log: SessionLog, t: Strings) -> tuple[CallView, ...]:
    answered = requests.answered
    return tuple(call_view(c, c is answered, log, t) for c in requests.calls)


def step_json(
    requests: StepRequests, views: tuple[CallView, ...], start: int | None, size: int, log: SessionLog
) -> dict[str, Any]:
    """The JSON twin of a step's model view: every call with the window of its messages from `start`."""
    step = requests.step
    calls = []
    for view in views:
        r = view.request
        c = r.call
        paging = message_paging(len(view.messages), start, size)
        window = slice(paging["from"], paging["to"])
        calls.append(
            {
                "number": c.number,
                "answered": view.answered,
                "requestAt": c.request_at,
                "chunks": {"first": c.first_chunk, "last": c.last_chunk, "count": c.chunk_count},
                "retrySeq": c.retry,
                "messageSeq": c.message,
                "outcome": {
                    "kind": r.outcome.kind,
                    "finish": r.outcome.finish,
                    "failure": thaw(r.outcome.failure),
                    "usage": usage_json(r.outcome.usage),
                    "messageId": r.outcome.message_id,
                },
                "header": header_json(r.header),
                "state": state_json(r.state),
                "seedBoundary": r.seed_boundary,
                "messageWindow": paging,
                "messages": messages_json(view.messages[window], log),
                "diff": {
                    "previous": call_ref_json(r.diff.previous),
                    "added": [{"seq": row.seq, "id": row.id} for row in view.diff.added],
                    "replaced": [replacement_json(x) for x in r.diff.replaced],
                    "header": [
                        {
                            "seq": h.seq,
                            "reason": h.reason,
                            "first": h.first,
                            "fields": [
                                {"field": f.field, "before": thaw(f.before), "after": thaw(f.after)} for f in h.fields
                            ],
                        }
                        for h in r.diff.header
                    ],
                    "state": [
                        {
                            "name": s.name,
                            "before": thaw(s.before.value),
                            "after": thaw(s.after.value),
                            "seq": s.after.seq,
                        }
                        for s in r.diff.state
                    ],
                },
            }
        )
    return {
        "step": {"key": step.key, "turn": step.turn, "step": step.step, "start": step.start, "end": step.end},
        "previousStep": requests.previous_step,
        "nextStep": requests.next_step,
        "calls": calls,
    }


# --- identity -----------------------------------------------------------------


def identity_json(identity: MessageIdentity) -> dict[str, Any]:
    carriers: list[dict[str, Any]] = []
    for c in identity.carriers:
        if isinstance(c, InboxCarrier):
            carriers.append(
                {
                    "role": "inbox",
                    "seq": c.seq,
                    "type": "agent/inbox/spliced",
                    "target": c.target,
                    "fate": c.fate,
                    "takenAt": c.taken_at,
                    "message": c.message.to_json() if c.message else None,
                }
            )
        else:
            carriers.append(_message_carrier_json(c))
    return {"id": identity.id, "carriers": carriers, "requests": [call_ref_json(r) for r in identity.requests]}


def _message_carrier_json(c: MessageCarrier) -> dict[str, Any]:
    return {
        "role": "message",
        "seq": c.seq,
        "type": c.type,
        "appended": c.appended,
        "replacement": replacement_json(c.replacement) if c.replacement else None,
        "keepsIdOf": list(c.keeps_id_of),
        "shadowedBy": c.shadowed_by,
        "modelVisible": c.visible,
        "message": c.message.to_json() if c.message else None,
        "requests": [call_ref_json(r) for r in c.requests],
    }


# --- budget ---------------------------------------------------------------------


def budget_json(budget: Budget) -> dict[str, Any]:
    return {
        "contextWindow": budget.context_window,
        "steps": [
            {
                "key": s.key,
                "turn": s.turn,
                "step": s.step,
                "calls": s.calls,
                "requestAt": s.request_at,
                "messages": s.messages,
                "answered": s.answered,
                "usage": usage_json(s.usage),
            }
            for s in budget.steps
        ],
        "shrinks": [{**replacement_json(x.replacement), "beforeStep": x.before_step} for x in budget.shrinks],
    }


# --- where an event shows in the transcript ---------------------------------------


def anchor_index(rows: Sequence[Row], anchors: Sequence[str], log: SessionLog) -> dict[int, str]:
    """Surface and inbox event seq → the anchor of the transcript row that shows it."""
    wanted = {"user/message", "assistant/message", "tool/result", "agent/inbox/spliced", "step/start"}
    out: dict[int, str] = {}
    for row, anchor in zip(rows, anchors, strict=True):
        if row.kind == "diagnostic":
            continue  # a finding sits before the row of its event; it does not show the event
        for seq in (row.seq, *row.related):
            if 0 <= seq < log.event_count and log.types[seq] in wanted:
                out.setdefault(seq, anchor)
    return out
