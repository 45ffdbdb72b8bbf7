"""Two sessions side by side: where they parted, and what the model read differently.

Steps align by their key (`turn.step`, `~n`): turns are numbered on across a resume or a fork,
so a fork's seeded steps meet its parent's at the same keys, and a resumed session meets its
earlier self on the shared prefix. Within an aligned step the things it recorded (prompts,
contexts, answers, reasoning, tool calls, results, request headers) align by their kind and
content, and a pair of the same kind that differs is *changed*, with its words diffed.

Three divergences are named, each the first aligned step where it holds:

- `first_divergence`: the first step whose recorded content differs (a tool result, say);
- `request_divergence`: the first step whose model-visible request differs, by content: the
  header's config, system prompt and tools, each message's role, source form and content
  blocks (message and call ids, times and token counts are never compared);
- `output_divergence`: the first step whose output differs (its answer's text, reasoning and
  tool calls by name and arguments).

Two runs that differ in one tool result part at that step; the step after reads it (its
request differs) and answers from it (its output may differ).

Everything here is pure: the page, its JSON twin, the CLI's `diff` and the pytest plugin present
this structure and decide nothing again.
"""

from __future__ import annotations

import difflib
import hashlib
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
import orjson

from ..model.frozen import thaw
from ..model.rules import message_of
from ..model.text import one_line
from .calls import step_bounds
from .requests import header_at, header_from, seed_boundary, surfaces_at
from .session import SessionLog, SurfaceOp
from .state import TypeIndex, type_index
from .word_diff import WordDiff, Words, word_diff

Status = Literal["same", "changed", "only-a", "only-b"]
ItemKind = Literal[
    "header", "prompt", "context", "compaction", "reasoning", "answer", "tool-call", "result", "rewrite", "message"
]
RequestPart = Literal["config", "system", "tools", "messages"]

# The parts `ignore=` may name; `tool_result:<name>` (or `tool_result:*`) besides.
IGNORABLE: Mapping[str, str] = {
    "reasoning": "reasoning blocks, in answers and in what later requests carry",
    "system": "the system prompt of request headers",
    "tools": "the tool definitions of request headers",
    "config": "the provider, model and other config of request headers",
    "context": "injected context messages (instructions, snapshots, notices...)",
    "timestamps": "event times (never compared: accepted so a caller may say so)",
}
TOOL_RESULT = "tool_result:"


@dataclass(frozen=True, slots=True)
class Ignore:
    parts: frozenset[str] = frozenset()
    tool_results: frozenset[str] = frozenset()  # tool names; "*" for every tool

    def result(self, tool: str) -> bool:
        return "*" in self.tool_results or tool in self.tool_results


def ignore_of(names: Iterable[str]) -> Ignore:
    """The parts named (IGNORABLE, `tool_result:<name>`); ValueError for any other, so a typo fails."""
    parts: set[str] = set()
    tools: set[str] = set()
    for name in names:
        if name.startswith(TOOL_RESULT) and len(name) > len(TOOL_RESULT):
            tools.add(name[len(TOOL_RESULT) :])
        elif name in IGNORABLE:
            parts.add(name)
        else:
            known = ", ".join([*IGNORABLE, "tool_result:<name>"])
            raise ValueError(f"cannot ignore {name!r}: the parts are {known}")
    return Ignore(frozenset(parts), frozenset(tools))


# --- what one log recorded ------------------------------------------------------


# The values a comparison makes a few of per message (items, steps, their pairs) are frozen msgspec Structs:
# one is built in a tenth of a frozen dataclass's time, and holding no cycle, none is tracked by the collector.
class Item(msgspec.Struct, frozen=True, gc=False):
    """One thing a log recorded that the comparison lines up: a message's part, a tool call, a header."""

    kind: ItemKind
    seq: int  # the event that holds it
    label: str  # the tool's name, the context's form, the header's reason; "" when none
    text: str  # what is compared and word-diffed, ids left out
    message_id: str | None


class StepFacts(msgspec.Struct, frozen=True, gc=False):
    """One step of one log, with the fingerprints its comparison needs."""

    key: str
    start: int  # its `step/start` seq
    inherited: bool  # it lies before the log's seed boundary (a fork's or resume's seed)
    config: bytes | None  # digest of the request header's config in force where its request was read
    system: bytes | None
    tools: bytes | None
    messages: bytes  # digest of the model-visible messages its request held
    message_count: int
    output: bytes | None  # digest of the answer's content; None: no answer


class Segment(msgspec.Struct, frozen=True, gc=False):
    """A step of one log and what it recorded, or the run of events between two steps (`step` None)."""

    key: str  # the step's key; `<key>+` for what follows step <key>, `+` for what precedes the first
    step: StepFacts | None
    items: tuple[Item, ...]


@dataclass(frozen=True, slots=True)
class LogFacts:
    segments: tuple[Segment, ...]
    seed_boundary: int | None  # seqs below came with a seed
    request_at: Mapping[str, int]  # step key → where its request was read (the surface after this seq)
    digests: Mapping[int, bytes | None]  # surface seq → its message's digest; None: not model-visible


# --- normalized content ------------------------------------------------------------


def _digest(value: Any) -> bytes:
    """A fingerprint of `value`, compared in this process only: raw bytes, never shown."""
    return hashlib.blake2b(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=12).digest()


# Messages are read here as the JSON the log holds (each already passed docs/format.md's message rules):
# freezing each into `model.values.Message` would cost more than reading the log did.
Json = dict[str, Any]


def _blocks(value: Any) -> list[Json]:
    return [b for b in value if isinstance(b, dict)] if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _without_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items() if k not in ("id", "toolCallId", "callId")}
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def _is_call(block: Json) -> bool:
    get = block.get  # (tested without a generator: asked of every block of every message)
    return (
        get("type") == "tool-call"
        and isinstance(get("id"), str)
        and isinstance(get("name"), str)
        and isinstance(get("arguments"), str)
    )


def _block_text(block: Json) -> str:
    kind = block.get("type")
    if kind in ("text", "reasoning") and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind == "tool-result":
        return "\n".join(_block_text(b) for b in _blocks(block.get("content")))
    return orjson.dumps(_without_ids(block), option=orjson.OPT_SORT_KEYS).decode()


def _normal_block(block: Json, ignore: Ignore, tool: str | None) -> Any:
    kind = block.get("type")
    if kind == "reasoning":
        return None if "reasoning" in ignore.parts else ["reasoning", block.get("text")]
    if kind == "text":
        return ["text", block.get("text")]
    if kind == "tool-call":
        return ["tool-call", block.get("name"), block.get("arguments")]
    if kind == "tool-result":
        if tool is not None and ignore.result(tool):
            return ["tool-result", tool, "ignored"]
        nested = [_normal_block(b, ignore, None) for b in _blocks(block.get("content"))]
        return ["tool-result", nested, block.get("isError")]
    return _without_ids(block)


class _Said(msgspec.Struct, frozen=True, gc=False):
    """A well-shaped message's parts as this module reads them, each found once."""

    id: str | None
    role: Any
    source: Json  # {} where it has none
    blocks: list[Json]  # its content's objects


def _said(message: Json) -> _Said:
    source = message.get("source")
    return _Said(
        _str(message.get("id")) or None,
        message.get("role"),
        source if isinstance(source, dict) else {},
        _blocks(message.get("content")),
    )


def _normal_message(said: _Said, ignore: Ignore, tool: str | None) -> Any:
    """What the model read of a message: its role, source kind and form, and its blocks without ids."""
    normal = [_normal_block(x, ignore, tool) for x in said.blocks]
    return [said.role, said.source.get("kind"), said.source.get("form") or None, [b for b in normal if b is not None]]


def _is_context(said: _Said) -> bool:
    """As `Message.is_context`: a user-role message neither a person nor a tool wrote (a checkpoint included)."""
    return said.role == "user" and said.source.get("kind") not in ("user", "tool")


def _is_checkpoint(said: _Said) -> bool:
    """As `Message.is_checkpoint`."""
    return said.source.get("kind") == "plugin" and said.source.get("plugin") == "compact"


def _message_items(kind: str, seq: int, said: _Said, tool: str | None, replaced: bool) -> list[Item]:
    mid, blocks, source = said.id, said.blocks, said.source
    source_kind = _str(source.get("kind"))
    if replaced:
        return [Item("rewrite", seq, tool or "", "\n".join(_block_text(b) for b in blocks), mid)]
    if said.role == "assistant":
        items: list[Item] = []
        for block in blocks:
            if block.get("type") == "reasoning":
                items.append(Item("reasoning", seq, "", _block_text(block), mid))
            elif _is_call(block):
                items.append(Item("tool-call", seq, block["name"], block["arguments"], mid))
            else:
                label = "" if block.get("type") == "text" else _str(block.get("type"))
                items.append(Item("answer", seq, label, _block_text(block), mid))
        return items
    text = "\n".join(_block_text(b) for b in blocks)
    if kind == "tool/result" or source_kind == "tool":
        return [Item("result", seq, tool or "", text, mid)]
    if _is_checkpoint(said):
        return [Item("compaction", seq, "", text, mid)]
    if _is_context(said):
        return [Item("context", seq, _str(source.get("form")) or source_kind, text, mid)]
    if source_kind == "user":
        return [Item("prompt", seq, "", text, mid)]
    return [Item("message", seq, source_kind, text, mid)]


def _message(log: SessionLog, seq: int, raw: Json) -> Json | None:
    """The message of surface event `raw` (at `seq`) as logged, when it is well-shaped: the read indexed the id
    of each well-shaped message, and of no other."""
    message = message_of(raw)
    return message if seq in log.message_ids and isinstance(message, dict) else None


HeaderParts = tuple[bytes | None, bytes | None, bytes | None]  # digests of config, system prompt, tools


def _header_parts(log: SessionLog, types: TypeIndex, at: int, ignore: Ignore) -> HeaderParts:
    header = header_at(log, types, at)
    if header is None:
        return (None, None, None)
    canonical = thaw(header.canonical())
    config = {"config": canonical.get("config"), "adapterDefaults": canonical.get("adapterDefaults")}
    return (
        None if "config" in ignore.parts else _digest(config),
        None if "system" in ignore.parts else _digest(canonical.get("system")),
        None if "tools" in ignore.parts else _digest(canonical.get("tools")),
    )


def _header_item(log: SessionLog, seq: int, ignore: Ignore) -> Item:
    header = header_from(log, seq)
    lines = []
    if "config" not in ignore.parts:
        lines.append(" ".join(f"{k}={v}" for k, v in thaw(header.config).items()))
    if "system" not in ignore.parts and header.system:
        lines.append(header.system)
    if "tools" not in ignore.parts and header.tools:
        lines.append("tools: " + " ".join(t.name for t in header.tools))
    return Item("header", seq, header.reason or "", "\n".join(lines), None)


class _Chain:
    """The model-visible surface as one running digest of its messages' digests (each the same length, so
    their concatenation is unambiguous), so each step's request is one digest."""

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.digests: list[bytes | None] = []  # each node's digest; None: not model-visible
        self.hasher = hashlib.blake2b(digest_size=12)
        self.count = 0  # the model-visible nodes

    def _take(self, digest: bytes | None) -> None:
        if digest is not None:
            self.hasher.update(digest)
            self.count += 1

    def put(self, op: SurfaceOp, seq: int, digest: bytes | None) -> None:
        """Event `seq` joining the surface as it did (`op`: appended, or replacing a range)."""
        if op == "append":
            self.nodes.append(seq)
            self.digests.append(digest)
            self._take(digest)
            return
        i, j = self.nodes.index(op[0]), self.nodes.index(op[1])
        self.nodes[i : j + 1] = [seq]
        self.digests[i : j + 1] = [digest]
        self.hasher, self.count = hashlib.blake2b(digest_size=12), 0  # (a replace is rare: digest all again)
        for each in self.digests:
            self._take(each)

    def head(self) -> tuple[bytes, int]:
        return self.hasher.copy().digest(), self.count


def log_facts(log: SessionLog, ignore: Ignore = Ignore()) -> LogFacts:
    """Every step of `log` with its request and output fingerprints, and every item it recorded, in log order.

    A step's request is the surface just before its answer (its first appended assistant message), or at
    its end when it has none (a failed call: the surface its last attempt read)."""
    types = type_index(log)
    # keyed and bounded as model views are; a step's calls are not split: the comparison reads a step's
    # request at its answer, which is what its answered call read (no surface event falls inside a call)
    steps = step_bounds(log)
    starts = [s.start for s in steps]
    boundary = seed_boundary(log, types, log.event_count - 1)
    tools: dict[str, str] = {}  # call id → tool name
    digests: dict[int, bytes | None] = {}
    read: dict[int, tuple[bytes, int, int]] = {}  # step index → (messages digest, count, read after this seq)
    answers: dict[int, int] = {}  # step index → its answer's seq
    outputs: dict[int, bytes] = {}  # assistant seq → digest
    items: dict[int, list[Item]] = {}  # segment index → items (index 2i+1: step i, 2i: before it)
    chain = _Chain()

    def place(seq: int) -> int:
        i = bisect_right(starts, seq) - 1
        return 2 * i + 1 if i >= 0 and seq <= steps[i].end else 2 * (i + 1)

    p = 0  # the next step whose end the walk has not passed
    header_seqs = list(types.seqs["request/header"])
    h = 0
    surface = log.raw_events_at(list(log.surface_ops))  # read as the walk goes, a stretch of lines at a time
    for seq, op in [*log.surface_ops.items(), (log.event_count, "append")]:
        while p < len(steps) and steps[p].end < seq:
            if p not in read:
                read[p] = (*chain.head(), steps[p].end)
            p += 1
        while h < len(header_seqs) and header_seqs[h] < seq:
            items.setdefault(place(header_seqs[h]), []).append(_header_item(log, header_seqs[h], ignore))
            h += 1
        if seq >= log.event_count:
            break
        segment = place(seq)
        if op == "append" and log.types[seq] == "assistant/message" and segment % 2 and segment // 2 not in read:
            read[segment // 2] = (*chain.head(), seq - 1)
            answers[segment // 2] = seq
        message = _message(log, seq, next(surface))
        if message is None:  # a surface event whose message does not read: it holds its place, unseen
            digests[seq] = None
            chain.put(op, seq, None)
            continue
        said = _said(message)
        for block in said.blocks:
            if _is_call(block):
                tools[block["id"]] = block["name"]
        call = said.source.get("callId")
        tool = tools.get(call) if isinstance(call, str) else None
        ignored = "context" in ignore.parts and _is_context(said) and not _is_checkpoint(said)
        visible = seq not in log.empty_assistant and not ignored
        digest = _digest(_normal_message(said, ignore, tool)) if visible else None
        digests[seq] = digest
        if said.role == "assistant" and op == "append":  # what it said, whatever tool it answers
            output = digest
            if tool is not None or output is None:
                output = _digest(_normal_message(said, ignore, None))
            outputs[seq] = output
        chain.put(op, seq, digest)
        if not ignored:
            found = _message_items(log.types[seq], seq, said, tool, op != "append")
            if tool is not None and ignore.result(tool):
                found = [Item(i.kind, i.seq, i.label, "", i.message_id) for i in found]
            if "reasoning" in ignore.parts:
                found = [i for i in found if i.kind != "reasoning"]
            items.setdefault(segment, []).extend(found)
    segments: list[Segment] = []
    previous = ""
    parts: dict[int | None, HeaderParts] = {}  # header seq → its digests: each header read once
    for index in range(2 * len(steps) + 1):
        if index % 2:
            i = index // 2
            step = steps[i]
            messages, count, at = read[i]
            in_force = types.last("request/header", at)
            if in_force not in parts:
                parts[in_force] = _header_parts(log, types, at, ignore)
            config, system, tools_d = parts[in_force]
            facts = StepFacts(
                key=step.key,
                start=step.start,
                inherited=boundary is not None and step.start < boundary,
                config=config,
                system=system,
                tools=tools_d,
                messages=messages,
                message_count=count,
                output=outputs.get(answers[i]) if i in answers else None,
            )
            segments.append(Segment(step.key, facts, tuple(items.get(index, ()))))
            previous = step.key
        elif items.get(index):
            segments.append(Segment(f"{previous}+", None, tuple(items[index])))
    request_at = {steps[i].key: at for i, (_, _, at) in read.items()}
    return LogFacts(tuple(segments), boundary, request_at, digests)


# --- word differences: history/word_diff.py ------------------------------------------

SUMMARY_CHARS = 120  # a changed message in the text summary: one line this long


# --- the alignment --------------------------------------------------------------------


class ItemPair(msgspec.Struct, frozen=True, gc=False):
    status: Status
    a: Item | None
    b: Item | None
    words: tuple[Words, ...]  # a changed pair's text, word by word; () otherwise
    whole: bool = False  # a changed pair too costly to diff word by word: shown removed and added whole


class SegmentPair(msgspec.Struct, frozen=True, gc=False):
    """A step (or the run between steps) of each log, aligned; one side None when only the other has it."""

    key_a: str | None
    key_b: str | None
    a: StepFacts | None
    b: StepFacts | None
    request: Status  # whether the model read the same at this step
    output: Status  # whether it answered the same
    items: tuple[ItemPair, ...]

    @property
    def status(self) -> Status:
        if self.key_a is None:
            return "only-b"
        if self.key_b is None:
            return "only-a"
        same = self.request == "same" and self.output == "same" and all(i.status == "same" for i in self.items)
        return "same" if same else "changed"


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where two logs first differ in one respect: the aligned step of each (None: that log has none there)."""

    index: int  # the segment pair's index in `Comparison.segments`
    a: str | None  # step key in log a (`<key>+` for events between steps)
    b: str | None
    part: str  # what differs: an item kind ("result"), a request part ("system", "messages"), "output", "only-a"...
    label: str  # the tool, form or reason the differing item names; "" when none
    message: int | None  # for a request whose messages differ: the 1-based position of the first that does


@dataclass(frozen=True, slots=True)
class Comparison:
    segments: tuple[SegmentPair, ...]
    first_divergence: Divergence | None  # the first step whose recorded content differs
    request_divergence: Divergence | None  # the first step whose model-visible request differs
    output_divergence: Divergence | None  # the first step whose output differs
    seed_a: int | None  # each log's seed boundary (a fork's or resume's): seqs below are inherited
    seed_b: int | None
    ignored: tuple[str, ...]

    @property
    def same(self) -> bool:
        return self.first_divergence is None

    @property
    def divergences(self) -> tuple[tuple[str, Divergence | None], ...]:
        """The three divergences by name, in the order every view lists them."""
        return (
            ("first", self.first_divergence),
            ("request", self.request_divergence),
            ("output", self.output_divergence),
        )


def _signature(item: Item) -> tuple[str, str, str]:
    # a header's reason (initial, change, resume) says why it was logged, not what the model read
    return (item.kind, "" if item.kind == "header" else item.label, item.text)


def _counterparts(x: Item, y: Item) -> bool:
    """Two items that stand in the same place: the same kind, and for a tool call or result the same tool."""
    return x.kind == y.kind and (x.kind == "header" or x.label == y.label)


# how a changed pair of texts is diffed word by word: `word_diff`, or a caller's that does the costly ones
# elsewhere (the server's niced process)
WordDiffer = Callable[[str, str], WordDiff]


def _pair_items(a: tuple[Item, ...], b: tuple[Item, ...], words: WordDiffer) -> tuple[ItemPair, ...]:
    sa, sb = [_signature(i) for i in a], [_signature(i) for i in b]
    if sa == sb:  # most steps of two runs that agree
        return tuple(ItemPair("same", x, y, ()) for x, y in zip(a, b, strict=True))
    out: list[ItemPair] = []
    matcher = difflib.SequenceMatcher(None, sa, sb, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(ItemPair("same", x, y, ()) for x, y in zip(a[i1:i2], b[j1:j2], strict=True))
            continue
        left, right = list(a[i1:i2]), list(b[j1:j2])
        # pair by kind and position: the n-th result on each side is that result, changed
        while left or right:
            if left and right and _counterparts(left[0], right[0]):
                x, y = left.pop(0), right.pop(0)
                diff = words(x.text, y.text)
                out.append(ItemPair("changed", x, y, diff.words, diff.whole))
            elif left and (not right or not any(r.kind == left[0].kind for r in right)):
                out.append(ItemPair("only-a", left.pop(0), None, ()))
            else:  # right holds the kind left[0] is not paired with, or left is empty
                out.append(ItemPair("only-b", None, right.pop(0), ()))
    return tuple(out)


def _request_status(a: StepFacts | None, b: StepFacts | None) -> tuple[Status, RequestPart | None]:
    if a is None or b is None:
        return ("same", None) if a is b else ("only-a" if b is None else "only-b", None)
    for part in ("config", "system", "tools", "messages"):
        if getattr(a, part) != getattr(b, part):
            return "changed", part
    return "same", None


def _output_status(a: StepFacts | None, b: StepFacts | None) -> Status:
    if a is None or b is None:
        return "same" if a is b else ("only-a" if b is None else "only-b")
    return "same" if a.output == b.output else "changed"


def _segment_pair(x: Segment | None, y: Segment | None, words: WordDiffer) -> SegmentPair:
    a, b = (x.step if x else None), (y.step if y else None)
    items = _pair_items(x.items if x else (), y.items if y else (), words)
    request, _ = _request_status(a, b)
    return SegmentPair(x.key if x else None, y.key if y else None, a, b, request, _output_status(a, b), items)


def _aligned(a: LogFacts, b: LogFacts, words: WordDiffer) -> Iterator[SegmentPair]:
    sa, sb = a.segments, b.segments
    matcher = difflib.SequenceMatcher(None, [s.key for s in sa], [s.key for s in sb], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for x, y in zip(sa[i1:i2], sb[j1:j2], strict=True):
                yield _segment_pair(x, y, words)
            continue
        for x in sa[i1:i2]:
            yield _segment_pair(x, None, words)
        for y in sb[j1:j2]:
            yield _segment_pair(None, y, words)


def _first_message(
    log_a: SessionLog, log_b: SessionLog, facts: tuple[LogFacts, LogFacts], pair: SegmentPair
) -> int | None:
    """The 1-based position of the first model-visible message the two requests of `pair` differ in."""
    if pair.a is None or pair.b is None:
        return None
    read_a = _visible_digests(log_a, facts[0], pair.a.key)
    read_b = _visible_digests(log_b, facts[1], pair.b.key)
    for i, (x, y) in enumerate(zip(read_a, read_b, strict=False)):
        if x != y:
            return i + 1
    return min(len(read_a), len(read_b)) + 1 if len(read_a) != len(read_b) else None


def _visible_digests(log: SessionLog, facts: LogFacts, key: str) -> list[bytes]:
    at = facts.request_at.get(key)
    if at is None:
        return []
    seqs = surfaces_at(log, [at])[at]
    return [d for d in (facts.digests.get(s) for s in seqs) if d is not None]


def compare_logs(
    log_a: SessionLog, log_b: SessionLog, ignore: Iterable[str] = (), words: WordDiffer = word_diff
) -> Comparison:
    """The two logs aligned step by step, with their first divergences named; changed texts diffed by `words`."""
    names = tuple(ignore)
    parts = ignore_of(names)
    facts_a, facts_b = log_facts(log_a, parts), log_facts(log_b, parts)
    segments = tuple(_aligned(facts_a, facts_b, words))
    first = request = output = None
    for index, pair in enumerate(segments):
        if first is None and pair.status != "same":
            first = _recorded(index, pair)
        if request is None and pair.request != "same":
            status, part = _request_status(pair.a, pair.b)
            message = _first_message(log_a, log_b, (facts_a, facts_b), pair) if part == "messages" else None
            request = Divergence(index, pair.key_a, pair.key_b, part or status, "", message)
        if output is None and pair.output != "same":
            what = "output" if pair.output == "changed" else pair.output
            output = Divergence(index, pair.key_a, pair.key_b, what, "", None)
        if first and request and output:
            break
    return Comparison(segments, first, request, output, facts_a.seed_boundary, facts_b.seed_boundary, names)


def _recorded(index: int, pair: SegmentPair) -> Divergence:
    status = pair.status
    if status in ("only-a", "only-b"):
        return Divergence(index, pair.key_a, pair.key_b, status, "", None)
    changed = next((i for i in pair.items if i.status != "same"), None)
    if changed is not None:
        item = changed.a or changed.b
        assert item is not None
        return Divergence(index, pair.key_a, pair.key_b, item.kind, item.label, None)
    part = "output" if pair.output != "same" else (_request_status(pair.a, pair.b)[1] or "request")
    return Divergence(index, pair.key_a, pair.key_b, part, "", None)


# --- the aligned rows, as a page shows them -------------------------------------------

FOLD_MIN = 6  # a run of this many rows the same folds into one


@dataclass(frozen=True, slots=True)
class Line:
    """One row of the aligned view: a step's head (`item` None) or one item pair of it."""

    segment: int
    item: int | None
    status: Status


@dataclass(frozen=True, slots=True)
class Fold:
    """Rows [start, end) of the aligned view, all the same, shown folded."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Layout:
    lines: tuple[Line, ...]
    run_ends: tuple[int, ...]  # for each line the same, where its run of same lines ends

    def window(self, start: int, size: int, *, upto: int | None = None) -> tuple[tuple[Line | Fold, ...], int | None]:
        """Up to `size` rows from line `start`, runs of same lines folded; with `upto`, the lines
        [start, upto) unfolded (a fold opened). Also where the next window starts, None at the end."""
        stop = len(self.lines) if upto is None else min(upto, len(self.lines))
        out: list[Line | Fold] = []
        i = start
        while i < stop and len(out) < size:
            end = min(self.run_ends[i], stop)
            if upto is None and end - i >= FOLD_MIN:
                out.append(Fold(i, end))
                i = end
            else:
                out.append(self.lines[i])
                i += 1
        return tuple(out), (i if i < stop else None)


def layout(comparison: Comparison) -> Layout:
    """The aligned rows. A step's head folds with the rows around it when what the step recorded is the same,
    even if its request differs: after one difference every later request carries it, and the difference
    itself is a row of its own; the steps where a divergence lies never fold."""
    marked = {d.index for _, d in comparison.divergences if d}
    lines: list[Line] = []
    for s, pair in enumerate(comparison.segments):
        recorded = pair.output == "same" and all(i.status == "same" for i in pair.items)
        head: Status = (
            "same"
            if pair.status == "same" or (pair.status == "changed" and recorded and s not in marked)
            else pair.status
        )
        lines.append(Line(s, None, head))
        lines.extend(Line(s, i, item.status) for i, item in enumerate(pair.items))
    ends = [0] * len(lines)
    end = len(lines)
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].status == "same":
            ends[i] = end
        else:
            end = i
            ends[i] = i + 1
    return Layout(tuple(lines), tuple(ends))


# --- the structure as JSON and as a few readable lines -----------------------------


def step_name(key: str | None) -> str:
    """`step 3.2`; `after step 3.2` for events between steps; `before the first step`."""
    if key is None:
        return "no step"
    if key == "+":
        return "before the first step"
    return f"after step {key[:-1]}" if key.endswith("+") else f"step {key}"


def divergence_json(d: Divergence | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {"index": d.index, "a": d.a, "b": d.b, "part": d.part, "label": d.label, "message": d.message}


def item_json(item: Item | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return {"kind": item.kind, "seq": item.seq, "label": item.label, "text": item.text, "messageId": item.message_id}


def pair_json(pair: ItemPair) -> dict[str, Any]:
    return {
        "status": pair.status,
        "a": item_json(pair.a),
        "b": item_json(pair.b),
        "words": [[w.op, w.text] for w in pair.words],
        "whole": pair.whole,
    }


def segment_json(pair: SegmentPair) -> dict[str, Any]:
    return {
        "a": pair.key_a,
        "b": pair.key_b,
        "status": pair.status,
        "request": pair.request,
        "output": pair.output,
        "inherited": {"a": bool(pair.a and pair.a.inherited), "b": bool(pair.b and pair.b.inherited)},
        # how many model-visible messages each side's request held
        "requestMessages": {
            "a": pair.a.message_count if pair.a else None,
            "b": pair.b.message_count if pair.b else None,
        },
    }


def summary_json(c: Comparison) -> dict[str, Any]:
    return {
        "same": c.same,
        **{f"{name}Divergence": divergence_json(d) for name, d in c.divergences},
        "seedBoundary": {"a": c.seed_a, "b": c.seed_b},
        "ignored": list(c.ignored),
        "steps": len(c.segments),
    }


def comparison_json(c: Comparison) -> dict[str, Any]:
    """The whole comparison: its summary, and every aligned step with the items that are not the same."""
    return {
        **summary_json(c),
        "segments": [
            {**segment_json(p), "items": [pair_json(i) for i in p.items if i.status != "same"]} for p in c.segments
        ],
    }


def _where(d: Divergence) -> str:
    if d.a == d.b or d.b is None:
        return step_name(d.a)
    if d.a is None:
        return step_name(d.b)
    return f"{step_name(d.a)} in a, {step_name(d.b)} in b"


def divergence_lines(c: Comparison) -> list[str]:
    """The first divergences in a few readable lines (the CLI's report, the plugin's failure message)."""
    if c.first_divergence is None:
        return ["no divergence: the two sessions recorded the same conversation"]
    d = c.first_divergence
    what = d.part + (f" of {d.label}" if d.label and d.part in ("result", "tool-call") else "")
    if d.part == "only-a":
        what = "only in a"
    elif d.part == "only-b":
        what = "only in b"
    lines = [f"first divergence: {_where(d)} ({what})"]
    pair = c.segments[d.index]
    changed = next((i for i in pair.items if i.status != "same"), None)
    if changed is not None:
        if changed.a is not None:
            lines.append(f"  a: {one_line(changed.a.text, SUMMARY_CHARS)}")
        if changed.b is not None:
            lines.append(f"  b: {one_line(changed.b.text, SUMMARY_CHARS)}")
    for name, div in (("request", c.request_divergence), ("output", c.output_divergence)):
        if div is None:
            lines.append(f"{name} divergence: none")
            continue
        detail = div.part
        if div.message is not None:
            detail += f", from message {div.message}"
        lines.append(f"{name} divergence: {_where(div)} ({detail})")
    return lines
