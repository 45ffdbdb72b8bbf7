"""The verdict pipeline: one streaming pass runs every rule of docs/format.md §4.5 and §5 over each event, in
dsh's stage order, and writes a `SessionLog`'s index, keeping only what later views need to find any event again
(where its record lies, its type, its message id); a growing log is read on from where the pass stopped.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Generator, Iterator
from itertools import islice, repeat
from typing import Any

from msgspec import UNSET

from ..log.diagnostics import FINDINGS_LISTED, Diagnostic, Findings, Location
from ..log.jsonl import parse_json_line
from ..log.jsonvalues import MAX_SAFE_INTEGER
from ..log.plaintext import DEFAULT_LIMITS, OVER_LIMIT, LineTooLong, ReadLimits
from ..log.records import EventRun, HeaderlessLog, NotASessionLog, Record, RepeatedLines
from ..log.sources import (
    JsonlSessionScan,
    SessionSource,
    identity_problem,
    open_scan,
)
from ..log.sqlite_store import StoreRefused
from ..model.payloads import InboxSplice, SessionTitle, decode_payload, payload_as
from ..model.rules import (
    KNOWN_EVENT_TYPES,
    LEGACY_TYPES,
    SURFACE_TYPES,
    UPGRADED_TYPES,
    UpgradeError,
    envelope_problem,
    header_problem,
    header_unsupported,
    is_placeholder,
    is_unknown_type,
    legacy_vocabulary_problem,
    message_of,
    message_problem,
    message_shape_problem,
    request_header_problem,
    turn_is_current,
    unknown_type_message,
    upgrade_event,
)
from ..model.values import Header
from ..model.verdict_views import (
    AssistantMessage,
    Chunk,
    StepEnd,
    StepStart,
    Surface,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnStart,
    UserMessage,
    verdict_views,
)
from ..model.verdict_views import InboxSplice as Spliced
from .closers import ABSENT, TRACKED_TYPES, CrashTracker
from .invariants import NONE, WATCHED_TYPES, InvariantChecker
from .session import (
    Carrier,
    Category,
    SessionLog,
    TailRecord,
    Verdict,
)
from .surface import SurfaceFold

# Pipeline stages in dsh's order (docs/format.md §4.5, §5.1); the verdict is the
# first failure of the earliest stage, as dsh stops at the first stage that throws.
_STAGES: tuple[tuple[str, Category], ...] = (
    ("version", "unsupported"),
    ("header", "refused"),
    # a line or a session's text over a limit (`ReadLimits`): not read, so this reader cannot say what dsh would
    ("limit", "unsupported"),
    ("storage", "refused"),
    ("identity", "refused"),
    ("legacy-vocabulary", "refused"),
    ("upgrade", "refused"),
    ("message-shape", "refused"),
    ("unknown-type", "unsupported"),
    ("closers", "refused"),
    ("validation", "refused"),
)
_STAGE_INDEX = {name: i for i, (name, _) in enumerate(_STAGES)}

# Known types that no legacy rule, upgrade or message-shape rule looks at: under a plain envelope
# (see `Reader._take_indexed`) every rule of docs/format.md §4.5 passes them as written.
_PLAIN_TYPES = KNOWN_EVENT_TYPES - LEGACY_TYPES - UPGRADED_TYPES - SURFACE_TYPES
# Known types an upgrade changes only in a legacy shape: plain as well when the upgrade leaves them be.
_UPGRADABLE_PLAIN_TYPES = (UPGRADED_TYPES - SURFACE_TYPES) & KNOWN_EVENT_TYPES
# One string object per known type, for the index to hold: not each event's own copy, which would
# keep every event's type string alive, and make the cycle collector's walks of the index touch each.
_KINDS = {kind: kind for kind in KNOWN_EVENT_TYPES}
_CHUNK = _KINDS["assistant/chunk"]
_STEP_START, _STEP_END = _KINDS["step/start"], _KINDS["step/end"]
_TURN_START, _TURN_END, _TOOL_CALL = _KINDS["turn/start"], _KINDS["turn/end"], _KINDS["tool/call"]
_INBOX, _USER_MESSAGE = _KINDS["agent/inbox/spliced"], _KINDS["user/message"]
_ASSISTANT_MESSAGE, _TOOL_RESULT = _KINDS["assistant/message"], _KINDS["tool/result"]
# the types some rule reads an event of: a copy of any other line moves on nothing but the index and findings
_RULED_TYPES = KNOWN_EVENT_TYPES | LEGACY_TYPES | UPGRADED_TYPES


class Reader:
    """The pass behind `load_session`, kept alive so a growing log is read on from where it stopped."""

    def __init__(self, source: SessionSource, limits: ReadLimits = DEFAULT_LIMITS, keep_bytes: int = 0) -> None:
        self.source = source
        self.limits = limits
        self.keep_bytes = keep_bytes  # the records read whose events the log keeps as parsed (`SessionLog._kept`)
        self.failures: dict[int, tuple[str, Location | None]] = {}
        self.diagnostics = Findings()
        self.scan_repairs: list[str] = []
        self.fold = SurfaceFold()
        self.tracker = CrashTracker()
        self.invariants = InvariantChecker()
        self.last_time = 0
        # the log being read, held only while reading: a log holds its reader, and a reader that held its
        # log for good would make a cycle only the cycle collector frees (slowly, and at any later moment)
        self.log: SessionLog | None = None
        self.sid = ""

    def fail(
        self, stage: str, reason: str | Callable[[], str], location: Location | None, *, code: str | None = None
    ) -> None:
        """A finding that fails `stage`. `reason` may be a function that words it, asked only if the finding
        is listed or is the stage's first: past the findings listed, a million lines would each be worded in
        vain."""
        index, code = _STAGE_INDEX[stage], code or stage
        where = location or Location(file=self.source.label)
        if index in self.failures and not self.diagnostics.listing(code):
            self.diagnostics.count_one(code, where)
            return
        text = reason if isinstance(reason, str) else reason()
        self.failures.setdefault(index, (text, location))
        self.diagnostics.append(Diagnostic(code, "error", text, where))

    def verdict(self, repairs: list[str]) -> Verdict:
        if self.failures:
            index = min(self.failures)
            reason, location = self.failures[index]
            return Verdict(_STAGES[index][1], reason, location)  # a log dsh refuses, it repairs nothing
        if repairs:
            return Verdict("repaired", "; ".join(repairs), None, tuple(repairs))
        return Verdict("accepted", "dsh would load this log as it is")

    def read(self, events: int | None = None) -> SessionLog:
        source = self.source
        try:
            scan = open_scan(source, limits=self.limits)
            header_raw = scan.read_header()
        except StoreRefused as exc:
            self.fail("version" if exc.unsupported else "header", exc.reason, Location(file=source.label))
            return SessionLog(source, "sqlite", None, self.verdict([]), self.diagnostics)
        except NotASessionLog:
            raise
        except HeaderlessLog as exc:
            self.fail("header", exc.reason, exc.location, code="bad-header")
            return SessionLog(source, _carrier(source, "artifact"), None, self.verdict([]), self.diagnostics)
        except LineTooLong as exc:
            self.fail("limit", str(exc), Location(file=source.label, line=1, offset=0), code="line-too-long")
            return SessionLog(source, _carrier(source, "artifact"), None, self.verdict([]), self.diagnostics)
        except (OSError, ValueError) as exc:
            self.fail("storage", f"cannot read: {exc}", Location(file=source.label))
            return SessionLog(source, _carrier(source, "artifact"), None, self.verdict([]), self.diagnostics)
        lenient = scan.mode == "fixture"
        header = Header.of(header_raw)
        hloc = getattr(scan, "header_location", Location(file=source.label, line=1, offset=0))
        problem = header_unsupported(header_raw, lenient=lenient)
        if problem:
            self.fail("version", problem, hloc, code="unsupported-version")
        problem = header_problem(header_raw, lenient=lenient, sqlite=source.kind == "sqlite")
        if problem:
            self.fail("header", problem, hloc, code="bad-header")
        for extra in getattr(scan, "header_problems", ()):
            self.fail("header", extra, hloc, code="bad-header")
        cwd = header_raw.get("cwd")
        if not lenient and isinstance(cwd, str) and is_placeholder(cwd):
            self.diagnostics.append(
                Diagnostic(
                    "placeholder-cwd",
                    "warning",
                    f"header cwd {cwd!r} is a snapshot placeholder, not a path: dsh reads the log, but a dsh "
                    "root could not place it in a project folder",
                    hloc,
                )
            )
        problem = None if lenient else identity_problem(source, header_raw)
        if problem:
            self.fail("identity", problem, Location(file=source.label), code="identity")
        log = SessionLog(source, _carrier(source, scan.mode), header, Verdict("accepted", ""), self.diagnostics, scan)
        if self.limits.max_line_bytes < 1 << 32:  # no record read is longer: its length takes 4 bytes, not 8
            log._rec_length = array("I")
        log._reader = self
        if self.keep_bytes > 0 and isinstance(scan, JsonlSessionScan):  # where a record's place is its text's
            log._kept = []
        elif isinstance(scan, JsonlSessionScan):  # a log that keeps no event: the rules read views of them
            scan.views = verdict_views
        self.sid = header.id or ""
        self.log = log
        try:
            self._consume(scan.runs(), events)
        finally:
            self.log = None
        return log

    def extend(self, log: SessionLog) -> bool:
        """Read what was appended to `log` since; False when only a fresh read can be trusted."""
        scan = log._scan
        if (
            log.partial
            or not isinstance(scan, JsonlSessionScan)  # a SQLite store is read whole again
            or self.failures
            or any(t.kind != "pending" for t in log._tail)
            or not scan.has_event_lines  # a header-only log's mode is not settled
        ):
            return False
        self.log = log
        log._kept = None  # kept for one read through, not for every read on
        try:
            self._drop_closers()
            log._tail.clear()
            self.diagnostics.drop(("pending-line", "torn-frame"))
            self.scan_repairs.clear()
            self._consume(scan.resume())
        finally:
            self.log = None
        return True

    def _consume(self, items: Iterator[Record | EventRun | RepeatedLines], limit: int | None = None) -> None:
        log = self.log
        assert log is not None and log._scan is not None
        scan = log._scan
        counted: tuple[bytes, dict[str, int]] | None = None  # the line last counted copies of, and what each said
        for item in items:  # (`log._types` asked anew each time: counted copies make it `Repeating`)
            if type(item) is RepeatedLines:
                copies = item if limit is None else item.prefix(max(limit - len(log._types), 1))
                saying = self._take_copies(copies, counted[1] if counted and counted[0] == copies.raw else None)
                counted = None if saying is None else (copies.raw, saying)
            elif type(item) is EventRun:
                counted = None
                # as line by line: a first screen stops at the line that reaches its count
                self._take_run(item if limit is None else item.prefix(max(limit - len(log._types), 1)))
            elif item.kind == "events":
                counted = None
                self._take_record(item)
            else:
                counted = None
                first = item.events[0].get("seq") if item.events else None
                log._tail.append(
                    TailRecord(
                        item.kind,
                        item.location,
                        item.reason,
                        item.raw,
                        item.start,
                        item.length,
                        first if isinstance(first, int) else None,
                    )
                )
            if limit is not None and len(log._types) >= limit:
                break
        if isinstance(items, Generator):  # as every scan's is
            items.close()  # a scan stopped early still makes its closing checks before its state is read
        # counted from the index, not event by event (crash closers start neither a turn nor a step)
        log.turns, log.steps = log._types.count("turn/start"), log._types.count("step/start")
        if scan.state.corruption is not None:
            c = scan.state.corruption
            stage = "limit" if c.code in OVER_LIMIT else "storage"
            self.failures.setdefault(_STAGE_INDEX[stage], (c.message, c.location))
        self.diagnostics.extend(scan.state.diagnostics)
        self.diagnostics.settle()
        self.scan_repairs = list(scan.state.repairs)
        if limit is not None and len(log._types) >= limit:
            log.partial = True  # a first screen's prefix: no closers, no verdict yet
            return
        self._close()

    def _take_run(self, run: EventRun) -> None:
        """A run of one-event lines: each line is a record of its own."""
        log = self.log
        assert log is not None
        first, rec, n = len(log._types), len(log._rec_start), len(run.events)
        # (`fromlist`: an array converts each item once, where `extend` converts it twice)
        log._rec_start.fromlist(run.offsets)
        log._rec_length.fromlist(run.lengths)
        log._event_record.fromlist(list(range(rec, rec + n)))
        if run.lines is not None:  # views (an artifact's run, which keeps no event): the scan checked each seq
            self._take_views(run.events, run.location, run.lines)
            self._note_time(run.events)
            return
        self._keep(run.events, run.end)
        # each seq its index and each type a string: the scan checked an artifact's run; a fixture's is checked here
        if run.events[0]["seq"] == first and (run.indexed or _indexed(run.events, first)):
            self._take_indexed(run.events, run.location)
        else:
            self._take_each(run.events, run.location)
        self._note_time(run.events)

    def _take_record(self, record: Record) -> None:
        """A record read on its own: one line, a packed row of several events, or a SQLite row."""
        log = self.log
        assert log is not None
        rec, events = len(log._rec_start), record.events
        log._rec_start.append(record.start)
        log._rec_length.append(record.length)
        log._event_record.extend(repeat(rec, len(events)))
        self._keep(events, record.start + record.length)
        if _indexed(events, len(log._types)):
            self._take_indexed(events, lambda i: record.location)
        else:
            self._take_each(events, lambda i: record.location)
        self._note_time(events)

    def _take_copies(self, copies: RepeatedLines, counted: dict[str, int] | None) -> dict[str, int] | None:
        """Copies of the line just read, each a record of its own. Each goes through every rule until one
        says only what the copy before it said, all of it past the findings listed; then, if no rule reads
        an event of its type (no running fact moves on), the rest say it too, counted at once. Copies that
        go on from copies just counted (each saying `counted`) are counted at once. Returns what each copy
        counted said, or None if they were read one by one."""
        if counted is not None:
            self._count_copies(copies, 0, counted)
            return counted
        findings = self.diagnostics
        said: dict[str, int] | None = None
        for i, record in enumerate(copies.records()):
            before = findings.counts()
            self._take_record(record)
            after = findings.counts()
            saying = {code: n - before.get(code, 0) for code, n in after.items() if n != before.get(code, 0)}
            if saying == said and all(after[code] > FINDINGS_LISTED for code in saying):
                kind = record.events[0].get("type")
                if (type(kind) is not str or kind not in _RULED_TYPES) and record.events[0].get(
                    "ignorable"
                ) is not True:
                    self._count_copies(copies, i + 1, saying)
                    return saying
            said = saying
        return None

    def _count_copies(self, copies: RepeatedLines, taken: int, saying: dict[str, int]) -> None:
        """The copies from the `taken`-th on, into the index, each saying `saying` (code → findings)."""
        log = self.log
        assert log is not None
        records = islice(copies.records(), taken, None)
        while log._kept is not None and taken < copies.count:  # a kept event is a parsed one: read while kept
            self._take_record(next(records))
            taken += 1
        n, stride = copies.count - taken, copies.stride
        if n <= 0:
            return
        start, rec = copies.offset + taken * stride, len(log._rec_start)
        types, by_event, starts, lengths = log._repeating()
        first = len(types)
        if log._copies and sum(log._copies[-1]) == first:  # the last batch's copies go on
            log._copies[-1] = (log._copies[-1][0], log._copies[-1][1] + n)
        else:
            log._copies.append((first, n))
        starts.add_run(start, stride, n)
        lengths.add_run(copies.length, None, n)
        by_event.add_run(rec, 1, n)
        types.add_run(types[-1], None, n)
        for code, each in saying.items():
            self.diagnostics.count_more(code, each * n)

    def _keep(self, events: list[dict[str, Any]], end: int) -> None:
        """Keep `events` as parsed (their records end at byte `end` of the log's text) while the log's records
        stay within `keep_bytes`."""
        log = self.log
        assert log is not None
        if log._kept is None:
            return
        if end > self.keep_bytes:
            log._kept = None
        else:
            log._kept.extend(events)

    def _note_time(self, events: list[Any]) -> None:
        """The time of the last event read with an integer one: crash closers are stamped with it."""
        for event in reversed(events):
            if type(event) is not dict:  # a view: its time is an integer
                self.last_time = event.time
                return
            if isinstance(event.get("time"), int):
                self.last_time = event["time"]
                return

    def _take_each(self, events: list[dict[str, Any]], where: Callable[[int], Location]) -> None:
        """Events of any shape, each through every rule; `where(i)` locates the i-th."""
        for i, event in enumerate(events):
            self._take(event, where(i), self.fold, synthetic=False)

    def _take_indexed(self, events: list[dict[str, Any]], where: Callable[[int], Location]) -> None:
        """Events whose seqs are their indexes (ints) and whose types are strings; `where(i)` locates the i-th.

        Nearly every event is plain: type, seq, time (a safe integer) and data and nothing else, of a
        type no rule but the envelope's looks at; or a current surface event (see `_current_message`).
        Either passes every rule as it is, so only what it moves on is done here, with the rules'
        cheapest tests first; any other event goes through `_take` and the rules themselves.
        """
        log = self.log
        assert log is not None
        types, fold, invariants = log._types, self.fold, self.invariants
        append, follow = types.append, self._follow
        for i, event in enumerate(events):
            kind = event["type"]
            time = event.get("time")
            if type(time) is not int or abs(time) > MAX_SAFE_INTEGER or "data" not in event:
                self._take(event, where(i), fold, synthetic=False)  # an envelope for the rules to judge
                continue
            data = event["data"]
            if len(event) == 4:
                if kind == "assistant/chunk":  # half of a typical log: no index or tracking facts to keep
                    append(_KINDS[kind])
                    # the invariants' common case, asked without a call: a chunk of the open turn and step
                    quiet = (
                        type(data) is dict
                        and data.get("turn") == invariants.turn
                        and data.get("step") == invariants.step
                    )
                    if not quiet and (warnings := invariants.check(kind, data if type(data) is dict else {}, None)):
                        self._warn(warnings, where(i))
                    continue
                if kind in _PLAIN_TYPES or (kind in _UPGRADABLE_PLAIN_TYPES and self._upgrade_keeps(event)):
                    append(_KINDS[kind])
                    if kind == "agent/inbox/spliced":
                        self._index_inbox(data, len(types) - 1)
                    if warnings := follow(kind, data, event["seq"], None, where, i):
                        self._warn(warnings, where(i))
                    continue
            elif kind in SURFACE_TYPES and (message := _current_message(event, kind, len(types))) is not None:
                self._append_message(kind, data, message, where, i)
                continue
            self._take(event, where(i), fold, synthetic=False)

    def _append_message(
        self, kind: str, data: Any, message: dict[str, Any], where: Callable[[int], Location], i: int
    ) -> None:
        """A current surface event (see `_current_message`; its data `data`, its message `message`) appended:
        into the index, onto the surface, and followed."""
        log = self.log
        assert log is not None
        seq = len(log._types)
        log._types.append(_KINDS[kind])
        self._index_message(kind, seq, message)
        self.fold.append(seq)
        log._surface_ops[seq] = "append"
        if warnings := self._follow(kind, data, seq, "append", where, i):
            self._warn(warnings, where(i))

    def _take_views(self, events: list[Any], where: Callable[[int], Location], lines: list[bytes]) -> None:
        """`_take_indexed` of events each a view (`model.verdict_views`) of the event `lines[i]` holds, or a dict
        where the line has none. A view is in the shape dsh writes (its envelope plain, its time a safe integer,
        a message well formed).

        Most events of a log move the crash tracker and the invariants on as a writer moves them: a step that
        follows the last, in the open turn; a call, a reply or a result in the open step. Such a view is taken
        here, each fact set as `CrashTracker.follow` and `InvariantChecker.check` set it where they have nothing
        to say (docs/decisions/0041-view-fast-paths.md). Any other view, one that a rule must judge, has its line
        parsed whole, for `_take_indexed` and the rules themselves."""
        log = self.log
        assert log is not None
        types, fold, invariants, tracker, carriers = log._types, self.fold, self.invariants, self.tracker, log._carriers
        append, pending, surface_ops, message_ids = types.append, tracker.pending, log._surface_ops, log._message_ids
        for i, event in enumerate(events):
            cls = type(event)
            if cls is Chunk:  # half of a typical log: no index or tracking facts to keep
                append(_CHUNK)
                # the invariants' common case, asked without a call: a chunk of the open turn and step
                data = event.data
                if data.turn != invariants.turn or data.step != invariants.step:
                    said = {"turn": data.turn, "step": data.step}  # (absent or null alike: read by `get`)
                    if warnings := invariants.check(_CHUNK, said, None):
                        self._warn(warnings, where(i))
                continue
            if cls is dict:
                self._take_indexed([event], _at(where, i))
                continue
            data, seq = event.data, len(types)
            if cls is StepStart:  # the step after the last, in the open turn, none open
                if invariants.turn is not None and invariants.step is None and data.step == invariants.last_step + 1:
                    append(_STEP_START)
                    if data.turn is not None and 0 <= data.turn < 1 << 32 and 0 <= data.step < 1 << 32:
                        log._step_seqs.append(seq)
                        log._step_pairs.append(data.turn << 32 | data.step)
                    tracker.step = invariants.step = invariants.last_step = data.step
                    continue
            elif cls is StepEnd:  # the tracker and the invariants say nothing of any step end
                append(_STEP_END)
                tracker.step = invariants.step = None
                pending.clear()
                continue
            elif cls is ToolCall:  # a call of the open step
                if data.turn == invariants.turn and data.step == invariants.step:
                    append(_TOOL_CALL)
                    invariants.calls.add((data.turn, data.step, data.callId))  # (`_call_key` of ints, None, str)
                    if data.callId is not None and (called := pending.get(data.callId)) is not None:
                        called.call_seq = seq
                    continue
            elif cls is Spliced:  # no rule follows an inbox splice; its messages carry their ids
                append(_INBOX)
                for inserted in data.inserted:
                    if inserted.id is not None:
                        carriers.setdefault(inserted.id, []).append(~seq)
                continue
            elif cls is TurnStart:  # the turn after the last, none open, in today's shape
                turn, last = data.turn, invariants.last_turn
                if (
                    turn is not None
                    and invariants.turn is None
                    and (turn == last + 1 or not last)
                    and data.trigger is UNSET
                ):
                    append(_TURN_START)
                    tracker.turn = invariants.turn = invariants.last_turn = turn
                    tracker.step = invariants.step = None
                    invariants.last_step = 0
                    pending.clear()
                    continue
            elif cls is TurnEnd:  # the open turn's end, in today's shape
                if invariants.turn is not None and turn_is_current(_TURN_END, data):
                    append(_TURN_END)
                    tracker.turn = tracker.step = invariants.turn = invariants.step = None
                    pending.clear()
                    continue
            elif cls is UserMessage:  # neither the tracker nor the invariants follow a prompt
                if _cites_nothing_later(event, seq):
                    append(_USER_MESSAGE)
                    message_ids[seq] = data.id
                    carriers.setdefault(data.id, []).append(seq)
                    log._source_kinds[seq] = data.source.kind
                    fold.append(seq)
                    surface_ops[seq] = "append"
                    continue
            elif cls is AssistantMessage:  # a reply of the open step: its tool calls pending
                if (
                    data.step is not None
                    and data.turn == invariants.turn
                    and data.step == invariants.step
                    and _cites_nothing_later(event, seq)
                ):
                    append(_ASSISTANT_MESSAGE)
                    message = data.message
                    message_ids[seq] = message.id
                    carriers.setdefault(message.id, []).append(seq)
                    if not message.content:
                        log._empty_assistant.add(seq)
                    fold.append(seq)
                    surface_ops[seq] = "append"
                    for block in message.content:
                        if block.type == "tool-call" and block.id is not None:
                            tracker.call(block.id, data.step)
                    continue
            elif cls is ToolResult:  # the result of a call of the open step
                message = data.message
                call = message.source.callId
                if (
                    message.content[0].toolCallId == call
                    and data.turn == invariants.turn
                    and data.step == invariants.step
                    and (data.turn, data.step, call) in invariants.calls
                    and _cites_nothing_later(event, seq)
                ):
                    append(_TOOL_RESULT)
                    message_ids[seq] = message.id
                    carriers.setdefault(message.id, []).append(seq)
                    log._result_calls[seq] = call
                    fold.append(seq)
                    surface_ops[seq] = "append"
                    pending.pop(call, None)
                    continue
            self._take_indexed([_whole(lines[i])], _at(where, i))  # for the rules to judge

    def _upgrade_keeps(self, event: dict[str, Any]) -> bool:
        """Whether the legacy upgrade leaves `event` as it is (as it does every current one)."""
        if turn_is_current(event["type"], event["data"]):
            return True
        try:
            return upgrade_event(event, self.sid, self._message_id_at) is event
        except UpgradeError:
            return False

    def _warn(self, warnings: list[str], location: Location) -> None:
        self.diagnostics.extend(Diagnostic("invariant", "warning", w, location) for w in warnings)

    def _close(self) -> None:
        """Crash closers for an open final turn, in memory only, folded on a copy of the surface."""
        log = self.log
        assert log is not None
        surface = self.fold
        if self.tracker.open:
            surface = self.fold.copy()
            for event in self.tracker.closers(len(log._types), self.last_time):
                log._synthetic.append(event)
                self._take(event, Location(file=self.source.label), surface, synthetic=True)
        log._surface = list(surface.nodes)
        repairs = list(self.scan_repairs)
        if log._synthetic:
            names = ", ".join(e["type"] for e in log._synthetic)
            repairs.append(
                f"closed the open final turn in memory with {len(log._synthetic)} synthetic event(s): {names}"
            )
        log.verdict = self.verdict(repairs)

    def _drop_closers(self) -> None:
        log = self.log
        assert log is not None
        for event in log._synthetic:
            seq = event["seq"]
            for index in (log._message_ids, log._source_kinds, log._result_calls, log._surface_ops, log._shadowed_by):
                index.pop(seq, None)
            for entries in log._carriers.values():
                entries[:] = [s for s in entries if s != seq]  # (closers carry no inbox)
            log._ignorable.discard(seq)
        del log._types[len(log._event_record) :]
        log._synthetic.clear()

    def _take(self, event: dict[str, Any], location: Location, fold: SurfaceFold, *, synthetic: bool) -> None:
        """One event through every rule of docs/format.md §4.5 and §5, in dsh's order, then into the index."""
        log = self.log
        assert log is not None
        types = log._types
        seq = len(types)
        kind = event.get("type")
        if not isinstance(kind, str):
            kind = None  # the envelope rule refuses it below; a list or object must not reach a set lookup
        if kind in LEGACY_TYPES:
            problem = legacy_vocabulary_problem(event)
            if problem:
                self.fail("legacy-vocabulary", problem, location)
        if kind in UPGRADED_TYPES:
            try:
                event = upgrade_event(event, self.sid, self._message_id_at)
            except UpgradeError as exc:
                self.fail("upgrade", str(exc), location)
            kind = event.get("type") if isinstance(event.get("type"), str) else None
        shape = message_shape_problem(event)
        if shape:
            self.fail("message-shape", shape, location)
        if kind not in KNOWN_EVENT_TYPES and is_unknown_type(event):
            self.fail("unknown-type", lambda: unknown_type_message(event, self.sid), location, code="unknown-type")
        envelope = envelope_problem(event)
        if envelope is None and event.get("seq") != seq:
            envelope = f"event seq {event.get('seq')!r} is not its index {seq}"
        if envelope is None and kind == "request/header":
            envelope = request_header_problem(event.get("data"))
        if envelope:
            self.fail("validation", envelope, location)
        types.append(_KINDS.get(kind, kind) if isinstance(kind, str) else "")
        if event.get("ignorable") is True:  # (the fast paths take no event with more than their own keys)
            log._ignorable.add(seq)
        if kind in SURFACE_TYPES and shape is None:
            self._index_message(kind, seq, message_of(event))
            if envelope is None:
                self._fold(event, seq, fold, location)
        elif kind == "agent/inbox/spliced":
            self._index_inbox(event.get("data"), seq)
        if synthetic:
            return  # closers change no running state: the next read may append real events instead
        data = event.get("data", ABSENT)
        if warnings := self._follow(kind, data, event.get("seq"), event.get("surfaceOp"), lambda _: location, 0):
            self._warn(warnings, location)

    def _index_message(self, kind: str, seq: int, message: dict[str, Any]) -> None:
        """A well-shaped message: its identity, and the facts the transcript reads without decoding it."""
        log = self.log
        assert log is not None
        log._message_ids[seq] = message["id"]
        log._carriers.setdefault(message["id"], []).append(seq)
        if kind == "assistant/message" and not message["content"]:
            log._empty_assistant.add(seq)
        elif kind == "user/message":
            log._source_kinds[seq] = message["source"]["kind"]
        elif kind == "tool/result":
            log._result_calls[seq] = message["source"]["callId"]

    def _fold(self, event: dict[str, Any], seq: int, fold: SurfaceFold, location: Location) -> None:
        """A surface event with a valid envelope onto the surface."""
        log = self.log
        assert log is not None
        problem, shadowed = fold.apply(event, self._type_at, self._stored_at)
        if problem:
            self.fail("validation", problem, location, code="surface")
        else:
            op = event["surfaceOp"]
            log._surface_ops[seq] = "append" if op == "append" else (int(op["start"]), int(op["end"]))
            if shadowed:
                log._shadowed_by[seq] = shadowed

    def _index_inbox(self, data: Any, seq: int) -> None:
        """The messages an inbox splice inserts, each a carrier of its message id."""
        log = self.log
        assert log is not None
        for message in payload_as(decode_payload("agent/inbox/spliced", data), InboxSplice).inserted:
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                log._carriers.setdefault(message["id"], []).append(~seq)

    def _follow(
        self, kind: str | None, data: Any, seq: Any, surface_op: Any, where: Callable[[int], Location], i: int
    ) -> list[str]:
        """Move the running facts on by one real event (with this type, data (ABSENT for none), seq and
        surfaceOp (None for none), as stored; located by `where(i)`): the title, the open turn crash closers
        would close; returns what the writer invariants say of it."""
        if (
            kind == "session/title"
            and (title := payload_as(decode_payload(kind, data), SessionTitle).title) is not None
        ):
            log = self.log
            assert log is not None
            log.title = title
        if kind in TRACKED_TYPES:
            error = self.tracker.follow(kind, data, seq)
            if error:
                self.fail("closers", f'stored session "{self.sid}" failed validation: TypeError: {error}', where(i))
        if kind in WATCHED_TYPES:
            data = data if isinstance(data, dict) else {}
            return self.invariants.check(kind, data, surface_op)
        return NONE

    # the index as the surface fold asks of earlier events
    def _type_at(self, seq: int) -> str | None:
        log = self.log
        assert log is not None
        types = log._types
        return types[seq] if 0 <= seq < len(types) else None

    def _stored_at(self, seq: int) -> dict[str, Any] | None:
        log = self.log
        assert log is not None
        return log.raw_event(seq) if 0 <= seq < len(log._types) else None

    def _message_id_at(self, seq: int) -> str | None:
        log = self.log
        assert log is not None
        return log._message_ids.get(seq)


def _at(where: Callable[[int], Location], i: int) -> Callable[[int], Location]:
    """`where(i)` for an event taken alone (at index 0 of its own list)."""
    return lambda _: where(i)


def _whole(line: bytes) -> dict[str, Any]:
    """The event a line with a view holds, parsed whole (an object: the line had a view)."""
    value: dict[str, Any] = parse_json_line(line)[0]
    return value


def _cites_nothing_later(view: Surface, seq: int) -> bool:
    """Whether a surface event's view (at index `seq`) cites no seq as `_current_message` would judge it."""
    return view.sourceEventSeqs is UNSET or _cites_earlier(view.sourceEventSeqs, seq)


def _indexed(events: list[dict[str, Any]], seq: int) -> bool:
    """Whether `events` are objects whose seqs are `seq`, `seq + 1`, ... (ints) and whose types are
    strings, as `Reader._take_indexed` takes them."""
    for i, event in enumerate(events):
        if type(event) is not dict or type(event.get("seq")) is not int or event["seq"] != seq + i:
            return False
        if type(event.get("type")) is not str:
            return False
    return True


def _current_message(event: dict[str, Any], kind: str, seq: int) -> dict[str, Any] | None:
    """The message of a surface event at index `seq` (its seq; its time a safe integer) if the event passes
    every rule as it is: in today's shape, which the legacy upgrade leaves; with a well-formed message; with a
    plain envelope besides: `surfaceOp` "append" and `sourceEventSeqs`, if any, a list of distinct earlier seqs."""
    if event.get("surfaceOp") != "append":
        return None  # a replace: the fold judges it
    data = event["data"]
    if type(data) is not dict:
        return None
    message = (data if "id" in data else None) if kind == "user/message" else data.get("message")
    if message is None:
        return None  # maybe a legacy shape: the upgrade decides
    if len(event) == 6:  # type, seq, time, data, surfaceOp and one more: it must be sourceEventSeqs
        if not _cites_earlier(event.get("sourceEventSeqs"), seq):
            return None
    elif len(event) != 5:
        return None
    return message if message_problem(kind, message) is None else None


def _cites_earlier(cited: Any, seq: int) -> bool:
    """Whether `sourceEventSeqs` is a non-empty, strictly increasing list of ints from 0 to below `seq`,
    as dsh writes it: then valid. (The rule allows any order of distinct seqs; others go the long way.
    One pass in Python is cheaper here than several in C over such short lists.)"""
    if type(cited) is not list or not cited:
        return False
    last = -1
    for s in cited:
        if type(s) is not int or s <= last:
            return False
        last = s
    return last < seq


def _carrier(source: SessionSource, mode: str) -> Carrier:
    if source.kind == "jsonl" and mode == "fixture":
        return "fixture"
    return source.kind
