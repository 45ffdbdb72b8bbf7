"""The human transcript (docs/format.md §5.5, docs/ui.md §0, §5): rows in log order.

Rows are light: a kind, the seq they anchor at and named links to the other
events they draw on, so a window of rows can be rendered by decoding only
its own events. Every event of the log has a row or a place in one: chunks in
their step (or a retry, or a partial stream), results, hooks, approvals and
code-mode sub-calls in their tool row, `command/done` in its command row,
the compaction bracket in its marker. Replacement copies stay model-only,
except the compaction checkpoint.

Nothing the file holds is lost either (docs/product.md "Reading"): every diagnostic
is a row where it lies, and the readable records dsh would not load (those
after a defect) are rows of their own kinds, marked outside dsh's view.

A long run of like events (`RUN_MIN` or more `unknown` rows, or plain `event`
rows, of one type) is one run row: a log of a million such lines must not cost
a row object each. The run row counts them and opens to show them (`run_rows`),
each as the row it would be on its own.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from heapq import merge
from itertools import pairwise
from typing import Any, Literal, get_args

import msgspec
from msgspec.structs import replace

from ..log.diagnostics import Diagnostic, Severity
from ..model.payloads import (
    ApprovalAsked,
    ApprovalDecided,
    CodeDispatch,
    CommandDone,
    CommandRun,
    Compaction,
    Hook,
    InboxSplice,
    Payload,
    Retry,
    ToolCall,
    TurnEnd,
    payload_as,
)
from ..model.rules import KNOWN_EVENT_TYPES
from ..model.text import one_line
from ..model.values import Event
from .calls import step_key, turn_step
from .message_handles import message_anchor
from .readable import ReadableLog, readable_log
from .session import SessionLog, TailRecord

# Every kind of transcript row (docs/ui.md §0's `data-chat-flow-kind`, and ours); templates/rows/ has a
# partial for each, and the session page's kind filter lists them.
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
ROW_KINDS: tuple[RowKind, ...] = get_args(RowKind)
# A kind that names a family takes its members when rows are filtered by kind: a /compact marker
# is a compaction too.
KIND_FAMILIES: Mapping[str, frozenset[str]] = {"compaction": frozenset({"compaction", "manual-compaction"})}

# Rows that are a message of their own, and rows that stand for the message of one of their links:
# the result a tool row shows, the checkpoint a /compact marker stands for, the empty message a
# partial stream or a max-tokens step hosts. Each anchors at `msg-{that id}`.
OWN_MESSAGE_KINDS: frozenset[RowKind] = frozenset({"user", "steering", "context", "assistant-step", "compaction"})
LINKED_MESSAGE: Mapping[RowKind, LinkName] = {
    "tool-call": "result",
    "manual-compaction": "checkpoint",
    "partial-stream": "assistant",
    "step": "usage-only",
}
# Rows that run inside a step, and so link to what the model read there.
STEP_KINDS: frozenset[RowKind] = frozenset({"step", "assistant-step", "tool-call", "partial-stream", "model-retry"})
# Like rows in a row (same kind and type, and equally inside or outside dsh's view) that become one run row:
# more than any ordinary log repeats, so its rows stay as they are.
RUN_MIN = 64


# The named groups of other events a row draws on.
LinkName = Literal[
    "end",  # a turn's or step's end, a compaction bracket's end
    "outcome",  # a turn's end that did not complete
    "chunks",  # the streamed chunks of an assistant step, a partial stream or a failed attempt
    "assistant",  # the empty assistant message a partial stream hosts
    "usage-only",  # the empty assistant message whose usage a step shows
    "result",  # a tool call's result
    "pruned",  # the model-facing replacement of a tool result
    "rewrites",  # same-id replacements of a message
    "hooks",
    "approvals",
    "subcalls",  # code-mode sub-calls
    "done",  # a command's `command/done`
    "start",  # a compaction bracket's start
    "summary",  # a compaction's summary
    "checkpoint",  # the checkpoint a /compact marker stands for
    "compaction-attempt",  # a compaction bracket without a checkpoint, on its /compact command
    "started",  # a retry's `llm/retry-started`
    "recall",  # the session recall context a prompt brought along
]


class Row(msgspec.Struct, frozen=True, gc=False):
    """One row of a transcript. (A Struct: a long log's transcript makes thousands, each in a tenth of a frozen
    dataclass's time.)"""

    kind: RowKind
    seq: int  # the anchor: rows sort by it
    key: str
    links: tuple[tuple[LinkName, tuple[int, ...]], ...] = ()  # named groups of other events the row shows
    tail: TailRecord | None = None  # the unreadable record a diagnostic row is about, for its bytes
    # the key of the step the row happened in, as the step index keys it (`turn.step`, `~n` for a
    # repeated pair), so a row links to its own step's model view; None outside any step
    step: str | None = None
    diagnostic: Diagnostic | None = None  # a diagnostic row's finding
    # Why dsh would not load what the row shows (it lies after a defect); None for rows of dsh's view.
    # The diagnostic row that heads a run of such rows carries their reason too, as its note.
    outside: str | None = None
    # The message the row stands for, and which row of that id it is: a log that repeats an id
    # gives its later rows `~2`, `~3` anchors (docs/product.md Interfaces).
    message: str | None = None
    occurrence: int = 1
    # The events the row covers, seqs `seq`.. on: a run of like rows (`RUN_MIN` or more, see `run_rows`) is one
    # row; any other row covers its own event only (the events it links to are counted by their groups).
    count: int = 1

    @property
    def seqs(self) -> range:
        return range(self.seq, self.seq + self.count)

    @property
    def last(self) -> int:
        """The last seq the row covers (a run row's last event; any other row's own)."""
        return self.seq + self.count - 1

    def link(self, name: LinkName) -> tuple[int, ...]:
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

    def splice(self, splice: InboxSplice) -> None:
        if splice.target is None:
            return
        items = self.lists.setdefault(splice.target, [])
        start, removed = splice.start or 0, splice.removed_count or 0
        inserted = [m.get("id") for m in splice.inserted if isinstance(m, dict)]
        gone = items[start : start + removed]
        items[start : start + removed] = [i for i in inserted if isinstance(i, str)]
        if splice.target == "next-step" and splice.outcome != "canceled":
            self.claimed.update(gone)


def is_checkpoint(event: Event) -> bool:
    """A checkpoint's replace of the surface: it becomes a compaction marker (docs/format.md §5.5)."""
    message = event.message
    return (
        event.type == "user/message"
        and isinstance(event.surface_op, dict)
        and message is not None
        and message.is_checkpoint
    )


def appended_kind(source_kind: str, message_id: str, claimed: set[str]) -> RowKind:
    """The row an appended `user/message` becomes (docs/format.md §5.5): a person's prompt, or steering when
    its id was claimed from the `next-step` inbox; any other source is injected context."""
    if source_kind == "user":
        return "steering" if message_id in claimed else "user"
    return "context"


def user_message_kind(event: Event, claimed: set[str]) -> RowKind | None:
    """The row a `user/message` becomes, or None for a model-only copy."""
    message = event.message
    if message is None:
        return None
    if event.surface_op == "append":
        return appended_kind(message.source.kind, message.id, claimed)
    return "compaction" if is_checkpoint(event) else None


class _Lazy:
    """One event as the builder sees it: seq and type at once, the body decoded only if asked."""

    __slots__ = ("_event", "log", "seq", "type")

    def __init__(self, log: ReadableLog, seq: int) -> None:
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
    def payload(self) -> Payload | None:
        return self.event.payload

    @property
    def message(self) -> Any:
        return self.event.message

    @property
    def surface_op(self) -> Any:
        op = self.log.surface_op(self.seq)
        if op is None:
            return self.event.surface_op
        return op if op == "append" else {"op": "replace", "start": op[0], "end": op[1]}

    @property
    def ignorable(self) -> bool:
        return self.seq in self.log.ignorable


@dataclass(slots=True)
class _Draft:
    """A row while the builder still attaches the events it draws on."""

    kind: RowKind
    links: dict[LinkName, list[int]]
    step: str | None
    count: int = 1  # a run of like rows: see `Row.count`


@dataclass(slots=True)
class _Run:
    """Like rows being gathered: their kind, type and outside-ness, the first seq and how many so far."""

    like: tuple[RowKind, str, str | None]
    first: int
    count: int


Handler = Callable[["_Builder", _Lazy], None]


class _Builder:
    """One pass over the events; rows whose parts arrive later are finished at the end."""

    def __init__(self) -> None:
        self.rows: dict[int, _Draft] = {}  # anchor seq → its row
        self.inbox = _Inbox()
        self.calls: dict[str, int] = {}  # callId → tool/call seq (or orphan result seq)
        self.open_call: int | None = None  # the last tool/call of the open step, for hooks
        self.commands: dict[str, int] = {}  # commandId → command/run seq
        self.compactions: dict[str, dict[LinkName, int]] = {}  # compactionId → {start, summary, end}
        self.retries: dict[str, int] = {}  # retryId → llm/retry seq
        self.step_chunks: list[int] = []  # chunks of the current model call
        self.turn_row: int | None = None
        self.step_row: int | None = None
        self.recalls: set[int] = set()
        self.approvals: dict[str, int] = {}  # approval id → the tool row it was attached to
        self.checkpoints: dict[str, int] = {}  # compactionId → the row showing its checkpoint
        self.step_key: str | None = None  # the open step's key; it bounds steps as `call_index` does
        self.step_pairs: dict[tuple[int, int], int] = {}  # (turn, step) → `step/start`s seen so far
        self.run: _Run | None = None  # the rows of no handler's type seen last, while they are alike

    def add(self, kind: RowKind, seq: int, links: Mapping[LinkName, list[int]] | None = None) -> None:
        self.rows[seq] = _Draft(kind, {k: list(v) for k, v in (links or {}).items()}, self.step_key)

    def attach(self, anchor: int | None, name: LinkName, seq: int) -> bool:
        if anchor is None or anchor not in self.rows:
            return False
        self.rows[anchor].links.setdefault(name, []).append(seq)
        return True

    def feed(self, event: _Lazy) -> None:
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            self.end_run()
            handler(self, event)
        else:
            kind: RowKind = "unknown" if event.type not in KNOWN_EVENT_TYPES or event.ignorable else "event"
            self.gather((kind, event.type, event.log.outside(event.seq)), event.seq)

    def gather(self, like: tuple[RowKind, str, str | None], seq: int) -> None:
        """A row no handler places, which no later event links to: gathered with the like rows before it
        (any other event ends a run first, so a run's seqs follow on)."""
        run = self.run
        if run is not None and run.like == like:
            run.count += 1
        else:
            self.end_run()
            self.run = _Run(like, seq, 1)

    def end_run(self) -> None:
        """The gathered rows: one run row when there are `RUN_MIN` of them, else a row each."""
        run, self.run = self.run, None
        if run is None:
            return
        kind = run.like[0]
        if run.count >= RUN_MIN:
            self.rows[run.first] = _Draft(kind, {}, self.step_key, run.count)
        else:
            for seq in range(run.first, run.first + run.count):
                self.add(kind, seq)

    def finish(self) -> None:
        """Give a row to whatever the log ended before placing."""
        self.end_run()
        _flush_stream(self)
        placed = {s for r in self.rows.values() for seqs in r.links.values() for s in seqs} | set(self.rows)
        for bracket in self.compactions.values():
            for seq in bracket.values():
                if seq not in placed:
                    self.add("event", seq)


def _flush_stream(b: _Builder) -> None:
    """Chunks that no assistant/message took: their partial stream gets a row of its own."""
    if b.step_chunks:
        b.add("partial-stream", b.step_chunks[0], {"chunks": b.step_chunks})
        b.step_chunks = []


def _turn_start(b: _Builder, e: _Lazy) -> None:
    _flush_stream(b)
    b.turn_row = e.seq
    b.add("turn", e.seq)


def _turn_end(b: _Builder, e: _Lazy) -> None:
    _flush_stream(b)
    b.step_key = None  # a turn that ended without closing its step closes it here
    reason = payload_as(e.payload, TurnEnd).reason
    kind = reason.kind if reason is not None else None
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
        b.add("assistant-step", e.seq, {"chunks": chunks})
    elif chunks:  # empty content after a stream: show what streamed (and the usage) as a partial stream
        b.add("partial-stream", chunks[0], {"chunks": chunks, "assistant": [e.seq]})
    elif not b.attach(b.step_row, "usage-only", e.seq):  # a max-tokens step hosting only usage
        b.add("event", e.seq)


def _user(b: _Builder, e: _Lazy) -> None:
    kind = e.log.source_kinds.get(e.seq)
    if kind is not None and e.surface_op == "append":  # the common case, read from the scan's facts
        if kind == "session-reference":
            b.recalls.add(e.seq)
        b.add(appended_kind(kind, e.log.message_ids[e.seq], b.inbox.claimed), e.seq)
        return
    row_kind = user_message_kind(e.event, b.inbox.claimed)
    if row_kind == "compaction":
        source = e.message.source if e.message else None
        compaction_id = source.get("compactionId") if source else None
        bracket = b.compactions.get(compaction_id, {}) if isinstance(compaction_id, str) else {}
        command = source.get("sourceCommandId") if source else None
        run = b.commands.get(command) if isinstance(command, str) else None
        if run is not None:  # a manual /compact: its command row becomes the marker (docs/ui.md §5.5)
            b.rows[run].kind = "manual-compaction"
            b.attach(run, "checkpoint", e.seq)
            for name, seq in bracket.items():
                b.attach(run, name, seq)
        else:
            b.add("compaction", e.seq, {name: [seq] for name, seq in bracket.items()})
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
    b.inbox.splice(payload_as(e.payload, InboxSplice))
    b.add("event", e.seq)


def _tool_call(b: _Builder, e: _Lazy) -> None:
    call_id = payload_as(e.payload, ToolCall).call_id
    if call_id is not None:
        b.calls[call_id] = e.seq
    b.open_call = e.seq
    b.add("tool-call", e.seq)


def _tool_result(b: _Builder, e: _Lazy) -> None:
    call_id = e.log.result_calls.get(e.seq)
    call = b.calls.get(call_id) if isinstance(call_id, str) else None
    if e.surface_op != "append":
        original = _original(b, e)
        owner = next((s for s, r in b.rows.items() if original in r.links.get("result", ())), None)
        if not b.attach(owner, "pruned", e.seq):
            b.add("event", e.seq)
        return
    if call is not None and not b.rows[call].links.get("result"):
        b.attach(call, "result", e.seq)
    else:  # a result with no logged call (a synthetic TOOL_NOT_STARTED closer, or a broken log)
        b.add("tool-call", e.seq, {"result": [e.seq]})
        if isinstance(call_id, str):
            b.calls[call_id] = e.seq


def _by_call(name: LinkName) -> Handler:
    """Hooks and approvals belong on the tool row of the call they concern."""

    def handle(b: _Builder, e: _Lazy) -> None:
        payload = e.payload
        call_id = payload.call_id if isinstance(payload, ApprovalAsked | Hook) else None
        approval_id = payload.id if isinstance(payload, ApprovalAsked | ApprovalDecided) else None
        target = b.calls.get(call_id) if call_id is not None else None
        if target is None and isinstance(payload, ApprovalDecided) and approval_id is not None:
            target = b.approvals.get(approval_id)
        if target is None and isinstance(payload, Hook) and payload.point in ("PreToolUse", "PostToolUse"):
            target = b.open_call  # hooks name no call: a tool hook runs around the step's latest call
        if target is None or not b.attach(target, name, e.seq):
            b.add("event", e.seq)
            return
        if approval_id is not None:
            b.approvals[approval_id] = target

    return handle


def _code_dispatch(b: _Builder, e: _Lazy) -> None:
    dispatch = payload_as(e.payload, CodeDispatch)
    target = b.calls.get(dispatch.parent_call_id) if dispatch.parent_call_id is not None else None
    if target is None and dispatch.root_call_id is not None:
        target = b.calls.get(dispatch.root_call_id)
    if not b.attach(target, "subcalls", e.seq):
        b.add("event", e.seq)


def _command_run(b: _Builder, e: _Lazy) -> None:
    command_id = payload_as(e.payload, CommandRun).command_id
    if command_id is not None:
        b.commands[command_id] = e.seq
    b.add("command", e.seq)


def _command_done(b: _Builder, e: _Lazy) -> None:
    command_id = payload_as(e.payload, CommandDone).command_id
    if not b.attach(b.commands.get(command_id) if command_id is not None else None, "done", e.seq):
        b.add("event", e.seq)


def _compaction(part: LinkName) -> Handler:
    """The bracket around a checkpoint; an attempt without one joins its /compact command."""

    def handle(b: _Builder, e: _Lazy) -> None:
        compaction = payload_as(e.payload, Compaction)
        compaction_id = compaction.compaction_id
        if compaction_id is None:
            b.add("event", e.seq)
            return
        bracket = b.compactions.setdefault(compaction_id, {})
        bracket[part] = e.seq
        if part != "end":
            return
        if b.attach(b.checkpoints.get(compaction_id), "end", e.seq):
            return
        command = compaction.source_command_id
        run = b.commands.get(command) if command is not None else None
        for seq in bracket.values():
            if not b.attach(run, "compaction-attempt", seq):
                b.add("event", seq)

    return handle


def _retry(b: _Builder, e: _Lazy) -> None:
    chunks, b.step_chunks = b.step_chunks, []  # the failed attempt's stream
    retry_id = payload_as(e.payload, Retry).retry_id
    if retry_id is not None:
        b.retries[retry_id] = e.seq
    b.add("model-retry", e.seq, {"chunks": chunks})


def _retry_started(b: _Builder, e: _Lazy) -> None:
    retry_id = payload_as(e.payload, Retry).retry_id
    if not b.attach(b.retries.get(retry_id) if retry_id is not None else None, "started", e.seq):
        b.add("event", e.seq)


_HANDLERS: Mapping[str, Handler] = {
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

REPEATED_ID = "repeated-message-id"
QUOTED_ID = 80  # characters of a repeated id its warning quotes: an id may be as long as a log line


def transcript_rows(log: SessionLog) -> tuple[ReadableLog, list[Row]]:
    """Every row of a session in order, and the readable log its rows read their events from.

    dsh's view comes first, in anchor order; then the readable events of records dsh would
    drop after a defect, as rows marked `outside`; and every diagnostic as a row where its
    location lies, so nothing the file holds is lost and a page counts what it shows.
    """
    readable = readable_log(log)
    messages = _Messages(readable)
    rows = _rows(_build(readable, range(log.event_count)), messages, lambda seq: None)
    rows += _rows(
        _build(readable, range(log.event_count, readable.event_count)),
        messages,
        lambda seq: readable.outside(seq) or "",
    )
    found = [(readable.place_of(d.location), d) for d in (*log.diagnostics, *_unreported(readable))]
    return readable, _with_diagnostics(rows, found + messages.warnings, log)


def _build(log: ReadableLog, seqs: range) -> _Builder:
    builder = _Builder()
    for seq in seqs:
        builder.feed(_Lazy(log, seq))
    builder.finish()
    return builder


def _rows(builder: _Builder, messages: _Messages, outside: Callable[[int], str | None]) -> list[Row]:
    rows = []
    for seq in sorted(builder.rows):
        spec = builder.rows.pop(seq)  # each draft let go as its row is made: a long log's drafts weigh as much
        links = tuple((k, tuple(v)) for k, v in spec.links.items() if v)
        kind = spec.kind
        if kind in ("user", "steering") and seq + 1 in builder.recalls:
            links += (("recall", (seq + 1,)),)
        why = outside(seq)
        if spec.count > 1:
            rows.append(_run_row(kind, seq, spec.count, why))
            continue
        message, n = messages.of(kind, seq, links)
        step = spec.step if kind in STEP_KINDS else None
        rows.append(Row(kind, seq, _key(seq, why), links, step=step, outside=why, message=message, occurrence=n))
    return rows


def _key(seq: int, outside: str | None) -> str:
    """The key of the row of event `seq`: `seq-N` in dsh's view, `outside-N` past it (`outside` always says
    why); a run row's names its last seq too (`_run_row`)."""
    return f"{'seq' if outside is None else 'outside'}-{seq}"


def _run_row(kind: RowKind, first: int, count: int, outside: str | None) -> Row:
    """One row for `count` like rows from seq `first` on; its key names the seqs it covers (`seq-5-900`)."""
    run = Row(kind, first, "", outside=outside, count=count)
    return replace(run, key=f"{_key(first, outside)}-{run.last}")


def run_rows(row: Row, start: int = 0, stop: int | None = None) -> list[Row]:
    """Rows `start` to `stop` of run row `row`, each the row its event would be on its own."""
    return list(_inner_rows(row, row.seqs[start:stop]))


def _inner_rows(row: Row, seqs: range) -> Iterator[Row]:
    for seq in seqs:
        yield Row(row.kind, seq, _key(seq, row.outside), outside=row.outside)


def each_row(rows: Iterable[Row]) -> Iterator[Row]:
    """`rows` with each run row's rows in its place: a row per event, as a log without runs has them
    (made one at a time: a run's rows are never all held at once)."""
    for row in rows:
        if row.count == 1:
            yield row
        else:
            yield from _inner_rows(row, row.seqs)


def _pieces(row: Row, places: list[int]) -> list[Row]:
    """A run row split where findings lie inside it, so each shows in its place; a piece shorter than
    `RUN_MIN` is its rows."""
    lo, hi = bisect_right(places, row.seq), bisect_left(places, row.seq + row.count)
    if lo == hi:
        return [row]
    out: list[Row] = []
    for a, b in pairwise([row.seq, *places[lo:hi], row.seq + row.count]):
        long = b - a >= RUN_MIN
        out.extend([_run_row(row.kind, a, b - a, row.outside)] if long else run_rows(row, a - row.seq, b - row.seq))
    return out


class _Messages:
    """The message each row stands for, in row order; a later row of an id already shown is its
    `~n`, with a warning placed right before it."""

    def __init__(self, log: ReadableLog) -> None:
        self.log = log
        self.seen: dict[str, int] = {}
        self.warnings: list[tuple[int, Diagnostic]] = []

    def of(
        self, kind: RowKind, seq: int, links: tuple[tuple[LinkName, tuple[int, ...]], ...]
    ) -> tuple[str | None, int]:
        if kind in OWN_MESSAGE_KINDS:
            carrier: int | None = seq
        else:
            wanted = LINKED_MESSAGE.get(kind)
            carrier = next((seqs[0] for name, seqs in links if name == wanted), None)
        message = self.log.message_ids.get(carrier) if carrier is not None else None
        if message is None or carrier is None:
            return None, 1
        n = self.seen[message] = self.seen.get(message, 0) + 1
        if n > 1:
            self.warnings.append(
                (
                    seq,
                    Diagnostic(
                        REPEATED_ID,
                        "warning",
                        f"message id {one_line(repr(message), QUOTED_ID)} repeats the id of an earlier message "
                        f"row: this row anchors at {message_anchor(message, n)}",
                        self.log.location_of(carrier),
                    ),
                )
            )
        return message, n


def _with_diagnostics(rows: list[Row], found: list[tuple[int, Diagnostic]], log: SessionLog) -> list[Row]:
    """`rows` with a row for each diagnostic, just before the first row anchored at or after its place."""
    records = {t.location: t for t in log.tail if t.kind != "dropped"}
    places = sorted({place for place, _ in found})
    rows = [piece for row in rows for piece in (_pieces(row, places) if row.count > 1 else (row,))]
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


def _unreported(readable: ReadableLog) -> list[Diagnostic]:
    """Findings for records outside dsh's view that no reader diagnostic covers: a row each, so
    none is dropped silently (a SQLite row after a torn tail, a dropped record that no longer reads)."""
    log = readable.log
    covered = {d.location for d in log.diagnostics}
    failed = readable.unreadable
    out = []
    for t in log.tail:
        if t.kind == "dropped" and t.location in failed:
            out.append(
                Diagnostic(
                    "defect", "error", f"a record dsh drops does not read again: {failed[t.location]}", t.location
                )
            )
        elif t.kind != "dropped" and t.location not in covered:
            severity: Severity = "info" if t.kind == "pending" else "error"
            out.append(
                Diagnostic(
                    "pending-line" if t.kind == "pending" else "defect",
                    severity,
                    t.reason or "unreadable record",
                    t.location,
                )
            )
    return out
