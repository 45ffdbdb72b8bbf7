"""The human transcript (FORMAT.md §5.5, UI.md §0, §5): rows in log order.

Rows are light: a kind, the seq they anchor at and named links to the other
events they draw on, so a window of rows can be rendered by decoding only
its own events. Every event of the log has a row or a place in one: chunks in
their step (or a retry, or a partial stream), results, hooks, approvals and
code-mode sub-calls in their tool row, `command/done` in its command row,
the compaction bracket in its marker. Replacement copies stay model-only,
except the compaction checkpoint.

Nothing the file holds is lost either (PRODUCT.md "Reading"): every diagnostic
is a row where it lies, and the readable records dsh would not load (those
after a defect) are rows of their own kinds, marked outside dsh's view.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import ChainMap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from heapq import merge
from typing import Any, Literal

from ..log.diagnostics import Diagnostic, Location
from ..model.rules import (
    KNOWN_EVENT_TYPES,
    SURFACE_TYPES,
    UpgradeError,
    message_of,
    message_shape_problem,
    upgrade_event,
)
from ..model.values import Event
from .calls import step_key, turn_step
from .session import SessionLog, TailRecord, to_event

RowKind = Literal[
    "turn",
    "step",
    "user",
    "steering",
    "context",
    "assistant-step",
    "partial-stream",
    "tool-call",
    "command",
    "manual-compaction",
    "compaction",
    "model-retry",
    "turn-error",
    "turn-max-tokens",
    "event",
    "unknown",
    "diagnostic",
]


@dataclass(frozen=True, slots=True)
class Row:
    kind: RowKind
    seq: int  # the anchor: rows sort by it
    key: str
    links: tuple[tuple[str, tuple[int, ...]], ...] = ()  # named groups of other events the row shows
    tail: TailRecord | None = None  # the unreadable record a diagnostic row is about, for its bytes
    # the key of the step the row happened in, as the step index keys it (`turn.step`, `~n` for a
    # repeated pair), so a row links to its own step's model view; None outside any step
    step: str | None = None
    diagnostic: Diagnostic | None = None  # a diagnostic row's finding
    # Why dsh would not load what the row shows (it lies after a defect); None for rows of dsh's view.
    # The diagnostic row that heads a run of such rows carries their reason too, as its note.
    outside: str | None = None
    # The message the row stands for, and which row of that id it is: a log that repeats an id
    # gives its later rows `~2`, `~3` anchors (PRODUCT.md Interfaces).
    message: str | None = None
    occurrence: int = 1

    def link(self, name: str) -> tuple[int, ...]:
        for key, seqs in self.links:
            if key == name:
                return seqs
        return ()

    @property
    def related(self) -> tuple[int, ...]:
        return tuple(s for _, seqs in self.links for s in seqs)


@dataclass(slots=True)
class _Inbox:
    """Pending-input lists per target; ids taken off `next-step` and not cancelled are steering."""

    lists: dict[str, list[str]] = field(default_factory=dict)
    claimed: set[str] = field(default_factory=set)

    def splice(self, data: Any) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("target"), str):
            return
        items = self.lists.setdefault(data["target"], [])
        start = data.get("start") if isinstance(data.get("start"), int) else 0
        removed = data.get("removedCount") if isinstance(data.get("removedCount"), int) else 0
        inserted = [m.get("id") for m in data.get("inserted", ()) if isinstance(m, dict)]
        gone = items[start : start + removed]
        items[start : start + removed] = [i for i in inserted if isinstance(i, str)]
        if data["target"] == "next-step" and data.get("outcome") != "canceled":
            self.claimed.update(i for i in gone if isinstance(i, str))


def is_checkpoint(event: Event) -> bool:
    message = event.message
    return (
        event.type == "user/message"
        and isinstance(event.surface_op, dict)
        and message is not None
        and message.source.kind == "plugin"
        and message.source.get("plugin") == "compact"
    )


def user_message_kind(event: Event, claimed: set[str]) -> RowKind | None:
    """The row a `user/message` becomes, or None for a model-only copy."""
    message = event.message
    if message is None:
        return None
    if event.surface_op == "append":
        if message.source.kind == "user":
            return "steering" if message.id in claimed else "user"
        return "context"
    return "compaction" if is_checkpoint(event) else None


def context_row_at(log: SessionLog, seq: int) -> Row | None:
    """The context row anchored at `seq`, if the event there is one."""
    if not 0 <= seq < log.event_count or log.types[seq] != "user/message":
        return None
    return Row("context", seq, f"seq-{seq}") if user_message_kind(log.event(seq), set()) == "context" else None


class _Lazy:
    """One event as the builder sees it: seq and type at once, the body decoded only if asked."""

    __slots__ = ("_event", "log", "seq", "type")

    def __init__(self, log: SessionLog, seq: int) -> None:
        self.log = log
        self.seq = seq
        self.type = log.types[seq]
        self._event: Event | None = None

    @property
    def event(self) -> Event:
        if self._event is None:
            self._event = self.log.event(self.seq)
        return self._event

    @property
    def data(self) -> Any:
        return self.event.data

    @property
    def message(self) -> Any:
        return self.event.message

    @property
    def surface_op(self) -> Any:
        op = self.log.surface_ops.get(self.seq)
        if op is None:
            return self.event.surface_op
        return op if op == "append" else {"op": "replace", "start": op[0], "end": op[1]}

    @property
    def ignorable(self) -> bool:
        return self.event.ignorable


def _get(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, dict) else None


class _Builder:
    """One pass over the events; rows whose parts arrive later are finished at the end."""

    def __init__(self) -> None:
        self.rows: dict[int, dict[str, Any]] = {}  # anchor seq → {"kind", "links": {name: [seqs]}}
        self.inbox = _Inbox()
        self.calls: dict[str, int] = {}  # callId → tool/call seq (or orphan result seq)
        self.open_call: int | None = None  # the last tool/call of the open step, for hooks
        self.commands: dict[str, int] = {}  # commandId → command/run seq
        self.compactions: dict[str, dict[str, int]] = {}  # compactionId → {start, summary, end}
        self.retries: dict[str, int] = {}  # retryId → llm/retry seq
        self.step_chunks: list[int] = []  # chunks of the current model call
        self.turn_row: int | None = None
        self.step_row: int | None = None
        self.recalls: set[int] = set()
        self.approvals: dict[str, int] = {}  # approval id → the tool row it was attached to
        self.checkpoints: dict[str, int] = {}  # compactionId → the row showing its checkpoint
        self.step_key: str | None = None  # the open step's key; it bounds steps as `call_index` does
        self.step_pairs: dict[tuple[int, int], int] = {}  # (turn, step) → `step/start`s seen so far

    def add(self, kind: RowKind, seq: int, **links: list[int]) -> dict[str, Any]:
        row = {"kind": kind, "links": {k: list(v) for k, v in links.items()}, "step": self.step_key}
        self.rows[seq] = row
        return row

    def attach(self, anchor: int | None, name: str, seq: int) -> bool:
        if anchor is None or anchor not in self.rows:
            return False
        self.rows[anchor]["links"].setdefault(name, []).append(seq)
        return True

    def feed(self, event: _Lazy) -> None:
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event)
        elif event.ignorable or event.type not in KNOWN_EVENT_TYPES:
            self.add("unknown", event.seq)
        else:
            self.add("event", event.seq)

    def finish(self) -> None:
        """Give a row to whatever the log ended before placing."""
        _flush_stream(self)
        placed = {s for r in self.rows.values() for seqs in r["links"].values() for s in seqs} | set(self.rows)
        for bracket in self.compactions.values():
            for seq in bracket.values():
                if seq not in placed:
                    self.add("event", seq)


def _flush_stream(b: _Builder) -> None:
    """Chunks that no assistant/message took: their partial stream gets a row of its own."""
    if b.step_chunks:
        b.add("partial-stream", b.step_chunks[0], chunks=b.step_chunks)
        b.step_chunks = []


def _turn_start(b: _Builder, e: _Lazy) -> None:
    _flush_stream(b)
    b.turn_row = e.seq
    b.add("turn", e.seq)


def _turn_end(b: _Builder, e: _Lazy) -> None:
    _flush_stream(b)
    b.step_key = None  # a turn that ended without closing its step closes it here
    reason = _get(e.data, "reason")
    kind = _get(reason, "kind")
    if kind == "error":
        b.add("turn-error", e.seq)
        b.attach(b.turn_row, "end", e.seq)
    elif kind == "max-tokens":
        b.add("turn-max-tokens", e.seq)
        b.attach(b.turn_row, "end", e.seq)
    elif not b.attach(b.turn_row, "end", e.seq):
        b.add("event", e.seq)  # no open turn to close: shown on its own
    elif kind not in ("completed", None):
        b.attach(b.turn_row, "outcome", e.seq)
    b.turn_row = None


def _step_start(b: _Builder, e: _Lazy) -> None:
    _flush_stream(b)  # chunks before this belong to the step before
    pair = turn_step(e.log.raw_event(e.seq).get("data"))
    if pair is None:
        b.step_key = None  # the step index has no step without a turn and step number either
    else:
        b.step_pairs[pair] = b.step_pairs.get(pair, 0) + 1
        b.step_key = step_key(*pair, b.step_pairs[pair])
    b.step_row = e.seq
    b.open_call = None
    b.add("step", e.seq)


def _step_end(b: _Builder, e: _Lazy) -> None:
    _flush_stream(b)
    if not b.attach(b.step_row, "end", e.seq):
        b.add("event", e.seq)  # no open step to close: shown on its own
    b.step_row = None
    b.step_key = None


def _chunk(b: _Builder, e: _Lazy) -> None:
    b.step_chunks.append(e.seq)


def _assistant(b: _Builder, e: _Lazy) -> None:
    chunks, b.step_chunks = b.step_chunks, []
    if e.seq not in e.log.message_ids or e.surface_op != "append":
        b.add("event", e.seq)
        return
    if e.seq not in e.log.empty_assistant:
        b.add("assistant-step", e.seq, chunks=chunks)
    elif chunks:  # empty content after a stream: show what streamed (and the usage) as a partial stream
        b.add("partial-stream", chunks[0], chunks=chunks, assistant=[e.seq])
    elif not b.attach(b.step_row, "usage-only", e.seq):  # a max-tokens step hosting only usage
        b.add("event", e.seq)


def _user(b: _Builder, e: _Lazy) -> None:
    kind = e.log.source_kinds.get(e.seq)
    if kind is not None and e.surface_op == "append":  # the common case, read from the scan's facts
        if kind == "user":
            b.add("steering" if e.log.message_ids[e.seq] in b.inbox.claimed else "user", e.seq)
        else:
            if kind == "session-reference":
                b.recalls.add(e.seq)
            b.add("context", e.seq)
        return
    row_kind = user_message_kind(e.event, b.inbox.claimed)
    if row_kind == "compaction":
        source = e.message.source if e.message else None
        compaction_id = source.get("compactionId") if source else None
        bracket = b.compactions.get(compaction_id, {}) if isinstance(compaction_id, str) else {}
        command = source.get("sourceCommandId") if source else None
        run = b.commands.get(command) if isinstance(command, str) else None
        if run is not None:  # a manual /compact: its command row becomes the marker (UI.md §5.5)
            b.rows[run]["kind"] = "manual-compaction"
            b.attach(run, "checkpoint", e.seq)
            for name, seq in bracket.items():
                b.attach(run, name, seq)
        else:
            b.add("compaction", e.seq, **{name: [seq] for name, seq in bracket.items()})
        if isinstance(compaction_id, str):
            b.checkpoints[compaction_id] = run if run is not None else e.seq
    elif row_kind is not None:
        if row_kind == "context" and e.message and e.message.source.kind == "session-reference":
            b.recalls.add(e.seq)
        b.add(row_kind, e.seq)
    elif not b.attach(_original(b, e), "rewrites", e.seq):
        b.add("event", e.seq)


def _original(b: _Builder, e: _Lazy) -> int | None:
    op = e.surface_op
    return int(op["start"]) if isinstance(op, dict) and isinstance(op.get("start"), int) else None


def _inbox(b: _Builder, e: _Lazy) -> None:
    b.inbox.splice(e.data)
    b.add("event", e.seq)


def _tool_call(b: _Builder, e: _Lazy) -> None:
    call_id = _get(e.data, "callId")
    if isinstance(call_id, str):
        b.calls[call_id] = e.seq
    b.open_call = e.seq
    b.add("tool-call", e.seq)


def _tool_result(b: _Builder, e: _Lazy) -> None:
    call_id = e.log.result_calls.get(e.seq)
    call = b.calls.get(call_id) if isinstance(call_id, str) else None
    if e.surface_op != "append":
        original = _original(b, e)
        owner = next((s for s, r in b.rows.items() if original in r["links"].get("result", ())), None)
        if not b.attach(owner, "pruned", e.seq):
            b.add("event", e.seq)
        return
    if call is not None and not b.rows[call]["links"].get("result"):
        b.attach(call, "result", e.seq)
    else:  # a result with no logged call (a synthetic TOOL_NOT_STARTED closer, or a broken log)
        b.add("tool-call", e.seq, result=[e.seq])
        if isinstance(call_id, str):
            b.calls[call_id] = e.seq


def _by_call(name: str):  # type: ignore[no-untyped-def]
    """Hooks and approvals belong on the tool row of the call they concern."""

    def handle(b: _Builder, e: _Lazy) -> None:
        call_id = _get(e.data, "callId")
        approval_id = _get(e.data, "id") if e.type.startswith("approval/") else None
        target = b.calls.get(call_id) if isinstance(call_id, str) else None
        if target is None and e.type == "approval/decided" and isinstance(approval_id, str):
            target = b.approvals.get(approval_id)
        if target is None and e.type.startswith("hook/") and _get(e.data, "point") in ("PreToolUse", "PostToolUse"):
            target = b.open_call  # hooks name no call: a tool hook runs around the step's latest call
        if not b.attach(target, name, e.seq):
            b.add("event", e.seq)
            return
        if isinstance(approval_id, str):
            b.approvals[approval_id] = target  # type: ignore[assignment]

    return handle


def _code_dispatch(b: _Builder, e: _Lazy) -> None:
    parent = _get(e.data, "parentCallId")
    root = _get(e.data, "rootCallId")
    target = b.calls.get(parent) if isinstance(parent, str) else None
    if target is None and isinstance(root, str):
        target = b.calls.get(root)
    if not b.attach(target, "subcalls", e.seq):
        b.add("event", e.seq)


def _command_run(b: _Builder, e: _Lazy) -> None:
    command_id = _get(e.data, "commandId")
    if isinstance(command_id, str):
        b.commands[command_id] = e.seq
    b.add("command", e.seq)


def _command_done(b: _Builder, e: _Lazy) -> None:
    command_id = _get(e.data, "commandId")
    if not b.attach(b.commands.get(command_id) if isinstance(command_id, str) else None, "done", e.seq):
        b.add("event", e.seq)


def _compaction(part: str):  # type: ignore[no-untyped-def]
    """The bracket around a checkpoint; an attempt without one joins its /compact command."""

    def handle(b: _Builder, e: _Lazy) -> None:
        compaction_id = _get(e.data, "compactionId")
        if not isinstance(compaction_id, str):
            b.add("event", e.seq)
            return
        bracket = b.compactions.setdefault(compaction_id, {})
        bracket[part] = e.seq
        if part != "end":
            return
        if b.attach(b.checkpoints.get(compaction_id), "end", e.seq):
            return
        command = _get(e.data, "sourceCommandId")
        run = b.commands.get(command) if isinstance(command, str) else None
        for seq in bracket.values():
            if not b.attach(run, "compaction-attempt", seq):
                b.add("event", seq)

    return handle


def _retry(b: _Builder, e: _Lazy) -> None:
    chunks, b.step_chunks = b.step_chunks, []  # the failed attempt's stream
    retry_id = _get(e.data, "retryId")
    if isinstance(retry_id, str):
        b.retries[retry_id] = e.seq
    b.add("model-retry", e.seq, chunks=chunks)


def _retry_started(b: _Builder, e: _Lazy) -> None:
    retry_id = _get(e.data, "retryId")
    if not b.attach(b.retries.get(retry_id) if isinstance(retry_id, str) else None, "started", e.seq):
        b.add("event", e.seq)


_HANDLERS = {
    "turn/start": _turn_start,
    "turn/end": _turn_end,
    "step/start": _step_start,
    "step/end": _step_end,
    "assistant/chunk": _chunk,
    "assistant/message": _assistant,
    "user/message": _user,
    "agent/inbox/spliced": _inbox,
    "tool/call": _tool_call,
    "tool/result": _tool_result,
    "hook/invoked": _by_call("hooks"),
    "hook/result": _by_call("hooks"),
    "approval/asked": _by_call("approvals"),
    "approval/decided": _by_call("approvals"),
    "tool/code-dispatch-start": _code_dispatch,
    "tool/code-dispatch": _code_dispatch,
    "command/run": _command_run,
    "command/done": _command_done,
    "compaction/start": _compaction("start"),
    "compaction/summary": _compaction("summary"),
    "compaction/end": _compaction("end"),
    "llm/retry": _retry,
    "llm/retry-started": _retry_started,
}


# --- the rows of a session ----------------------------------------------------------------------

# Rows that are a message of their own, and rows that stand for the message of one of their links:
# the result a tool row shows, the checkpoint a /compact marker stands for, the empty message a
# partial stream or a max-tokens step hosts. Each anchors at `msg-{that id}`.
_OWN_MESSAGE_ROWS = frozenset({"user", "steering", "context", "assistant-step", "compaction"})
_LINKED_MESSAGE = {
    "tool-call": "result",
    "manual-compaction": "checkpoint",
    "partial-stream": "assistant",
    "step": "usage-only",
}

REPEATED_ID = "repeated-message-id"


def build_rows(log: SessionLog) -> list[Row]:
    """Every row of a session in order: see `transcript_rows`."""
    return transcript_rows(log)[1]


def transcript_rows(log: SessionLog) -> tuple[SessionLog | ReadableLog, list[Row]]:
    """Every row of a session in order, and the log its rows read their events from.

    dsh's view comes first, in anchor order; then the readable events of records dsh would
    drop after a defect, as rows marked `outside`; and every diagnostic as a row where its
    location lies, so nothing the file holds is lost and a page counts what it shows.
    """
    readable = readable_log(log)
    messages = _Messages(readable)
    rows = _rows(_build(log, range(log.event_count)), "seq", messages, None)
    if isinstance(readable, ReadableLog):
        outside = _build(readable, range(log.event_count, readable.event_count))
        rows += _rows(outside, "outside", messages, readable.outside_reasons)
    places = _Places(log, readable)
    found = [(places.of(d.location), d) for d in (*log.diagnostics, *_unreported(log, readable))]
    return readable, _with_diagnostics(rows, found + messages.warnings, log)


def _build(log: SessionLog | ReadableLog, seqs: range) -> _Builder:
    builder = _Builder()
    for seq in seqs:
        builder.feed(_Lazy(log, seq))  # type: ignore[arg-type]  # a ReadableLog reads like its log
    builder.finish()
    return builder


def _rows(builder: _Builder, prefix: str, messages: _Messages, outside: Mapping[int, str] | None) -> list[Row]:
    rows = []
    for seq in sorted(builder.rows):
        spec = builder.rows[seq]
        links = tuple((k, tuple(v)) for k, v in spec["links"].items() if v)
        kind = spec["kind"]
        if kind in ("user", "steering") and seq + 1 in builder.recalls:
            links += (("recall", (seq + 1,)),)
        message, n = messages.of(kind, seq, links)
        reason = None if outside is None else outside.get(seq, "")
        rows.append(
            Row(kind, seq, f"{prefix}-{seq}", links, step=spec["step"], outside=reason, message=message, occurrence=n)
        )
    return rows


class _Messages:
    """The message each row stands for, in row order; a later row of an id already shown is its
    `~n`, with a warning placed right before it."""

    def __init__(self, log: SessionLog | ReadableLog) -> None:
        self.log = log
        self.seen: dict[str, int] = {}
        self.warnings: list[tuple[int, Diagnostic]] = []

    def of(self, kind: str, seq: int, links: tuple[tuple[str, tuple[int, ...]], ...]) -> tuple[str | None, int]:
        if kind in _OWN_MESSAGE_ROWS:
            carrier: int | None = seq
        else:
            wanted = _LINKED_MESSAGE.get(kind)
            carrier = next((seqs[0] for name, seqs in links if name == wanted), None)
        message = self.log.message_ids.get(carrier) if carrier is not None else None
        if message is None:
            return None, 1
        n = self.seen[message] = self.seen.get(message, 0) + 1
        if n > 1:
            self.warnings.append(
                (
                    seq,
                    Diagnostic(
                        REPEATED_ID,
                        "warning",
                        f"message id {message!r} repeats the id of an earlier message row: this row anchors at "
                        f"msg-{message}~{n}",
                        _event_location(self.log, carrier),
                    ),
                )
            )  # type: ignore[arg-type]
        return message, n


def _with_diagnostics(rows: list[Row], found: list[tuple[int, Diagnostic]], log: SessionLog) -> list[Row]:
    """`rows` with a row for each diagnostic, just before the first row anchored at or after its place."""
    records = {t.location: t for t in log.tail if t.kind != "dropped"}
    marks: list[Row] = []
    at: dict[int, int] = {}
    for place, d in sorted(found, key=lambda x: x[0]):  # stable: diagnostics at one place keep the log's order
        j = at[place] = at.get(place, -1) + 1
        marks.append(Row("diagnostic", place, f"diag-{place}-{j}", tail=records.pop(d.location, None), diagnostic=d))
    # both in seq order already; a finding goes before the row anchored at its place
    merged = list(merge(marks, rows, key=lambda r: (r.seq, r.kind != "diagnostic")))
    # The finding right before a run of rows outside dsh's view heads it: it carries their reason
    # as the note that says why what follows is shown but not loaded.
    for i in range(1, len(merged)):
        row, before = merged[i], merged[i - 1]
        if (
            row.kind != "diagnostic"
            and row.outside is not None
            and before.kind == "diagnostic"
            and before.outside is None
        ):
            merged[i - 1] = replace(before, outside=row.outside)
    return merged


def _unreported(log: SessionLog, readable: SessionLog | ReadableLog) -> list[Diagnostic]:
    """Findings for records outside dsh's view that no reader diagnostic covers: a row each, so
    none is dropped silently (a SQLite row after a torn tail, a dropped record that no longer reads)."""
    covered = {d.location for d in log.diagnostics}
    failed = readable.unreadable if isinstance(readable, ReadableLog) else {}
    out = []
    for t in log.tail:
        if t.kind == "dropped" and t.location in failed:
            out.append(
                Diagnostic(
                    "defect", "error", f"a record dsh drops does not read again: {failed[t.location]}", t.location
                )
            )
        elif t.kind != "dropped" and t.location not in covered:
            severity = "info" if t.kind == "pending" else "error"
            out.append(
                Diagnostic(
                    "pending-line" if t.kind == "pending" else "defect",
                    severity,
                    t.reason or "unreadable record",
                    t.location,
                )
            )
    return out


def _event_location(log: SessionLog | ReadableLog, seq: int) -> Location:
    """Where event `seq` was read from: its record's byte offset (its row, in SQLite), or its line
    when it lies after a defect; an in-memory closer has only the file."""
    base = log.log if isinstance(log, ReadableLog) else log
    label = base.source.label
    if isinstance(log, ReadableLog) and seq >= base.event_count:
        return log.location_of(seq)
    records = base._event_record  # the index `SessionLog.raw_event` reads too
    if seq >= len(records):
        return Location(file=label)
    start = base._rec_start[records[seq]]
    return Location(file=label, row=start) if base.carrier == "sqlite" else Location(file=label, offset=start)


class _Places:
    """Where a located finding sits among the events: the seq of the first event at or after it.

    A record's start is a byte offset of the decoded text (JSONL), or a SQLite row's physical seq;
    a finding locates itself the same way. What the reader read past (a defect, records dsh drops,
    a pending line) sits after every event of dsh's view, in-memory closers included.
    """

    def __init__(self, log: SessionLog, readable: SessionLog | ReadableLog) -> None:
        self.starts: Sequence[int] = log._rec_start
        self.lengths: Sequence[int] = log._rec_length
        self.records: Sequence[int] = log._event_record  # each event's record, in record order
        self.end = readable.event_count
        firsts = readable.tail_firsts if isinstance(readable, ReadableLog) else {}
        tail: list[tuple[int, int, int]] = []
        next_first = self.end
        for t in reversed(log.tail):  # each tail record with the first readable event at or after it
            next_first = firsts.get(t.location, next_first)
            tail.append((t.start, t.length, next_first))
        self.tail = tail[::-1]

    def first_event(self, record: int) -> int:
        return bisect_left(self.records, record)

    def of(self, location: Location) -> int:
        key = location.row if location.row is not None else location.offset if location.line is not None else None
        if key is None:
            # a byte offset with no line is a compressed file's own (its framing), not a place in
            # the text: framing problems end the readable text; a finding about the whole file leads
            return self.end if location.offset is not None else 0
        i = bisect_right(self.starts, key)
        if i and key < self.starts[i - 1] + max(self.lengths[i - 1], 1):
            return self.first_event(i - 1)  # inside a record: before the row of its first event
        if i < len(self.starts):
            return self.first_event(i)
        for start, length, first in self.tail:
            if key < start + max(length, 1):
                return first
        return self.end


# --- records dsh would not load ---------------------------------------------------------------------


class _Joined(Sequence[str]):
    """Two lists read as one, without copying the long one."""

    def __init__(self, head: Sequence[str], tail: Sequence[str]) -> None:
        self.head, self.rest = head, tail

    def __len__(self) -> int:
        return len(self.head) + len(self.rest)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        n = len(self.head)
        return self.head[i] if i < n else self.rest[i - n]

    def __iter__(self) -> Iterator[str]:
        yield from self.head
        yield from self.rest


class _Either:
    """Membership in either of two sets, without copying them."""

    def __init__(self, a: set[int], b: set[int]) -> None:
        self.a, self.b = a, b

    def __contains__(self, x: object) -> bool:
        return x in self.a or x in self.b


class ReadableLog:
    """A log and the readable events of the records dsh would not load (those after a defect).

    They are numbered after the log's own events, closers included, and read like them, so the
    transcript shows them as the rows they are, marked outside dsh's view, instead of hiding them.
    Everything else reads from the log itself.
    """

    def __init__(
        self,
        log: SessionLog,
        events: list[dict[str, Any]],
        records: list[Location],
        reasons: list[str],
        unreadable: dict[Location, str],
    ) -> None:
        self.log = log
        self._events = events
        self._records = records  # each outside event's record
        self.unreadable = unreadable  # dropped records that failed to read again → why
        first = log.event_count
        types = [e.get("type") if isinstance(e.get("type"), str) else "" for e in events]
        self.types = _Joined(log.types, types)
        ids: dict[int, str] = {}
        kinds: dict[int, str] = {}
        calls: dict[int, str] = {}
        empty: set[int] = set()
        for i, event in enumerate(events):
            if event.get("type") not in SURFACE_TYPES or message_shape_problem(event) is not None:
                continue
            seq, message = first + i, message_of(event)
            ids[seq] = message["id"]
            if event["type"] == "assistant/message" and not message["content"]:
                empty.add(seq)
            elif event["type"] == "user/message":
                kinds[seq] = message["source"]["kind"]
            elif event["type"] == "tool/result" and isinstance(message["source"].get("callId"), str):
                calls[seq] = message["source"]["callId"]
        self.message_ids: Mapping[int, str] = ChainMap(ids, log.message_ids)
        self.source_kinds: Mapping[int, str] = ChainMap(kinds, log.source_kinds)
        self.result_calls: Mapping[int, str] = ChainMap(calls, log.result_calls)
        self.empty_assistant = _Either(empty, log.empty_assistant)
        self.outside_reasons = {first + i: r for i, r in enumerate(reasons)}
        self.tail_firsts: dict[Location, int] = {}
        for i, location in enumerate(records):
            self.tail_firsts.setdefault(location, first + i)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.log, name)  # header, source, verdict, surface_ops…: the log's own

    @property
    def event_count(self) -> int:
        return len(self.types)

    def raw_event(self, seq: int) -> dict[str, Any]:
        first = self.log.event_count
        return self.log.raw_event(seq) if seq < first else self._events[seq - first]

    def event(self, seq: int) -> Event:
        first = self.log.event_count
        return self.log.event(seq) if seq < first else to_event(self._events[seq - first])

    def location_of(self, seq: int) -> Location:
        """The record an outside event was read from."""
        return self._records[seq - self.log.event_count]

    def outside(self, seq: int) -> str | None:
        """Why dsh would not load event `seq`; None for its own events."""
        return self.outside_reasons.get(seq)


def readable_log(log: SessionLog) -> SessionLog | ReadableLog:
    """`log` with the readable events of the records dsh would drop, or `log` itself when it has none."""
    dropped = [t for t in log.tail if t.kind == "dropped"]
    if not dropped or log.scan is None:
        return log
    reason = _outside_reason(log)
    sid = log.header.id if log.header and log.header.id else ""
    events: list[dict[str, Any]] = []
    records: list[Location] = []
    reasons: list[str] = []
    unreadable: dict[Location, str] = {}
    for t in dropped:
        try:
            raws = log.scan.reread(t.start, t.length, t.first_seq if t.first_seq is not None else 0)
        except (OSError, ValueError) as exc:  # the file changed under us since it was read
            unreadable[t.location] = str(exc) or type(exc).__name__
            continue
        for raw in raws:
            try:
                events.append(upgrade_event(raw, sid, log.message_ids.get))  # as dsh would read it, had it read on
            except UpgradeError:
                events.append(raw)
            records.append(t.location)
            reasons.append(t.reason or reason)
    return ReadableLog(log, events, records, reasons, unreadable)


def _outside_reason(log: SessionLog) -> str:
    defect = next((t for t in log.tail if t.kind == "defect"), None)
    after = f"after the defective record at {_where(defect.location)}" if defect else "after a defect"
    if log.verdict.category in ("refused", "unsupported"):
        return f"{after}; dsh refuses the whole log"
    return f"{after}; dsh drops it with the rest of the log's tail"


def _where(location: Location) -> str:
    """A place in the log, without the file every row of the page shares."""
    if location.line is not None:
        return f"line {location.line}"
    return f"row seq {location.row}" if location.row is not None else location.describe()
