"""Turning transcript rows into what the row templates and the JSON twin show.

The web layer loads each row's events and hands the derivation's facts and
the forms layer's projections to the templates: numbers and Markdown are
settled here so a template only lays them out. Wording stays `Phrase`s, so
one view serves either language; bodies stay whole, and each page shows
them to its `body_cap` setting (PRODUCT.md: every body is capped).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import orjson
from markupsafe import Markup

from ..forms import ContextView, project_context, session_recall_labels
from ..forms.content import Bounded, bound
from ..forms.jsformat import TEXT_LIMIT, cap_utf16, js_string
from ..forms.tools import ToolPresentation, present_tool
from ..history.session import SessionLog
from ..history.transcript import Row
from ..model.values import (
    ContentBlock,
    Event,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
)
from .markdown import render_markdown
from .strings import Phrase, phrase


@dataclass(frozen=True, slots=True)
class Body:
    """One body a row shows, whole: text, Markdown or JSON from an untrusted log.

    A page shows its first `body_cap` UTF-16 units (a setting) and swaps in the
    rest on "Show all" from `/sessions/{key}/bodies/{seq}?part={part}`.
    """

    part: str  # which body of its row: the show-all route finds it by this
    whole: str
    markdown: bool = False

    def capped(self, cap: int) -> Bounded:
        return bound(self.whole, cap)

    def html(self, cap: int | None = None) -> Markup:
        """Sanitized HTML of a Markdown body, rendered from its first `cap` units only: a
        renderer given a huge text would stall the page the cap is there to protect."""
        return render_markdown(self.whole if cap is None else cap_utf16(self.whole, cap)[0])

    @property
    def text(self) -> str:
        """The body as a window's JSON twin carries it: to the default cap, whatever the page's."""
        return cap_utf16(self.whole)[0]


@dataclass(frozen=True, slots=True)
class Block:
    """One piece of an assistant step or bubble, in content order."""

    kind: str  # "markdown" | "text" | "think" | "image" | "json"
    body: Body | None = None  # the block's text, Markdown source or JSON: every kind but an image
    summary: str = ""  # a think block's first line
    label: Phrase | None = None  # what an image is
    attachment: str | None = None  # an image's attachment id, to show it when the archive carries it

    # What the JSON twin reads of a block: its text (an image's label in English), a Markdown
    # block's HTML, a JSON block's body.
    @property
    def text(self) -> str:
        if self.label is not None:
            return str(self.label)
        return self.body.text if self.body is not None and self.kind in ("text", "think") else ""

    @property
    def html(self) -> Markup | None:
        return self.body.html(TEXT_LIMIT) if self.body is not None and self.kind == "markdown" else None

    @property
    def json(self) -> Body | None:
        return self.body if self.kind == "json" else None


@dataclass(frozen=True, slots=True)
class ToolView:
    presentation: ToolPresentation
    name: str
    call_id: str | None
    state: str  # ok | error | stopped | running
    arguments: Body  # the IN section
    output: Body | None
    error_code: str | None
    duration_ms: int | None
    subcalls: tuple[ToolSubcall, ...]
    note_phrases: tuple[Phrase, ...]  # hooks, approvals, pruning: one line each
    pruned: Body | None  # the model-facing replacement text, when pruned
    result_message_id: str | None  # the result message's id (kept by a pruned copy), for its identity page

    @property
    def notes(self) -> tuple[str, ...]:
        """The notes in English, as the JSON twin carries them."""
        return tuple(str(p) for p in self.note_phrases)

    def bodies(self) -> Iterator[Body]:
        yield self.arguments
        yield from (b for b in (self.output, self.pruned) if b is not None)
        for sub in self.subcalls:
            yield from (b for b in (sub.arguments, sub.output) if b is not None)


@dataclass(frozen=True, slots=True)
class ToolSubcall:
    name: str
    arguments: Body
    is_error: bool
    output: Body | None


@dataclass(frozen=True, slots=True)
class RowView:
    row: Row
    event: Event | None
    context: ContextView | None = None
    blocks: tuple[Block, ...] = ()
    tool: ToolView | None = None
    title: str = ""
    summary: str = ""
    detail: Body | None = None  # the row's expandable text (command output, raw JSON of a compact row)
    details_markdown: Markup | None = None
    state: str = ""
    fact_phrases: tuple[Phrase, ...] = ()  # small labelled facts: durations, token counts, usage
    message_id: str | None = None  # the message the row is: it anchors at `msg-{id}`
    extra: dict[str, Any] = field(default_factory=dict)
    # `msg-{id}` for a message row (`~2`, `~3`… for repeated ids), else `seq-{n}` (PRODUCT.md Interfaces).
    anchor: str = ""
    step: str | None = None  # the step key its model-view link opens, for the rows that run inside a step

    @property
    def facts(self) -> tuple[str, ...]:
        """The facts in English, as the JSON twin carries them."""
        return tuple(str(p) for p in self.fact_phrases)

    def bodies(self) -> Iterator[Body]:
        """Every body the row shows (context bodies keep their own, contractual bound: UI.md §3)."""
        yield from (b.body for b in self.blocks if b.body is not None)
        if self.detail is not None:
            yield self.detail
        if self.tool is not None:
            yield from self.tool.bodies()
        yield from (v for v in self.extra.values() if isinstance(v, Body))

    def body(self, part: str) -> Body | None:
        return next((b for b in self.bodies() if b.part == part), None)

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


def _duration(ms: int | None) -> Phrase | None:
    if ms is None or ms < 0:
        return None
    if ms < 1000:
        return phrase("duration.ms", ms=ms)
    seconds = ms / 1000
    if seconds < 60:
        return phrase("duration.seconds", seconds=f"{seconds:.1f}")
    return phrase("duration.minutes", minutes=int(seconds // 60), seconds=int(seconds % 60))


def _image_label(block: ImageBlock) -> Phrase:
    a = block.attachment
    name = a.get("name") if isinstance(a.get("name"), str) else a.get("attachmentId", "")
    size = f"{js_string(a.get('width'))}×{js_string(a.get('height'))}" if "width" in a else ""
    return phrase(
        "row.image", details=" ".join(x for x in (js_string(name), js_string(a.get("mediaType", "")), size) if x)
    )


def content_blocks(content: tuple[ContentBlock, ...], *, markdown: bool) -> tuple[Block, ...]:
    """Text runs (joined without separator), reasoning, images and unknown blocks, in order."""
    out: list[Block] = []
    run: list[str] = []

    def part() -> str:
        return f"block-{len(out)}"

    def flush() -> None:
        if run:
            text = "".join(run)
            if text:
                out.append(Block("markdown" if markdown else "text", Body(part(), text, markdown=markdown)))
            run.clear()

    for block in content:
        if isinstance(block, TextBlock):
            run.append(block.text)
            continue
        flush()
        if isinstance(block, ReasoningBlock):
            out.append(Block("think", Body(part(), block.text), summary=_first_line(block.text)))
        elif isinstance(block, ImageBlock):
            attachment = block.attachment.get("attachmentId")
            out.append(
                Block(
                    "image", label=_image_label(block), attachment=attachment if isinstance(attachment, str) else None
                )
            )
        elif isinstance(block, ToolCallBlock):
            continue  # tool calls render as their own rows
        else:
            out.append(Block("json", Body(part(), _pretty(block.raw))))
    flush()
    return tuple(out)


_USAGE = (
    ("inputTokens", "row.usage.input"),
    ("cacheReadTokens", "row.usage.cacheRead"),
    ("cacheWriteTokens", "row.usage.cacheWrite"),
    ("outputTokens", "row.usage.output"),
    ("reasoningTokens", "row.usage.reasoning"),
)


def _usage_facts(usage: Any) -> tuple[Phrase, ...]:
    if not isinstance(usage, dict):
        return ()
    return tuple(phrase(key, count=usage[name]) for name, key in _USAGE if name in usage)


def _logged_usage(log: SessionLog, seqs: tuple[int, ...]) -> Any:
    """The usage an assistant message logged: a partial stream's, or a step's that hosts only usage."""
    data = log.event(seqs[0]).data if seqs else None
    return data.get("usage") if isinstance(data, dict) else None


def _result_text(message: Message | None, part: str) -> tuple[Body | None, bool]:
    if message is None or not message.content:
        return None, False
    block = message.content[0]
    inner = getattr(block, "content", ())
    parts = [b.text if isinstance(b, TextBlock) else _pretty(b.raw) for b in inner]
    return Body(part, "\n".join(parts)), bool(getattr(block, "is_error", False))


def _note(event: Event) -> Phrase:
    """A hook or approval, as one line on the tool row it concerns."""
    d = event.data if isinstance(event.data, dict) else {}
    if event.type == "hook/invoked":
        return phrase("tool.hookInvoked", point=d.get("point"), handler=d.get("handlerId"))
    if event.type == "hook/result":
        stderr = d.get("stderrSummary")
        if isinstance(stderr, str):
            return phrase("tool.hookResultStderr", point=d.get("point"), decision=d.get("decision"), stderr=stderr)
        return phrase("tool.hookResult", point=d.get("point"), decision=d.get("decision"))
    if event.type == "approval/asked":
        return phrase("tool.approvalAsked", reason=d.get("reason", d.get("toolName")))
    return phrase("tool.approvalDecided", outcome=d.get("outcome"))


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
    output, is_error = _result_text(result.message if result else None, "out")
    error = result.data.get("error") if result and isinstance(result.data, dict) else None
    error_code = error.get("code") if isinstance(error, dict) else None
    if result is None:
        state = "running"
    elif error_code in ("TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED", "ABORTED", "ABORTED_BEFORE_DISPATCH"):
        state = "stopped"
    else:
        state = "error" if is_error or error_code else "ok"
    if output is None and error_code:
        output = Body("out", f"{error.get('name', 'Error')}: {error_code}")  # type: ignore[union-attr]
    subcalls: dict[str, dict[str, Any]] = {}
    for seq in row.link("subcalls"):
        sub = log.event(seq).data
        if isinstance(sub, dict):
            n = len(subcalls)
            entry = subcalls.setdefault(
                str(sub.get("subCallId")),
                {
                    "name": str(sub.get("name", "")),
                    "arguments": Body(f"sub-{n}-in", _pretty(sub.get("arguments"))),
                    "part": f"sub-{n}-out",
                },
            )
            if "isError" in sub:
                entry["is_error"] = sub.get("isError") is True
                texts = [
                    b.get("text", "") if isinstance(b, dict) and b.get("type") == "text" else _pretty(b)
                    for b in sub.get("content", ())
                ]
                entry["output"] = Body(entry["part"], "\n".join(str(t) for t in texts))
    notes = [_note(log.event(seq)) for seq in row.link("hooks") + row.link("approvals")]
    pruned = None
    for seq in row.link("pruned"):
        pruned, _ = _result_text(log.event(seq).message, "pruned")
        notes.append(phrase("tool.prunedAt", seq=seq))
    duration = result.time - event.time if result and event.type == "tool/call" else None
    presentation = present_tool(name, raw_args, cwd)
    return ToolView(
        presentation=presentation,
        name=name,
        call_id=call_id if isinstance(call_id, str) else None,
        state=state,
        arguments=Body("in", presentation.arguments),
        output=output,
        error_code=error_code,
        duration_ms=duration,
        subcalls=tuple(
            ToolSubcall(s["name"], s["arguments"], s.get("is_error", False), s.get("output")) for s in subcalls.values()
        ),
        note_phrases=tuple(notes),
        pruned=pruned,
        result_message_id=result_id,
    )


def _compaction(log: SessionLog, row: Row) -> dict[str, Any]:
    summary_seq = row.link("summary")
    facts: dict[str, Any] = {"items": None, "tokens": None, "summary": None, "markdown": None}
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
            text = "".join(
                b.get("text", "") for b in data.get("summary", ()) if isinstance(b, dict) and b.get("type") == "text"
            )
            if text:
                facts["summary"] = Body("summary", text, markdown=True)
                facts["markdown"] = facts["summary"].html(TEXT_LIMIT)  # the JSON twin's copy, to the default cap
    return facts


def _retry_state(log: SessionLog, row: Row) -> str:
    """Retried once it started; cancelled once its turn ended first (an open final turn is ended
    by the crash closers, so a log that stops before the retry cancels it too); else waiting."""
    if row.link("started"):
        return "ok"
    try:
        log.types.index("turn/end", row.seq + 1)
    except ValueError:
        return "waiting"
    return "cancelled"


def row_view(log: SessionLog, row: Row, cwd: str | None = None, anchor: str | None = None) -> RowView:
    if row.diagnostic is not None:
        return _finding_view(row, anchor or row.key)
    view = _row_view(log, row, cwd)
    if anchor is None:
        anchor = f"msg-{view.message_id}" if view.message_id is not None else row.key
    return replace(view, anchor=anchor, step=row.step if row.kind in STEP_ROWS else None)


def _finding_view(row: Row, anchor: str) -> RowView:
    """A finding is laid out from its diagnostic (and the record it could not read), not from events."""
    d = row.diagnostic
    assert d is not None
    raw = row.tail.raw.decode("utf-8", "replace") if row.tail is not None and row.tail.raw else ""
    return RowView(
        row,
        None,
        title=row.tail.kind if row.tail is not None else d.code,
        summary=f"{d.location.describe()}: {d.message}",
        state=d.severity,
        detail=Body("record", raw) if raw else None,
        anchor=anchor,
    )  # a part no event row has


def _row_view(log: SessionLog, row: Row, cwd: str | None) -> RowView:
    kind = row.kind
    event = log.event(row.seq)
    message = event.message
    data = event.data if isinstance(event.data, dict) else {}
    mid = (
        message.id
        if message is not None and kind in ("user", "steering", "context", "assistant-step", "compaction")
        else None
    )
    if kind == "context" and message is not None:
        return RowView(row, event, context=project_context(message), message_id=mid)
    if kind in ("user", "steering") and message is not None:
        labels: tuple[str, ...] = ()
        if row.link("recall"):
            recall = log.event(row.link("recall")[0]).message
            labels = session_recall_labels(recall.source) if recall else ()
        return RowView(
            row,
            event,
            blocks=content_blocks(message.content, markdown=False),
            message_id=mid,
            extra={"recall_labels": labels},
        )
    if kind == "assistant-step" and message is not None:
        return RowView(
            row,
            event,
            blocks=content_blocks(message.content, markdown=True),
            message_id=mid,
            state="stopped" if data.get("interrupted") is True else "ok",
            fact_phrases=_usage_facts(data.get("usage")),
            extra={"turn": data.get("turn"), "step": data.get("step")},
        )
    if kind == "partial-stream":
        texts = [log.event(s).data for s in row.link("chunks")]
        text = "".join(
            c["chunk"].get("text", c["chunk"].get("argumentsDelta", ""))
            for c in texts
            if isinstance(c, dict)
            and isinstance(c.get("chunk"), dict)
            and c["chunk"].get("type") in ("text-delta", "reasoning-delta", "tool-call-delta")
        )
        return RowView(
            row,
            event,
            detail=Body("detail", text),
            fact_phrases=_usage_facts(_logged_usage(log, row.link("assistant"))),
        )
    if kind == "tool-call":
        tool = _tool_view(log, row, event, cwd)
        return RowView(
            row, event, tool=tool, state=tool.state, fact_phrases=tuple(x for x in (_duration(tool.duration_ms),) if x)
        )
    if kind in ("command", "manual-compaction"):
        done = log.event(row.link("done")[0]) if row.link("done") else None
        done_data = done.data if done and isinstance(done.data, dict) else {}
        text = done_data.get("text") if isinstance(done_data.get("text"), str) else ""
        state = "running" if done is None else ("error" if done_data.get("kind") == "error" else "ok")
        extra = {"args": data.get("args", "")}
        if kind == "manual-compaction":
            extra.update(_compaction(log, row))
        return RowView(
            row,
            event,
            title=str(data.get("name", "Command")),
            summary=_first_line(text) if text else "",
            detail=Body("detail", text) if "\n" in text else None,
            state=state,
            extra=extra,
        )
    if kind == "compaction":
        return RowView(row, event, message_id=mid, extra=_compaction(log, row))
    if kind == "model-retry":
        chunks = [log.event(s).data for s in row.link("chunks")]
        streamed = "".join(
            c["chunk"].get("text", "") for c in chunks if isinstance(c, dict) and isinstance(c.get("chunk"), dict)
        )
        failure = data.get("failure") if isinstance(data.get("failure"), dict) else {}
        return RowView(
            row,
            event,
            state=_retry_state(log, row),
            extra={
                "retry": js_string(data.get("retry")),
                "maximum": js_string(data.get("maxRetries")) if "maxRetries" in data else "∞",
                "seconds": js_string(round(data.get("delayMs", 0) / 1000, 3))
                if isinstance(data.get("delayMs"), (int, float))
                else "?",
                "delay_ms": js_string(data.get("delayMs")),
                "message": failure.get("message", ""),
                "code": failure.get("code", ""),
                "streamed": Body("streamed", streamed) if streamed else None,
            },
        )
    if kind in ("turn-error", "turn-max-tokens"):
        error = data.get("reason", {}).get("error", {}) if isinstance(data.get("reason"), dict) else {}
        return RowView(
            row,
            event,
            summary=str(error.get("message", "")) if isinstance(error, dict) else "",
            extra={"code": error.get("code") if isinstance(error, dict) else None},
        )
    if kind == "turn":
        end = log.event(row.link("end")[0]) if row.link("end") else None
        outcome = (
            end.data.get("reason", {}).get("kind")
            if end and isinstance(end.data, dict) and isinstance(end.data.get("reason"), dict)
            else None
        )
        facts = tuple(x for x in (_duration(end.time - event.time if end else None),) if x)
        return RowView(
            row,
            event,
            title=js_string(data.get("turn")),
            fact_phrases=facts,
            state=outcome or ("open" if end is None else ""),
        )
    if kind == "step":
        end = log.event(row.link("end")[0]) if row.link("end") else None
        duration = tuple(x for x in (_duration(end.time - event.time if end else None),) if x)
        # a step whose message is empty and streamed nothing (a max-tokens stop) shows its usage here
        usage = _usage_facts(_logged_usage(log, row.link("usage-only")))
        return RowView(row, event, title=js_string(data.get("step")), fact_phrases=duration + usage)
    summary = ", ".join(
        f"{k}: {v}" for k, v in data.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)
    )
    return RowView(
        row, event, title=event.type, summary=_first_line(summary), detail=Body("detail", _pretty(event.to_json()))
    )


def row_json(view: RowView) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": view.row.kind,
        "seq": view.row.seq,
        "key": view.row.key,
        "anchor": view.anchor,
        "links": {k: list(v) for k, v in view.row.links},
    }
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
        out["blocks"] = [
            {
                "kind": b.kind,
                "text": b.text or (str(b.html) if b.html else ""),
                **({"summary": b.summary} if b.summary else {}),
                **({"json": b.json.text} if b.json else {}),
            }
            for b in view.blocks
        ]
    if view.detail is not None:
        out["detail"] = view.detail.text
    if view.tool is not None:
        out["tool"] = _tool_json(view.tool)
    if view.context is not None:
        c = view.context
        out["context"] = {
            "role": c.role,
            "title": c.title_key,
            "label": c.label,
            "declaredForm": c.declared_form,
            "renderedForm": c.rendered_form,
            "summary": c.header_summary,
        }
    if view.row.diagnostic is not None:
        out["diagnostic"] = _diagnostic_json(view.row)
    if view.row.outside is not None:
        out["outside"] = view.row.outside  # why dsh would not load what the row shows (or, on a finding, what follows)
    simple = {k: v for k, v in view.extra.items() if isinstance(v, (str, int, float, bool, type(None), tuple, list))}
    shown = {k: v.text for k, v in view.extra.items() if isinstance(v, Body)}  # a summary, a failed stream
    if simple or shown:
        out["extra"] = {**{k: list(v) if isinstance(v, tuple) else v for k, v in simple.items()}, **shown}
    bodies = [_body_json(b) for b in view.bodies()]
    if bodies:
        out["bodies"] = bodies
    return out


def _tool_json(tool: ToolView) -> dict[str, Any]:
    """What a tool row shows: its header, IN and OUT, its sub-calls, what the model saw once pruned, its notes."""
    p = tool.presentation
    return {
        "name": tool.name,
        "callId": tool.call_id,
        "variant": p.variant,
        "title": p.title,
        "summary": p.summary,
        "path": p.path,
        "state": tool.state,
        "errorCode": tool.error_code,
        "resultMessageId": tool.result_message_id,
        "arguments": tool.arguments.text,
        "output": tool.output.text if tool.output else None,
        "pruned": tool.pruned.text if tool.pruned else None,
        "notes": list(tool.notes),
        "subcalls": [
            {
                "name": s.name,
                "isError": s.is_error,
                "arguments": s.arguments.text,
                "output": s.output.text if s.output else None,
            }
            for s in tool.subcalls
        ],
    }


def _body_json(body: Body) -> dict[str, Any]:
    """How much of a body the twin carries: `total` UTF-16 units whole, cut at the default cap when
    `truncated`; `/api/sessions/{key}/bodies/{seq}?part=` answers it whole."""
    shown = body.capped(TEXT_LIMIT)
    return {"part": body.part, "total": shown.total, "truncated": shown.truncated}


def _diagnostic_json(row: Row) -> dict[str, Any]:
    """A finding where it lies; an unreadable record's kind and reason with it."""
    d, tail = row.diagnostic, row.tail
    assert d is not None
    return {**d.to_json(), **({"kind": tail.kind, "reason": tail.reason} if tail is not None else {})}


def context_json(view: RowView) -> dict[str, Any]:
    """A context row with its whole body, as the open row shows it."""
    assert view.context is not None
    return {**row_json(view), "body": asdict(view.context.body)}
