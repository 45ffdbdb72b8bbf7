"""Turning transcript rows into what the row templates and the JSON twin show.

The web layer loads each row's events and hands the derivation's facts and
the forms layer's projections to the templates: wording, numbers and
Markdown are settled here so a template only lays them out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

import orjson
from markupsafe import Markup

from app.forms import ContextView, project_context, session_recall_labels
from app.forms.content import Bounded, bound
from app.forms.jsformat import js_string
from app.forms.tools import ToolPresentation, present_tool
from app.history.session import SessionLog
from app.history.transcript import Row
from app.model.values import ContentBlock, Event, ImageBlock, Message, ReasoningBlock, TextBlock, ToolCallBlock
from app.web.markdown import render_markdown


@dataclass(frozen=True, slots=True)
class Block:
    """One piece of an assistant step or bubble, in content order."""

    kind: str  # "markdown" | "text" | "think" | "image" | "json"
    html: Markup | None = None
    text: str = ""
    summary: str = ""
    json: Bounded | None = None
    attachment: str | None = None  # an image's attachment id, to show it when the archive carries it


@dataclass(frozen=True, slots=True)
class ToolView:
    presentation: ToolPresentation
    name: str
    call_id: str | None
    state: str  # ok | error | stopped | running
    output: Bounded | None
    error_code: str | None
    duration_ms: int | None
    subcalls: tuple[ToolSubcall, ...]
    notes: tuple[str, ...]  # hooks, approvals, pruning: one line each
    pruned: Bounded | None  # the model-facing replacement text, when pruned
    result_message_id: str | None  # the result message's id (kept by a pruned copy), for its identity page


@dataclass(frozen=True, slots=True)
class ToolSubcall:
    name: str
    arguments: str
    is_error: bool
    output: Bounded | None


@dataclass(frozen=True, slots=True)
class RowView:
    row: Row
    event: Event | None
    context: ContextView | None = None
    blocks: tuple[Block, ...] = ()
    tool: ToolView | None = None
    title: str = ""
    summary: str = ""
    detail: Bounded | None = None  # the row's expandable text (command output, raw JSON of a compact row)
    details_markdown: Markup | None = None
    state: str = ""
    facts: tuple[str, ...] = ()  # small labelled facts: durations, token counts, usage
    message_id: str | None = None  # the message the row is: it anchors at `msg-{id}`
    extra: dict[str, Any] = field(default_factory=dict)
    # `msg-{id}` for a message row (`~2`, `~3`… for repeated ids), else `seq-{n}` (PRODUCT.md Interfaces).
    anchor: str = ""
    step: str | None = None  # the step key its model-view link opens, for the rows that run inside a step

    @property
    def identity(self) -> str | None:
        """The message id the row shows and links to its identity page: the row's own message, else
        the result a tool row shows or the checkpoint a `/compact` marker stands for. Those rows
        anchor at their call or command, so the id is theirs to show but not their anchor."""
        if self.message_id is not None:
            return self.message_id
        if self.tool is not None:
            return self.tool.result_message_id
        checkpoint = self.extra.get("checkpoint_id")
        return checkpoint if isinstance(checkpoint, str) else None


# Rows that happen inside a step and link to what the model read there.
STEP_ROWS = frozenset({"step", "assistant-step", "tool-call", "partial-stream", "model-retry"})


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


def _duration(ms: int | None) -> str | None:
    if ms is None or ms < 0:
        return None
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)} min {int(seconds % 60)} s"


def _image_label(block: ImageBlock) -> str:
    a = block.attachment
    name = a.get("name") if isinstance(a.get("name"), str) else a.get("attachmentId", "image")
    size = f"{js_string(a.get('width'))}×{js_string(a.get('height'))}" if "width" in a else ""
    return " ".join(x for x in (f"Image {name}", str(a.get("mediaType", "")), size) if x)


def content_blocks(content: tuple[ContentBlock, ...], *, markdown: bool) -> tuple[Block, ...]:
    """Text runs (joined without separator), reasoning, images and unknown blocks, in order."""
    out: list[Block] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            text = "".join(run)
            if text:
                out.append(Block("markdown", html=render_markdown(text)) if markdown else Block("text", text=text))
            run.clear()

    for block in content:
        if isinstance(block, TextBlock):
            run.append(block.text)
            continue
        flush()
        if isinstance(block, ReasoningBlock):
            out.append(Block("think", text=block.text, summary=_first_line(block.text)))
        elif isinstance(block, ImageBlock):
            attachment = block.attachment.get("attachmentId")
            out.append(Block("image", text=_image_label(block),
                             attachment=attachment if isinstance(attachment, str) else None))
        elif isinstance(block, ToolCallBlock):
            continue  # tool calls render as their own rows
        else:
            out.append(Block("json", json=bound(_pretty(block.raw))))
    flush()
    return tuple(out)


def _usage_facts(usage: Any) -> tuple[str, ...]:
    if not isinstance(usage, dict):
        return ()
    names = (("inputTokens", "in"), ("cacheReadTokens", "cache read"), ("cacheWriteTokens", "cache write"),
             ("outputTokens", "out"), ("reasoningTokens", "reasoning"))
    return tuple(f"{label} {js_string(usage[key])}" for key, label in names if key in usage)


def _result_text(message: Message | None) -> tuple[Bounded | None, bool]:
    if message is None or not message.content:
        return None, False
    block = message.content[0]
    inner = getattr(block, "content", ())
    parts = [b.text if isinstance(b, TextBlock) else _pretty(b.raw) for b in inner]
    return bound("\n".join(parts)), bool(getattr(block, "is_error", False))


def _tool_view(log: SessionLog, row: Row, event: Event, cwd: str | None) -> ToolView:
    data = event.data if isinstance(event.data, dict) else {}
    if event.type == "tool/call":
        name, raw_args, call_id = str(data.get("name", "")), data.get("arguments", ""), data.get("callId")
    else:  # a result with no logged call
        name, raw_args = "", ""
        call_id = event.message.source.get("callId") if event.message else None
    results = [log.event(s) for s in row.link("result")]
    result = results[0] if results else None
    result_id = result.message.id if result is not None and result.message is not None else None
    output, is_error = _result_text(result.message if result else None)
    error = result.data.get("error") if result and isinstance(result.data, dict) else None
    error_code = error.get("code") if isinstance(error, dict) else None
    if result is None:
        state = "running"
    elif error_code in ("TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED", "ABORTED", "ABORTED_BEFORE_DISPATCH"):
        state = "stopped"
    else:
        state = "error" if is_error or error_code else "ok"
    if output is None and error_code:
        output = bound(f"{error.get('name', 'Error')}: {error_code}")  # type: ignore[union-attr]
    subcalls: dict[str, dict[str, Any]] = {}
    for seq in row.link("subcalls"):
        sub = log.event(seq).data
        if isinstance(sub, dict):
            entry = subcalls.setdefault(str(sub.get("subCallId")), {"name": str(sub.get("name", "")),
                                                                       "arguments": _pretty(sub.get("arguments"))})
            if "isError" in sub:
                entry["is_error"] = sub.get("isError") is True
                texts = [b.get("text", "") if isinstance(b, dict) and b.get("type") == "text" else _pretty(b)
                         for b in sub.get("content", ())]
                entry["output"] = bound("\n".join(str(t) for t in texts))
    notes = []
    for seq in row.link("hooks") + row.link("approvals"):
        e = log.event(seq)
        d = e.data if isinstance(e.data, dict) else {}
        if e.type == "hook/invoked":
            notes.append(f"hook {d.get('point')} · {d.get('handlerId')}")
        elif e.type == "hook/result":
            notes.append(f"hook {d.get('point')} → {d.get('decision')}"
                         + (f" · {d['stderrSummary']}" if isinstance(d.get("stderrSummary"), str) else ""))
        elif e.type == "approval/asked":
            notes.append(f"approval asked · {d.get('reason', d.get('toolName'))}")
        else:
            notes.append(f"approval {d.get('outcome')}")
    pruned = None
    for seq in row.link("pruned"):
        pruned, _ = _result_text(log.event(seq).message)
        notes.append(f"pruned from the model's view at event {seq}")
    duration = result.time - event.time if result and event.type == "tool/call" else None
    return ToolView(
        presentation=present_tool(name, raw_args, cwd), name=name,
        call_id=call_id if isinstance(call_id, str) else None, state=state, output=output, error_code=error_code,
        duration_ms=duration,
        subcalls=tuple(ToolSubcall(s["name"], s["arguments"], s.get("is_error", False), s.get("output"))
                       for s in subcalls.values()),
        notes=tuple(notes), pruned=pruned, result_message_id=result_id,
    )


def _compaction(log: SessionLog, row: Row) -> dict[str, Any]:
    summary_seq = row.link("summary")
    facts: dict[str, Any] = {"items": None, "tokens": None, "markdown": None}
    checkpoint = row.link("checkpoint")  # a /compact command's marker: the row anchors at the command
    if checkpoint:
        message = log.event(checkpoint[0]).message
        facts["checkpoint_id"] = message.id if message is not None else None
    if summary_seq:
        data = log.event(summary_seq[0]).data
        if isinstance(data, dict):
            seqs = data.get("shadowedSeqs")
            facts["items"] = len(seqs) if isinstance(seqs, (list, tuple)) else None
            facts["tokens"] = js_string(data.get("shadowedTokenCount")) if "shadowedTokenCount" in data else None
            text = "".join(b.get("text", "") for b in data.get("summary", ()) if isinstance(b, dict)
                           and b.get("type") == "text")
            facts["markdown"] = render_markdown(text) if text else None
    return facts


def row_view(log: SessionLog, row: Row, cwd: str | None = None, anchor: str | None = None) -> RowView:
    view = _row_view(log, row, cwd)
    if anchor is None:
        anchor = f"msg-{view.message_id}" if view.message_id is not None else row.key
    return replace(view, anchor=anchor, step=row.step if row.kind in STEP_ROWS else None)


def _row_view(log: SessionLog, row: Row, cwd: str | None) -> RowView:
    kind = row.kind
    if kind == "diagnostic":
        tail = row.tail
        assert tail is not None
        raw = tail.raw.decode("utf-8", "replace") if tail.raw else ""
        return RowView(row, None, title=tail.kind, summary=f"{tail.location.describe()}: {tail.reason or ''}",
                       detail=bound(raw) if raw else None)
    event = log.event(row.seq)
    message = event.message
    data = event.data if isinstance(event.data, dict) else {}
    mid = message.id if message is not None and kind in ("user", "steering", "context", "assistant-step",
                                                          "compaction") else None
    if kind == "context" and message is not None:
        return RowView(row, event, context=project_context(message), message_id=mid)
    if kind in ("user", "steering") and message is not None:
        labels: tuple[str, ...] = ()
        if row.link("recall"):
            recall = log.event(row.link("recall")[0]).message
            labels = session_recall_labels(recall.source) if recall else ()
        return RowView(row, event, blocks=content_blocks(message.content, markdown=False), message_id=mid,
                       extra={"recall_labels": labels})
    if kind == "assistant-step" and message is not None:
        facts = _usage_facts(data.get("usage"))
        return RowView(row, event, blocks=content_blocks(message.content, markdown=True), message_id=mid,
                       state="stopped" if data.get("interrupted") is True else "ok", facts=facts,
                       extra={"turn": data.get("turn"), "step": data.get("step")})
    if kind == "partial-stream":
        texts = [log.event(s).data for s in row.link("chunks")]
        text = "".join(c["chunk"].get("text", c["chunk"].get("argumentsDelta", "")) for c in texts
                       if isinstance(c, dict) and isinstance(c.get("chunk"), dict)
                       and c["chunk"].get("type") in ("text-delta", "reasoning-delta", "tool-call-delta"))
        usage = log.event(row.link("assistant")[0]).data.get("usage") if row.link("assistant") else None
        return RowView(row, event, detail=bound(text), facts=_usage_facts(usage))
    if kind == "tool-call":
        tool = _tool_view(log, row, event, cwd)
        return RowView(row, event, tool=tool, state=tool.state,
                       facts=tuple(x for x in (_duration(tool.duration_ms),) if x))
    if kind in ("command", "manual-compaction"):
        done = log.event(row.link("done")[0]) if row.link("done") else None
        done_data = done.data if done and isinstance(done.data, dict) else {}
        text = done_data.get("text") if isinstance(done_data.get("text"), str) else ""
        state = "running" if done is None else ("error" if done_data.get("kind") == "error" else "ok")
        extra = {"args": data.get("args", "")}
        if kind == "manual-compaction":
            extra.update(_compaction(log, row))
        return RowView(row, event, title=str(data.get("name", "Command")), summary=_first_line(text) if text else "",
                       detail=bound(text) if "\n" in text else None, state=state, extra=extra)
    if kind == "compaction":
        return RowView(row, event, message_id=mid, extra=_compaction(log, row))
    if kind == "model-retry":
        chunks = [log.event(s).data for s in row.link("chunks")]
        streamed = "".join(c["chunk"].get("text", "") for c in chunks
                           if isinstance(c, dict) and isinstance(c.get("chunk"), dict))
        failure = data.get("failure") if isinstance(data.get("failure"), dict) else {}
        return RowView(row, event, state="ok" if row.link("started") else "waiting",
                       extra={"retry": js_string(data.get("retry")),
                              "maximum": js_string(data.get("maxRetries")) if "maxRetries" in data else "∞",
                              "seconds": js_string(round(data.get("delayMs", 0) / 1000, 3))
                              if isinstance(data.get("delayMs"), (int, float)) else "?",
                              "delay_ms": js_string(data.get("delayMs")), "message": failure.get("message", ""),
                              "code": failure.get("code", ""), "streamed": bound(streamed) if streamed else None})
    if kind in ("turn-error", "turn-max-tokens"):
        error = data.get("reason", {}).get("error", {}) if isinstance(data.get("reason"), dict) else {}
        return RowView(row, event, summary=str(error.get("message", "")) if isinstance(error, dict) else "",
                       extra={"code": error.get("code") if isinstance(error, dict) else None})
    if kind == "turn":
        end = log.event(row.link("end")[0]) if row.link("end") else None
        outcome = end.data.get("reason", {}).get("kind") if end and isinstance(end.data, dict) \
            and isinstance(end.data.get("reason"), dict) else None
        facts = tuple(x for x in (_duration(end.time - event.time if end else None),) if x)
        return RowView(row, event, title=js_string(data.get("turn")), facts=facts,
                       state=outcome or ("open" if end is None else ""))
    if kind == "step":
        end = log.event(row.link("end")[0]) if row.link("end") else None
        facts = tuple(x for x in (_duration(end.time - event.time if end else None),) if x)
        return RowView(row, event, title=js_string(data.get("step")), facts=facts)
    summary = ", ".join(f"{k}: {v}" for k, v in data.items() if isinstance(v, (str, int, float)) and
                        not isinstance(v, bool))
    return RowView(row, event, title=event.type, summary=_first_line(summary), detail=bound(_pretty(event.to_json())))


def row_json(view: RowView) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": view.row.kind, "seq": view.row.seq, "key": view.row.key, "anchor": view.anchor,
                           "links": {k: list(v) for k, v in view.row.links}}
    if view.event is not None:
        out["type"] = view.event.type
    if view.message_id is not None:
        out["messageId"] = view.message_id
    if view.step is not None:
        out["step"] = view.step
    for name in ("title", "summary", "state"):
        if getattr(view, name):
            out[name] = getattr(view, name)
    if view.facts:
        out["facts"] = list(view.facts)
    if view.blocks:
        out["blocks"] = [{"kind": b.kind, "text": b.text or (str(b.html) if b.html else ""),
                          **({"json": b.json.text} if b.json else {})} for b in view.blocks]
    if view.tool is not None:
        tool = view.tool
        out["tool"] = {"name": tool.name, "callId": tool.call_id, "variant": tool.presentation.variant,
                       "title": tool.presentation.title, "summary": tool.presentation.summary,
                       "state": tool.state, "errorCode": tool.error_code, "resultMessageId": tool.result_message_id,
                       "output": tool.output.text if tool.output else None, "notes": list(tool.notes),
                       "subcalls": [{"name": s.name, "isError": s.is_error} for s in tool.subcalls]}
    if view.context is not None:
        c = view.context
        out["context"] = {"role": c.role, "title": c.title_key, "label": c.label, "declaredForm": c.declared_form,
                          "renderedForm": c.rendered_form, "summary": c.header_summary}
    if view.row.tail is not None:
        tail = view.row.tail
        out["diagnostic"] = {"kind": tail.kind, "reason": tail.reason, "file": tail.location.file,
                             "line": tail.location.line, "row": tail.location.row, "offset": tail.location.offset}
    simple = {k: v for k, v in view.extra.items() if isinstance(v, (str, int, float, bool, type(None), tuple, list))}
    if simple:
        out["extra"] = {k: list(v) if isinstance(v, tuple) else v for k, v in simple.items()}
    return out


def context_json(view: RowView) -> dict[str, Any]:
    """A context row with its whole body, as the open row shows it."""
    assert view.context is not None
    return {**row_json(view), "body": asdict(view.context.body)}
