"""Builders for the events dsh scenarios are made of, for `seed_session` and `append_events`.

Each returns plain event dicts (`{"type": …, "data": …}`, with `surfaceOp` where dsh writes one), or a list
of them where dsh writes several for one thing (a tool round, a compaction, an approval, a command). What
depends on where an event lands is left to the seeder, as the tokens below, and filled in from the events
before it when the session is seeded or appended to:

- `seq` and `time` (always: `time` = the anchor + the event's index);
- `turn` and `step` (`TURN`, `STEP`): `turn_start()` opens the next turn, `step_start()` its next step, and
  everything after them names the turn and step open at that point;
- `sourceEventSeqs` (`SOURCES`): a tool result cites its call's `tool/call`, an answer the streamed chunks
  of its step, a compaction's checkpoint its start, its summary and what it shadows, as dsh's writers do;
- what a compaction shadows (`SHADOWED_RANGE`, `SHADOWED_SEQS`, `REPLACE`): the whole surface before it, and
  what its `/compact` command says of it (`COMPACTED`, `SUMMARY_SEQ`).

Pass numbers instead of the tokens to write them yourself. Ids that a test does not give are fresh UUIDs
(`call_<uuid>` for a tool call; the goldens' normalisation turns them into `{{uuid}}`). Keys are written in
the order dsh writes them.

    from dsh_inspect.testing import events as ev

    url = seed_session([
        ev.turn_start(), ev.step_start(),
        ev.prompt("Read a.txt"),
        *ev.tool_use("read", {"file_path": "a.txt"}, "alpha"),
        ev.step_end(), ev.step_start(),
        ev.answer("It says alpha.", reasoning="The tool said alpha."),
        ev.step_end(), ev.turn_end(),
    ])
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import orjson

Event = dict[str, Any]

TURN = "{{turn}}"
STEP = "{{step}}"
SOURCES = "{{sourceEventSeqs}}"
SHADOWED_RANGE = "{{shadowedRange}}"
SHADOWED_SEQS = "{{shadowedSeqs}}"
REPLACE = "{{replace}}"
COMPACTED = "{{compacted}}"  # a `/compact` command's closing words, from the summary it made
SUMMARY_SEQ = "{{summarySeq}}"

# The framing dsh's compaction writes before a summary (a recorded `/compact`, docs/format.md §5.6)
CHECKPOINT = (
    "This is an automatically generated checkpoint condensing an earlier span of the conversation to free up "
    "context. Treat the captured context as established background and build on it without restating it. "
    "Continue the task directly from the messages that follow, without acknowledging this checkpoint.\n\n"
    "<compacted-summary>"
)
PROVIDER = "deepseek-official"
MODEL = "deepseek-v4-flash"

Number = int | str  # a number, or the token the seeder replaces with it


def _id(given: str | None) -> str:
    return given or str(uuid.uuid4())


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def _user_message(content: list[dict[str, Any]], source: Mapping[str, Any], message_id: str | None) -> Event:
    data = {"content": content, "source": dict(source), "role": "user", "id": _id(message_id)}
    return {"type": "user/message", "data": data, "surfaceOp": "append"}


# Turn and step boundaries


def turn_start(turn: Number = TURN) -> Event:
    """`turn/start`: the next turn (1 for the first), unless `turn` says which."""
    return {"type": "turn/start", "data": {"turn": turn}}


def turn_end(
    turn: Number = TURN,
    reason: Literal["completed", "interrupted", "max-tokens", "blocked"] | Mapping[str, Any] = "completed",
) -> Event:
    """`turn/end` of the open turn; `reason` is a `TurnEndReason` kind or the whole reason
    (`{"kind": "aborted", "reason": {"kind": "user"}}`, `{"kind": "error", "error": {...}}`)."""
    why = {"kind": reason} if isinstance(reason, str) else dict(reason)
    return {"type": "turn/end", "data": {"turn": turn, "reason": why}}


def step_start(step: Number = STEP, *, turn: Number = TURN) -> Event:
    """`step/start`: the open turn's next step (1 for its first), unless `step` says which."""
    return {"type": "step/start", "data": {"turn": turn, "step": step}}


def step_end(step: Number = STEP, *, turn: Number = TURN) -> Event:
    """`step/end` of the open step."""
    return {"type": "step/end", "data": {"turn": turn, "step": step}}


# What the person and the model say


def prompt(text: str, *, message_id: str | None = None, rpc_id: str | None = None) -> Event:
    """A person's prompt: a `user/message` whose source is the user (a web prompt's `rpcId` if given)."""
    source: dict[str, Any] = {"kind": "user", **({"rpcId": rpc_id} if rpc_id else {})}
    return _user_message(_text(text), source, message_id)


def call(name: str, arguments: Mapping[str, Any] | str, *, call_id: str | None = None) -> dict[str, Any]:
    """A `tool-call` content block for `answer(calls=…)`: `arguments` as the model wrote them (a mapping is
    written as compact JSON)."""
    raw = arguments if isinstance(arguments, str) else orjson.dumps(dict(arguments)).decode()
    return {"type": "tool-call", "id": call_id or f"call_{uuid.uuid4()}", "name": name, "arguments": raw}


def answer(
    text: str | None = None,
    *,
    reasoning: str | None = None,
    calls: Sequence[Mapping[str, Any]] = (),
    usage: Mapping[str, int] | None = None,
    interrupted: bool = False,
    provider: str = PROVIDER,
    model: str = MODEL,
    message_id: str | None = None,
    turn: Number = TURN,
    step: Number = STEP,
) -> Event:
    """The model's `assistant/message`: its reasoning, its text and the tool calls it made (`call(…)` blocks),
    with `usage` (`inputTokens`, `outputTokens`, `cacheReadTokens`, …) when given."""
    content = [
        *([{"type": "reasoning", "text": reasoning}] if reasoning is not None else []),
        *(_text(text) if text is not None else []),
        *(dict(block) for block in calls),
    ]
    message = {
        "role": "assistant",
        "content": content,
        "source": {"kind": "model", "provider": provider, "model": model},
        "id": _id(message_id),
    }
    data: dict[str, Any] = {"turn": turn, "step": step, "message": message}
    if usage is not None:
        data["usage"] = dict(usage)
    if interrupted:
        data["interrupted"] = True
    return {"type": "assistant/message", "data": data, "sourceEventSeqs": SOURCES, "surfaceOp": "append"}


def tool_call(block: Mapping[str, Any], *, turn: Number = TURN, step: Number = STEP) -> Event:
    """The `tool/call` dsh logs when it starts the call a `call(…)` block asked for."""
    data = {"turn": turn, "step": step, "callId": block["id"], "name": block["name"], "arguments": block["arguments"]}
    return {"type": "tool/call", "data": data}


def tool_result(
    call_id: str | Mapping[str, Any],
    output: str,
    *,
    is_error: bool = False,
    error: Mapping[str, str] | None = None,
    meta: Any = None,
    message_id: str | None = None,
    turn: Number = TURN,
    step: Number = STEP,
) -> Event:
    """The `tool/result` of a call (its id, or its `call(…)` block): `output` as its text; `error`
    (`{"name": …, "code": …}`) for a call that failed outside the tool."""
    callee = call_id if isinstance(call_id, str) else str(call_id["id"])
    block = {"type": "tool-result", "toolCallId": callee, "content": _text(output), "isError": is_error or bool(error)}
    source = {"kind": "tool", "callId": callee}
    message = {"source": source, "content": [block], "role": "user", "id": _id(message_id)}
    data: dict[str, Any] = {"turn": turn, "step": step, "message": message}
    if error is not None:
        data["error"] = dict(error)
    if meta is not None:
        data["meta"] = meta
    return {"type": "tool/result", "data": data, "sourceEventSeqs": SOURCES, "surfaceOp": "append"}


def tool_use(
    name: str,
    arguments: Mapping[str, Any] | str,
    output: str,
    *,
    is_error: bool = False,
    reasoning: str | None = None,
    text: str | None = None,
    call_id: str | None = None,
) -> list[Event]:
    """One tool round inside a step: the answer that asks for the call, its `tool/call` and its result."""
    block = call(name, arguments, call_id=call_id)
    return [
        answer(text, reasoning=reasoning, calls=[block]),
        tool_call(block),
        tool_result(block, output, is_error=is_error),
    ]


# Injected contexts, one builder per form (docs/format.md §4.3-4.4)


def context(
    text: str,
    *,
    kind: str = "plugin",
    plugin: str | None = None,
    form: str | None = None,
    message_id: str | None = None,
    **source: Any,
) -> Event:
    """A context injected for the model: a `user/message` with source `kind` (a `plugin` source names its
    plugin), its `form` and the form's fields."""
    fields = {"kind": kind, **({"plugin": plugin} if plugin else {}), **({"form": form} if form else {}), **source}
    return _user_message(_text(text), fields, message_id)


def instructions(
    text: str,
    *paths: str,
    baseline: bool = True,
    action: Literal["set", "replace", "remove"] = "set",
    scope: str = ".",
    message_id: str | None = None,
) -> Event:
    """Instruction files (`AGENTS.md`, …) as dsh's agent-instructions plugin injects them; `baseline` reads
    "loaded", otherwise "added" or "updated"."""
    changes = [{"action": action, "scope": scope, "path": path} for path in paths or ("AGENTS.md",)]
    extra: dict[str, Any] = {"baseline": True} if baseline else {}
    return context(
        text, kind="agent-instructions", form="instructions", message_id=message_id, **extra, changes=changes
    )


def catalog(
    entries: Mapping[str, str], text: str | None = None, *, update: bool = False, message_id: str | None = None
) -> Event:
    """A skill catalog: `entries` maps each name to its description."""
    listed = [{"name": name, "description": description} for name, description in entries.items()]
    body = text if text is not None else "\n".join(f"- {e['name']}: {e['description']}" for e in listed)
    extra: dict[str, Any] = {"update": True} if update else {}
    return context(body, kind="skill-catalog", form="catalog", entries=listed, message_id=message_id, **extra)


def snapshot(
    sections: Mapping[str, str],
    text: str | None = None,
    *,
    plugin: str = "@deepseek-ai/dsh-system-prompt",
    message_id: str | None = None,
) -> Event:
    """A runtime-context snapshot: `sections` maps each section's name to its text."""
    listed = [{"name": name, "text": body} for name, body in sections.items()]
    whole = text if text is not None else "\n\n".join(s["text"] for s in listed)
    return context(whole, plugin=plugin, form="snapshot", sections=listed, message_id=message_id)


def notice(
    summary: str, text: str | None = None, *, plugin: str = "repeat-tool-reminder", message_id: str | None = None
) -> Event:
    """A notice: its one-line `summary`, and the text the model read."""
    return context(
        text if text is not None else summary, plugin=plugin, form="notice", summary=summary, message_id=message_id
    )


def relay(
    text: str,
    sender_session_id: str,
    *,
    kind: Literal["subagent-report", "coordinator"] = "subagent-report",
    message_id: str | None = None,
) -> Event:
    """Words relayed from another session (a subagent's report, a coordinator's message)."""
    return context(text, kind=kind, form="relay", senderSessionId=sender_session_id, message_id=message_id)


def recall(text: str, *labels: str, message_id: str | None = None) -> Event:
    """Earlier sessions recalled for the model, one reference per label."""
    references = [
        {
            "sessionId": str(uuid.uuid4()),
            "label": label,
            "capturedThroughSeq": None,
            "compacted": False,
            "originalMessages": 2,
            "retainedMessages": 2,
            "omittedMessages": 0,
            "omittedBytes": 0,
            "truncated": False,
            "inputIndex": index,
        }
        for index, label in enumerate(labels or ("earlier session",))
    ]
    return context(
        text, kind="session-reference", form="recall", version=1, references=references, message_id=message_id
    )


# Compaction, approvals and commands


def compaction(
    summary: str,
    *,
    manual: bool = True,
    tokens: int = 0,
    error: str | None = None,
    compaction_id: str | None = None,
    provider: str = PROVIDER,
    model: str = MODEL,
) -> list[Event]:
    """A summarising compaction of everything on the surface before it. `manual`: the `/compact` command
    between turns (its `command/run` and `command/done` around a standalone compaction); otherwise an
    automatic one inside the open turn. `tokens` is what it shadowed; `error` makes it a failed attempt
    (no summary, no checkpoint)."""
    cid = _id(compaction_id)
    command = f"cmd-{cid}"
    owner: dict[str, Any] = {"compactionId": cid, **({"sourceCommandId": command} if manual else {})}
    turn: Number | None = None if manual else TURN
    events: list[Event] = [{"type": "compaction/start", "data": {**owner, "turn": turn}}]
    if error is None:
        events += [
            {
                "type": "compaction/summary",
                "data": {
                    **owner,
                    "summary": _text(summary),
                    "shadowedRange": SHADOWED_RANGE,
                    "shadowedSeqs": SHADOWED_SEQS,
                    "shadowedTokenCount": tokens,
                    "provider": provider,
                    "model": model,
                },
            },
            {
                "type": "user/message",
                "data": {
                    "content": [*_text(CHECKPOINT), *_text(summary), *_text("</compacted-summary>")],
                    "source": {"kind": "plugin", "plugin": "compact", **owner},
                    "role": "user",
                    "id": str(uuid.uuid4()),
                },
                "sourceEventSeqs": SOURCES,
                "surfaceOp": REPLACE,
            },
        ]
    events.append({"type": "compaction/end", "data": {**owner, "turn": turn, **({"error": error} if error else {})}})
    if not manual:
        return events
    done = (
        {"kind": "error", "text": error}
        if error
        else {"kind": "success", "text": COMPACTED, "sourceEventSeq": SUMMARY_SEQ}
    )
    run = {"commandId": command, "name": "compact", "args": "", "source": {"kind": "user"}}
    return [
        {"type": "command/run", "data": run},
        *events,
        {"type": "command/done", "data": {"commandId": command, **done}},
    ]


def approval(
    tool_name: str,
    outcome: Literal["allowed-once", "rejected", "cancelled", "unavailable"] = "allowed-once",
    *,
    call_id: str | None = None,
    reason: str | None = None,
    approval_id: str | None = None,
) -> list[Event]:
    """A person asked to approve a tool call, and their answer."""
    aid = _id(approval_id)
    asked: dict[str, Any] = {"id": aid, "toolName": tool_name}
    if call_id:
        asked["callId"] = call_id
    if reason:
        asked["reason"] = reason
    return [
        {"type": "approval/asked", "data": asked},
        {"type": "approval/decided", "data": {"id": aid, "outcome": outcome}},
    ]


def command(
    name: str,
    args: str | None = None,
    *,
    kind: Literal["success", "error"] = "success",
    text: str | None = None,
    command_id: str | None = None,
) -> list[Event]:
    """A slash command the person ran (`name` without the slash; `args` as typed after it) and how it ended."""
    cid = _id(command_id)
    run: dict[str, Any] = {"commandId": cid, "name": name, **({"args": args} if args is not None else {})}
    run["source"] = {"kind": "user"}
    done: dict[str, Any] = {"commandId": cid, "kind": kind, **({"text": text} if text is not None else {})}
    return [{"type": "command/run", "data": run}, {"type": "command/done", "data": done}]


def title(text: str, *message_seqs: int) -> Event:
    """The session's title (`session/title`), as a person set it."""
    return {
        "type": "session/title",
        "data": {"title": text, "messageSeqs": list(message_seqs), "source": {"kind": "user"}},
    }
