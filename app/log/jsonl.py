"""The JSONL scanner (docs/format.md §1.1, §1.5, §8): header line, storage records,
packed-row expansion, seq continuity, and dsh's torn-tail and defect rules.

It runs over any `Plaintext`, so plain files, zstd frames, ZIP members and
uploaded bytes share one set of rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, chain, compress, count, islice, repeat
from operator import attrgetter, sub
from typing import Any, Literal, NamedTuple

import msgspec
import orjson

from .diagnostics import Diagnostic, Location
from .jsonvalues import MAX_DEPTH, nests_deeper, parse_json
from .packed import PACKED_TAGS, PackedRowError, expand_packed
from .plaintext import Line, LineBatch, Plaintext, ZstdPlaintext, batch_lines, line_batches
from .records import EventRun, HeaderlessLog, NotASessionLog, Record, RepeatedLines, ScanState

# the names dsh gives its own artifacts (docs/format.md §1.1; `session.v<N>` for a later format generation):
# such a file is a log even when its header is not
_ARTIFACT_NAME = re.compile(r"session(?:\.\d+|\.v[1-9]\d*)?\.jsonl(?:\.zstd)?")
Mode = Literal["artifact", "fixture"]
RAW_CAP = 4096
# Records of the tail dsh drops (after a defect) that a log lists, each with its place and reason; the rest
# are read only for the verdict, so a log of tiny records costs no memory per line past its defect.
TAIL_LISTED = 1000


class RecordError(ValueError):
    pass


_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonLine(NamedTuple):
    """A line read as dsh reads it, and what the reading changed."""

    value: Any
    bad_utf8: int | None  # where (in the line) the first text UTF-8 cannot carry lies, replaced by U+FFFD
    deep: int | None  # where the first array or object nested deeper than MAX_DEPTH begins, read as its text


def read_json_line(raw: bytes) -> JsonLine:
    """Parse one line as Node's `JSON.parse` would (`parse_json`).

    Invalid UTF-8 becomes U+FFFD, as dsh's decoder makes it, and so do lone
    surrogate escapes, which JSON.parse accepts but UTF-8 cannot carry.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _read_slowly(raw)
    if _shallow(raw) or not nests_deeper(value):
        return JsonLine(value, None, None)
    return _read_slowly(raw)


def parse_json_line(raw: bytes) -> tuple[Any, int | None]:
    """`read_json_line` for a reader that reports no warning: the value, and where bad UTF-8 was replaced."""
    value, bad, _ = read_json_line(raw)
    return value, bad


# A line of at most this many bytes with at most MAX_DEPTH "[" and "{" is shallow, counted in C; any other is
# walked once parsed, at a cost that follows its values, not its bytes (mostly long strings, in a large line).
_COUNTED = 2048
_ALL_BUT_OPENERS_AND_LF = bytes(set(range(256)) - set(b"[{\n"))  # deleted, what is left of a line counts
_CROWDED = re.compile(b"[^\n]{%d}" % (MAX_DEPTH + 1))  # a line of what is left that counts more


def _shallow(raw: bytes) -> bool:
    return len(raw) <= _COUNTED and raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH


def _read_slowly(raw: bytes) -> JsonLine:
    bad = None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start
        text = raw.decode("utf-8", errors="replace")
    value, deep = parse_json(text)
    scrubbed = _without_surrogates(value)
    if scrubbed is not value and bad is None:
        bad = max(raw.lower().find(b"\\ud"), 0)
    # the byte offset of the deep part: exact but where bytes UTF-8 cannot carry precede it (each then counts
    # as the three bytes of its U+FFFD)
    return JsonLine(scrubbed, bad, None if deep is None else len(text[:deep].encode()))


def _without_surrogates(value: Any) -> Any:
    """`value` itself when it holds no lone surrogate, else a copy with each replaced by U+FFFD."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        items = [_without_surrogates(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
        same = all(k in value and value[k] is v for k, v in pairs.items())
        return value if same else pairs
    return value


def decode_record(obj: Any, running: int, mode: Mode) -> list[dict[str, Any]]:
    """Storage record → events. Fixtures get seq/time synthesized (§1.5)."""
    if not isinstance(obj, dict):
        raise RecordError("record is not a JSON object")
    tag = obj.get("type")
    if isinstance(tag, str) and tag in PACKED_TAGS:
        keys = set(obj)
        if mode == "artifact":
            if keys != {"type", "seq0", "time0", "data"}:
                raise RecordError(f"packed row keys {sorted(keys)} are not type, seq0, time0, data")
            seq0, time0 = obj["seq0"], obj["time0"]
        else:
            if not keys <= {"type", "seq0", "time0", "data"} or "data" not in keys:
                raise RecordError(f"packed row keys {sorted(keys)} are not type, data (+seq0, time0)")
            seq0, time0 = obj.get("seq0", running), obj.get("time0", 0)
        try:
            return expand_packed(tag, seq0, time0, obj["data"])
        except PackedRowError as exc:
            raise RecordError(f"malformed {tag} row: {exc}") from exc
    if mode == "fixture":
        if "seq" not in obj:
            obj["seq"] = running
        if "time" not in obj:
            obj["time"] = 0
    return [obj]


def describe_not_session(first: Any) -> str:
    """Why a parsed first line is not a session header, naming what it is."""
    if isinstance(first, dict):
        if "jsonrpc" in first:
            return 'this is an ACP / JSON-RPC transcript (lines carry "jsonrpc"), not a dsh session log'
        if first.get("type") == "session_event":
            return 'this is a headless stream-json transcript ("session_event" lines), not a dsh session log'
        if first.get("method") == "session.event" or (isinstance(first.get("method"), str) and "params" in first):
            return 'this is a JSON-RPC notification stream ("session.event" methods), not a dsh session log'
        return f'first line is not a dsh session header: its "type" is {first.get("type")!r}, expected "session"'
    return f"first line is a JSON {type(first).__name__}, expected a session header object"


def parse_json_lines(lines: list[bytes]) -> list[Any]:
    """`parse_json_line(line)[0]` of each of `lines` (each with its LF), in C for a batch that parses and is
    shallow, as nearly every one is."""
    values = _parse_lines(lines)
    if _UNPARSED in values:
        return [
            parse_json_line(line)[0] if value is _UNPARSED else value for line, value in zip(lines, values, strict=True)
        ]
    return values


def _decode_fixture_line(raw: bytes, running: int) -> list[dict[str, Any]]:
    """A fixture line's events, read as `JsonlScan._line_record` reads one that has nothing to say of it."""
    return decode_record(read_json_line(raw).value, running, "fixture")


_UNPARSED = object()  # a line orjson refuses, or nested deep: `JsonlScan._line_record` parses it as dsh would


def _parse_lines(lines: list[bytes]) -> list[Any]:
    """Each line parsed by orjson once, in C for a whole batch that parses (nearly every one); a line
    nested deeper than MAX_DEPTH is left `_UNPARSED`, for `read_json_line` to read and warn about."""
    try:
        values = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:
        values = [_loads_or_unparsed(raw) for raw in lines]
    for i in _unproved(lines):
        if nests_deeper(values[i]):
            values[i] = _UNPARSED
    return values


def _unproved(lines: list[bytes]) -> list[int]:
    """Which of `lines` (each with its LF) `_shallow` cannot prove shallow, found in C for the whole batch:
    the long ones, and the short ones with more than MAX_DEPTH "[" and "{", counted in one pass over them all."""
    longs = list(compress(count(), map(_COUNTED.__lt__, map(len, lines))))
    shorts = [line for line in lines if len(line) <= _COUNTED] if longs else lines
    if _CROWDED.search(b"".join(shorts).translate(None, _ALL_BUT_OPENERS_AND_LF)) is None:
        return longs
    return longs + [i for i, line in enumerate(lines) if len(line) <= _COUNTED and not _shallow(line)]


def _read_or_unparsed(raw: bytes) -> Any:
    try:
        return read_json_line(raw).value
    except json.JSONDecodeError:
        return _UNPARSED


def _loads_or_unparsed(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _UNPARSED


def _continuing(values: list[Any], running: int) -> int:
    """How many of `values`, from the first, are events that continue the log from seq `running`:
    objects with that seq (an int: JS `true !== 1`, and a float is left to the slow path) and a
    string type that tags no packed row; or views (`Views`) with that seq."""
    try:
        seqs = list(map(_SEQ, values))  # every value a view, as nearly every one of a batch a reader views is
    except AttributeError:
        pass
    else:
        if seqs == list(range(running, running + len(seqs))):
            return len(seqs)
    n = 0
    for value in values:
        if type(value) is dict:
            seq, tag = value.get("seq"), value.get("type")
            if seq != running + n or type(seq) is not int or type(tag) is not str or tag in PACKED_TAGS:
                break
        elif not isinstance(value, msgspec.Struct) or _SEQ(value) != running + n:
            break
        n += 1
    return n


# A reader's decoder of lines straight into views of their events (`model.verdict_views`): each an object of a
# msgspec Struct type whose `seq` is the event's (an int) and whose type tags no packed row, or None for a line
# that has no view, which is parsed whole.
Views = Callable[[list[bytes]], list[Any]]
_SEQ = attrgetter("seq")


def _viewed(lines: list[bytes], views: Views) -> list[Any] | None:
    """`_parse_lines(lines)` with each line that has a view its view, or None when the batch holds bytes that
    UTF-8 cannot carry (a view skips the values it does not read: a whole parse warns of them). A line not
    proved shallow is parsed whole too."""
    text = b"".join(lines)
    if not text.isascii():
        try:
            text.decode()
        except UnicodeDecodeError:
            return None
    values = views(lines)
    # a line with at most MAX_DEPTH "[" and "{" nests no deeper, of any length: in C for the batch, as `_unproved`
    if _CROWDED.search(text.translate(None, _ALL_BUT_OPENERS_AND_LF)) is not None:
        for i, line in enumerate(lines):
            if line.count(b"[") + line.count(b"{") > MAX_DEPTH:
                values[i] = None
    whole = [i for i, value in enumerate(values) if value is None]
    if whole:
        for i, value in zip(whole, _parse_lines([lines[i] for i in whole]), strict=True):
            values[i] = value
    return values


class JsonlScan:
    """One pass over a JSONL log. Iterate `records()` (or `runs()`) once; `state` fills in."""

    def __init__(self, plaintext: Plaintext, *, mode: Mode | None = None) -> None:
        self.plaintext = plaintext
        self.state = ScanState()
        self.header: dict[str, Any] | None = None
        self.header_location = Location(file=plaintext.label, line=1, offset=0)
        self._mode = mode
        self._batches: Iterator[LineBatch] | None = None
        self._absorbed = 0
        # what the record scan carries from line to line: the next seq, and the first defect and the
        # first turn/end dropped after it (each settles the verdict in `_finish`)
        self._running = 0
        self._defect: Record | None = None
        self._dropped_turn_end: Location | None = None
        # the tail dsh drops, listed up to TAIL_LISTED records, and only skimmed from `_unlisted` on
        self._listed = 0
        self._unlisted: Location | None = None
        self._unlisted_lines = 0
        self._copied: bytes | None = None  # a fixture line (with its LF) whose copies ran to the end of a batch
        self.has_event_lines = True
        # set by a reader that needs only what the verdict reads of each event (an artifact's lines)
        self.views: Views | None = None
        # where a later scan of a grown file resumes: after the last record read whole
        self.resume_offset = 0
        self.resume_line = 0
        self.resume_running = 0

    @property
    def mode(self) -> Mode:
        return self._mode or "artifact"

    def read_header(self) -> dict[str, Any]:
        """Read line 1 and settle artifact vs fixture; raise NotASessionLog, or HeaderlessLog
        for a dsh artifact (zstd, or named like one) whose header dsh would refuse."""
        if self._mode is None:
            self._mode = self._sniff_mode()
        self._batches = line_batches(self.plaintext.chunks())
        refuse = HeaderlessLog if self._is_artifact_file() else NotASessionLog
        for batch in self._batches:
            for line in batch_lines(batch):
                value = self._header_line(line, refuse)
                if value is not None:
                    rest = line.number - batch.number + 1
                    if rest < len(batch.lines):  # the records begin in the header's batch
                        after = LineBatch(
                            line.number + 1, line.offset + len(line.raw) + 1, batch.lines[rest:], batch.terminated
                        )
                        self._batches = chain((after,), self._batches)
                    return value
        raise refuse("empty or header-less session log", self.header_location)

    def _header_line(self, line: Line, refuse: type[NotASessionLog | HeaderlessLog]) -> dict[str, Any] | None:
        """The header read from `line`, or None for a blank line a fixture may open with."""
        if self.mode == "fixture" and not line.raw.strip():
            return None
        self.header_location = Location(file=self.plaintext.label, line=line.number, offset=line.offset)
        try:
            value, bad_utf8, deep = read_json_line(line.raw)
        except json.JSONDecodeError as exc:
            reason = (
                "corrupt session log: the header line is not valid JSON"
                if refuse is HeaderlessLog
                else "first line is not JSON"
            )
            raise refuse(f"{reason} ({exc})", self.header_location) from None
        if not isinstance(value, dict) or value.get("type") != "session":
            raise refuse(describe_not_session(value), self.header_location)
        if not line.terminated and isinstance(self.plaintext, ZstdPlaintext):
            raise HeaderlessLog(
                "empty or header-less session log: the header line has no line feed", self.header_location
            )
        self._warn_read(line, bad_utf8, deep)
        self.header = value
        self.resume_offset = line.offset + len(line.raw) + 1
        self.resume_line = line.number
        return value

    def _is_artifact_file(self) -> bool:
        name = re.split(r"[/\\!#]", self.plaintext.label)[-1]
        return isinstance(self.plaintext, ZstdPlaintext) or _ARTIFACT_NAME.fullmatch(name) is not None

    def _sniff_mode(self) -> Mode:
        """A log is a fixture when none of its event lines carries a seq (docs/format.md §8); one
        that does makes it an artifact, and then a line without one is a defect."""
        seen_header = False
        events = False
        refused = None  # the last line JSON.parse refused: a log of a million copies of one is read once
        for batch in line_batches(self.plaintext.chunks()):
            lines: Iterable[bytes] = batch.lines
            if seen_header:
                # cheap, in C: no line here can carry a seq, or (before the first event line) be an object
                if (b'"seq' if events else b"{") not in b"".join(lines):
                    continue
                lines = dict.fromkeys(lines)  # each distinct line once, in order: a copy says what its line said
            for line in lines:  # read with its LF (JSON's whitespace): a long line is not copied to be sniffed
                if not line or line.isspace():
                    continue
                if not seen_header:
                    seen_header = True
                    continue
                if (b'"seq' not in line if events else line.lstrip()[:1] != b"{") or line == refused:
                    continue
                try:
                    value, _ = parse_json_line(line)
                except json.JSONDecodeError:
                    refused = line
                    continue
                if isinstance(value, dict):
                    events = True
                    if "seq" in value or "seq0" in value:
                        return "artifact"
        if not events:
            self.has_event_lines = False
            # no event line carries a seq: vacuously a fixture (docs/format.md §8), unless zstd says artifact
            return "artifact" if isinstance(self.plaintext, ZstdPlaintext) else "fixture"
        return "fixture"

    def _warn_read(self, line: Line, bad_utf8: int | None, deep: int | None) -> None:
        """Say where reading `line` changed what it holds (`JsonLine`)."""
        if bad_utf8 is not None:
            self._warn(
                "invalid-utf8",
                "text UTF-8 cannot carry (invalid bytes, or a lone surrogate escape) replaced with U+FFFD, "
                "as dsh's decoder does for bytes",
                line.offset + bad_utf8,
                line,
            )
        if deep is not None:
            self._warn(
                "deep-json",
                f"nested deeper than {MAX_DEPTH} levels: shown as its JSON text from there",
                line.offset + deep,
                line,
            )

    def _warn(self, code: str, message: str, offset: int, line: Line) -> None:
        self.state.diagnostics.append(
            Diagnostic(code, "warning", message, Location(file=self.plaintext.label, line=line.number, offset=offset))
        )

    def resume(self) -> Iterator[Record | EventRun | RepeatedLines]:
        """Records appended since the last scan (as `runs()` gives them), reading only the new bytes."""
        self.state = ScanState()
        self._absorbed = 0
        self._copied = None
        self._batches = line_batches(
            self.plaintext.chunks_from(self.resume_offset), number=self.resume_line, base=self.resume_offset
        )
        return self.runs()

    def records(self) -> Iterator[Record]:
        """Every storage record, one by one."""
        for item in self.runs():
            if type(item) is EventRun or type(item) is RepeatedLines:
                yield from item.records()
            else:
                yield item

    def runs(self) -> Iterator[Record | EventRun | RepeatedLines]:
        """The storage records, with each stretch of complete lines that hold one event continuing
        the log gathered into an `EventRun`: nearly all of an artifact, read without a Record per line;
        and in a fixture, the copies of a line that repeats gathered into `RepeatedLines`."""
        if self._batches is None:
            self.read_header()
        assert self._batches is not None
        artifact = self.mode == "artifact"
        fixture = not artifact
        problems = self.plaintext.problems
        self._running = self.resume_running
        self._defect = None
        self._dropped_turn_end = None
        self._listed, self._unlisted, self._unlisted_lines = 0, None, 0
        try:
            for batch in self._batches:
                if len(problems) > self._absorbed:  # a frame decoded with this batch had a problem
                    self._absorb_carrier_problems()
                number, offset, lines, terminated = batch
                # complete lines are parsed at once, for the runs; after a defect, none continues the log
                values = viewed = None
                if terminated and self._defect is None:
                    if artifact and self.views is not None:
                        values = viewed = _viewed(lines, self.views)
                    if values is None:
                        values = _parse_lines(lines)
                i = 0
                copied, self._copied = self._copied, None
                if copied is not None and terminated and lines[0] == copied:  # the last batch's copies go on
                    copies = self._copies(lines, 0, number, offset, copied)
                    yield copies
                    i, offset = copies.count, offset + copies.count * copies.stride
                while i < len(lines):
                    if values is not None and self._defect is None:
                        run = (
                            self._event_run(lines, values, i, number + i, offset, viewed is not None)
                            if artifact
                            else self._fixture_run(lines, values, i, number + i, offset)
                        )
                        if run is not None:
                            yield run
                            i, offset = i + len(run.events), run.end
                            if i == len(lines):
                                break
                            if fixture and lines[i] == lines[i - 1]:
                                copies = self._copies(lines, i, number + i, offset, lines[i - 1])
                                yield copies
                                i += copies.count
                                offset += copies.count * copies.stride
                                if i == len(lines):
                                    break
                                continue
                    if self._listed >= TAIL_LISTED and terminated:
                        self._skim(lines[i:], None if values is None or viewed else values[i:], number + i, offset)
                        break
                    # a line no run takes: a packed row, a defect, a line after one, a fixture's, a torn fragment
                    line = lines[i]
                    said = self.state.told() if fixture else 0
                    parsed = _UNPARSED if values is None else values[i]
                    record = self._line_record(
                        Line(number + i, offset, line[:-1] if terminated else line, terminated),
                        _UNPARSED if isinstance(parsed, msgspec.Struct) else parsed,  # a view: parsed whole
                    )
                    i += 1
                    offset += len(line)
                    if record is not None:
                        if record.kind != "events":
                            self._listed += 1
                        yield record
                        if (
                            fixture
                            and terminated
                            and i < len(lines)
                            and lines[i] == line
                            and record.kind == "events"
                            and len(record.events) == 1
                            and self.state.told() == said  # the line was read without a word to say of it
                        ):
                            copies = self._copies(lines, i, number + i, offset, line)
                            yield copies
                            i += copies.count
                            offset += copies.count * copies.stride
        finally:
            self._absorb_carrier_problems()
            self._finish(self._defect, self._dropped_turn_end)
            self._tell_unlisted()

    def _event_run(
        self, lines: list[bytes], values: list[Any], start: int, number: int, offset: int, viewed: bool = False
    ) -> EventRun | None:
        """The complete lines from `lines[start]` (line `number`, at `offset`; parsed to `values`, `viewed`
        if some may be views) that each hold one event continuing the log, up to the first that does not (or
        None if that is the first)."""
        rest = values[start:] if start else values
        n = _continuing(rest, self._running)
        if not n:
            return None
        events = rest[:n] if n < len(rest) else rest
        # where each line lies, summed in C (each line with its LF; a record's length without it)
        sizes = list(map(len, islice(lines, start, start + n)))
        starts = list(accumulate(sizes, initial=offset))
        lengths = list(map(sub, sizes, repeat(1)))
        self._running += n
        self.resume_offset, self.resume_line, self.resume_running = starts.pop(), number + n - 1, self._running
        return EventRun(
            self.plaintext.label, number, starts, lengths, events, lines=lines[start : start + n] if viewed else None
        )

    def _fixture_run(
        self, lines: list[bytes], values: list[Any], start: int, number: int, offset: int
    ) -> EventRun | None:
        """The complete fixture lines from `lines[start]` (line `number`, at `offset`; parsed to `values`) that
        each hold one object, as `_line_record` would read them with nothing to say (no packed row, no CR before
        the LF), up to the first that does not or that repeats the line before it (`_copies` reads those)."""
        running, n = self._running, 0
        for value, line in zip(islice(values, start, None), islice(lines, start, None), strict=True):
            if type(value) is not dict or line.endswith(b"\r\n") or (n and line == lines[start + n - 1]):
                break
            tag = value.get("type")
            if type(tag) is str and tag in PACKED_TAGS:
                break
            value.setdefault("seq", running + n)
            value.setdefault("time", 0)
            n += 1
        if not n:
            return None
        sizes = list(map(len, islice(lines, start, start + n)))
        starts = list(accumulate(sizes, initial=offset))
        lengths = list(map(sub, sizes, repeat(1)))
        self._running += n
        self.resume_offset, self.resume_line, self.resume_running = starts.pop(), number + n - 1, self._running
        return EventRun(self.plaintext.label, number, starts, lengths, values[start : start + n], indexed=False)

    def _copies(self, lines: list[bytes], start: int, number: int, offset: int, line: bytes) -> RepeatedLines:
        """The fixture lines from `lines[start]` (line `number`, at `offset`) that repeat `line`, the line before
        them, which was read as one event: each reads as it did, but for the seq it is given (§1.5)."""
        end = start + 1
        while end < len(lines) and lines[end] == line:
            end += 1
        n = end - start
        if end == len(lines):
            self._copied = line  # the next batch may go on with more
        raw = line[:-1].removesuffix(b"\r")
        copies = RepeatedLines(
            self.plaintext.label, number, offset, len(line), len(raw), raw, self._running, n, _decode_fixture_line
        )
        self._running += n
        self.resume_offset, self.resume_line, self.resume_running = (
            offset + n * len(line),
            number + n - 1,
            self._running,
        )
        return copies

    def _line_record(self, line: Line, parsed: Any) -> Record | None:
        """The record of one line read on its own (None for a blank fixture line), `parsed` by orjson
        already or `_UNPARSED`: the rare cases, with every rule of docs/format.md §1.5 and §8."""
        number, offset, raw, terminated = line
        fixture = self.mode == "fixture"
        loc = Location(self.plaintext.label, number, None, offset)
        if fixture:
            if not raw.strip():
                return None
            if raw.endswith(b"\r"):
                raw = raw[:-1]
        complete_end = self.plaintext.complete_end
        in_complete_frame = complete_end is not None and offset < complete_end
        if not terminated and not fixture:  # the final fragment: nothing follows it
            if in_complete_frame:
                self.state.corrupt("torn-record-in-frame", "complete frame contains a torn JSONL record", loc)
                return Record("defect", loc, offset, len(raw), reason="torn record", raw=raw[:RAW_CAP])
            self.state.diagnostics.append(
                Diagnostic("pending-line", "info", f"final line has no line feed yet ({len(raw)} bytes pending)", loc)
            )
            self.state.repairs.append(f"ignored a torn final line of {len(raw)} bytes at line {number}")
            return Record("pending", loc, offset, len(raw), reason="torn final line", raw=raw[:RAW_CAP])
        events: list[dict[str, Any]] | None = None
        reason = None
        try:
            value, bad_utf8, deep = read_json_line(raw) if parsed is _UNPARSED else JsonLine(parsed, None, None)
            if value is None and not fixture:
                self._null_record(loc)
            events = decode_record(value, self._running, self.mode)
            self._warn_read(line, bad_utf8, deep)
        except json.JSONDecodeError as exc:
            reason = f"not valid JSON: {exc}"
        except RecordError as exc:
            reason = str(exc)
        if events is not None and self._defect is None:
            first = events[0].get("seq")
            if fixture or (first == self._running and type(first) is not bool):  # JS: true !== 1
                self._running += len(events)
                self.resume_offset = line.offset + len(line.raw) + 1
                self.resume_line = line.number
                self.resume_running = self._running
                return Record("events", loc, line.offset, len(raw), events)
            reason = f"seq {first!r} does not continue the log (expected {self._running})"
        if self._defect is None:
            if in_complete_frame:
                self.state.corrupt("corrupt-frame-record", f"defect inside a complete zstd frame: {reason}", loc)
            elif events is not None and any(e.get("type") == "turn/end" for e in events):
                self.state.corrupt("defective-turn-end", f"a turn/end record is defective: {reason}", loc)
            self._defect = Record("defect", loc, line.offset, len(raw), reason=reason, raw=raw[:RAW_CAP])
            self.state.diagnostics.append(Diagnostic("defect", "error", reason or "defect", loc))
            return self._defect
        if events is None:
            self.state.diagnostics.append(Diagnostic("defect", "error", reason or "defect", loc))
            return Record("defect", loc, line.offset, len(raw), reason=reason, raw=raw[:RAW_CAP])
        if self._dropped_turn_end is None and any(e.get("type") == "turn/end" for e in events):
            self._dropped_turn_end = loc
        return Record("dropped", loc, line.offset, len(raw), events)

    def _null_record(self, loc: Location) -> None:
        """A JSON `null` record: dsh's scanner reads a field of it outside its guard and throws, so dsh
        refuses the log wherever the record lies, even in a tail it would drop (dsh's bug, but its verdict)."""
        field = "seq" if self._defect is None else "type"
        self.state.corrupt(
            "null-record",
            f"dsh's log scanner fails on this null record (TypeError: Cannot read properties of null (reading "
            f"'{field}')) and refuses the log, though it would drop any other defective record here",
            loc,
        )

    def _skim(self, lines: list[bytes], values: list[Any] | None, number: int, offset: int) -> None:
        """Complete lines of the tail dsh drops, past the TAIL_LISTED records it lists: read only for what
        still changes the verdict (a null record; a turn/end, which makes the defect committed corruption),
        and counted, not kept (two million `{}` lines came from 725 bytes of zstd)."""
        if self._unlisted is None:
            self._unlisted = Location(self.plaintext.label, number, None, offset)
        self._unlisted_lines += len(lines)
        fixture = self.mode == "fixture"
        # Tested in C: a null record is the bytes `null`, and a turn/end's type is the bytes `turn/end` or holds
        # an escape; a batch with none of those that matter yet changes nothing.
        text = b"".join(lines)
        if (fixture or b"null" not in text) and (
            self._dropped_turn_end is not None or (b"turn/end" not in text and b"\\" not in text)
        ):
            return
        if values is None:
            values = [_loads_or_unparsed(raw) for raw in lines]
        if self._dropped_turn_end is not None and None not in values and _UNPARSED not in values:
            return  # nothing here can change the verdict (tested in C)
        for raw, parsed in zip(lines, values, strict=True):
            value = parsed if parsed is not _UNPARSED else _read_or_unparsed(raw)
            if value is None and not fixture:
                self._null_record(Location(self.plaintext.label, number, None, offset))
            elif self._dropped_turn_end is None and type(value) is dict and value.get("type") == "turn/end":
                self._dropped_turn_end = Location(self.plaintext.label, number, None, offset)
            number += 1
            offset += len(raw)

    def _tell_unlisted(self) -> None:
        if self._unlisted is not None and self._defect is not None:
            self.state.diagnostics.append(
                Diagnostic(
                    "tail-unlisted",
                    "info",
                    f"{self._unlisted_lines:,} more lines after the defect at line {self._defect.location.line}, "
                    f"from line {self._unlisted.line:,} on, are read for the verdict but not listed: a log lists "
                    f"the first {TAIL_LISTED:,} records after a defect",
                    self._unlisted,
                )
            )

    def _absorb_carrier_problems(self) -> None:
        problems = self.plaintext.problems
        while self._absorbed < len(problems):
            diag = problems[self._absorbed]
            self._absorbed += 1
            if diag.severity == "error":
                self.state.corrupt(diag.code, diag.message, diag.location)
            else:
                if diag.code == "torn-frame":
                    self.state.repairs.append(diag.message)
                self.state.diagnostics.append(diag)

    def _finish(self, defect: Record | None, dropped_turn_end: Location | None) -> None:
        if defect is None:
            return
        where = defect.location.describe()
        if dropped_turn_end is not None:
            self.state.corrupt(
                "committed-corruption",
                f"defective record at {where} ({defect.reason}) is followed by a turn/end at line "
                f"{dropped_turn_end.line}: the log is corrupt",
                defect.location,
            )
        elif self.state.corruption is None:
            self.state.repairs.append(f"dropped the defective tail from {where} ({defect.reason})")
