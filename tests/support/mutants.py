"""Real sessions as dsh artifacts, and seeded mutants of them: the damage a crash, a bad copy, a hand edit or a
newer harness leaves in a log, as docs/format.md §1.1 and §2 describe what each layer may hold.

A base session is its header and its append batches of storage lines (a packed row is one line). A mutant
changes the lines (logical damage: dropped, duplicated or swapped lines, retyped fields, garbage) or the
bytes of the encoded file (physical damage: a cut at any byte, flipped bytes, torn or spliced zstd frames),
and is written where dsh keeps the base session in a persistence root, so dsh resumes it by the base's id.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
import zstandard
from dsh_inspect.log.dsh_root import encode_segment, project_key

from tests.support.logs import artifact_header, fixture_events
from tests.support.writers import dumps, pack, zstd_frame

Lines = list[bytes]


@dataclass(frozen=True, slots=True)
class Base:
    name: str
    header: dict[str, Any]
    batches: tuple[tuple[bytes, ...], ...]  # storage lines, without their LF


@dataclass(frozen=True, slots=True)
class Artifact:
    """What is written: the header line and batches (for zstd, a frame each), or final bytes."""

    name: str
    mutation: str
    base: Base
    header_line: bytes
    batches: tuple[tuple[bytes, ...], ...]
    raw: bytes | None = None  # set by a physical mutation, for one compression

    def encode(self, compression: str) -> bytes:
        if self.raw is not None:
            return self.raw
        head = self.header_line + b"\n"
        if compression == "zstd":
            return zstd_frame(head) + b"".join(zstd_frame(_text(b)) for b in self.batches if b)
        return head + b"".join(_text(b) for b in self.batches)

    def place(self, root: Path, compression: str) -> Path:
        """Where dsh keeps the base session in `root`, with this artifact's bytes."""
        cwd = self.base.header.get("cwd")
        name = "session.jsonl.zstd" if compression == "zstd" else "session.jsonl"
        path = root / project_key(cwd if isinstance(cwd, str) else None) / encode_segment(self.base.header["id"]) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.encode(compression))
        return path


def _text(batch: tuple[bytes, ...]) -> bytes:
    return b"".join(line + b"\n" for line in batch)


# -- bases -------------------------------------------------------------------------------------------


def fixture_base(path: Path, name: str, index: int, rng: random.Random) -> Base | None:
    """A corpus fixture as dsh's seeder writes it: a strict header, seqs and times, batches of a few events."""
    header, events = fixture_events(path)
    if not events:
        return None
    strict = artifact_header(header, session_id=f"session-{index:04d}-{rng.getrandbits(32):08x}", cwd="/work/project")
    batches: list[tuple[bytes, ...]] = []
    i = 0
    while i < len(events):
        n = rng.choice((1, 2, 3, 5, 8, 13, 40))
        lines = []
        for kind, value in pack(events[i : i + n]):
            if kind == "event":
                lines.append(dumps(value))
            else:
                tag, seq0, time0, data = value
                lines.append(dumps({"type": tag, "seq0": seq0, "time0": time0, "data": data}))
        batches.append(tuple(lines))
        i += n
    return Base(name, strict, tuple(batches))


def artifact_base(path: Path, name: str) -> Base:
    """A real dsh artifact as it lies: its header frame and each write batch's frame, lines verbatim."""
    data = path.read_bytes()
    texts = []
    reader = zstandard.ZstdDecompressor()
    while data:
        obj = reader.decompressobj()
        texts.append(obj.decompress(data))
        data = obj.unused_data
    header = orjson.loads(texts[0].rstrip(b"\n"))
    batches = tuple(tuple(t.rstrip(b"\n").split(b"\n")) for t in texts[1:])
    return Base(name, header, batches)


# -- mutations ---------------------------------------------------------------------------------------

Mutation = Callable[[Artifact, random.Random, str], Artifact | None]
_VALUES: tuple[Any, ...] = (None, [], {}, "x", 0, -1, 1.5, True, [1], {"a": 1}, 2**60)


def _lines(a: Artifact) -> list[tuple[int, int]]:
    return [(b, i) for b, batch in enumerate(a.batches) for i in range(len(batch))]


def _with_line(a: Artifact, at: tuple[int, int], new: list[bytes], mutation: str) -> Artifact:
    b, i = at
    batches = [list(x) for x in a.batches]
    batches[b][i : i + 1] = new
    return replace(a, batches=tuple(tuple(x) for x in batches), mutation=mutation)


def _pick(a: Artifact, rng: random.Random, *, tail: bool = False) -> tuple[int, int] | None:
    lines = _lines(a)
    if not lines:
        return None
    if tail and rng.random() < 0.6:
        return lines[-1 - rng.randrange(min(3, len(lines)))]
    return rng.choice(lines)


def _line(a: Artifact, at: tuple[int, int]) -> bytes:
    return a.batches[at[0]][at[1]]


def _edit_record(
    a: Artifact, rng: random.Random, name: str, edit: Callable[[dict[str, Any]], str | None]
) -> Artifact | None:
    at = _pick(a, rng, tail=True)
    if at is None:
        return None
    try:
        record = orjson.loads(_line(a, at))
    except orjson.JSONDecodeError:
        return None
    if not isinstance(record, dict):
        return None
    what = edit(record)
    if what is None:
        return None
    return _with_line(a, at, [dumps(record)], f"{name} {what} at line {_number(a, at)}")


def _number(a: Artifact, at: tuple[int, int]) -> int:
    """The 1-based line of the logical text (the header is line 1)."""
    return 2 + sum(len(x) for x in a.batches[: at[0]]) + at[1]


def drop_line(a: Artifact, rng: random.Random, _: str) -> Artifact | None:
    at = _pick(a, rng, tail=True)
    return None if at is None else _with_line(a, at, [], f"drop line {_number(a, at)}")


def duplicate_line(a: Artifact, rng: random.Random, _: str) -> Artifact | None:
    at = _pick(a, rng, tail=True)
    return None if at is None else _with_line(a, at, [_line(a, at)] * 2, f"duplicate line {_number(a, at)}")


def swap_lines(a: Artifact, rng: random.Random, _: str) -> Artifact | None:
    lines = _lines(a)
    if len(lines) < 2:
        return None
    k = rng.randrange(len(lines) - 1) if rng.random() < 0.5 else len(lines) - 2
    first, second = lines[k], lines[k + 1]
    x, y = _line(a, first), _line(a, second)
    batches = [list(b) for b in a.batches]
    batches[first[0]][first[1]], batches[second[0]][second[1]] = y, x
    return replace(
        a, batches=tuple(tuple(b) for b in batches), mutation=f"swap lines {_number(a, first)}-{_number(a, second)}"
    )


def cut_lines(a: Artifact, rng: random.Random, _: str) -> Artifact | None:
    lines = _lines(a)
    if not lines:
        return None
    keep = rng.randrange(len(lines))
    kept = set(lines[:keep])
    batches = tuple(tuple(x for i, x in enumerate(batch) if (b, i) in kept) for b, batch in enumerate(a.batches))
    return replace(a, batches=batches, mutation=f"keep the first {keep} event lines")


def garbage_line(a: Artifact, rng: random.Random, _: str) -> Artifact | None:
    garbage = rng.choice(
        [b"null", b"{}", b"[]", b"42", b'"x"', b"not json", b'{"type":', b"\x00\x01\x02", b"", b"{} {}", b"true"]
    )
    lines = _lines(a)
    if not lines:
        return replace(a, batches=((garbage,),), mutation=f"garbage line {garbage!r} after the header")
    at = lines[-1] if rng.random() < 0.5 else rng.choice(lines)
    after = rng.random() < 0.5 or at == lines[-1]
    new = [_line(a, at), garbage] if after else [garbage, _line(a, at)]
    where = "after" if after else "before"
    return _with_line(a, at, new, f"garbage line {garbage!r} {where} line {_number(a, at)}")


def bad_utf8(a: Artifact, rng: random.Random, _: str) -> Artifact | None:
    at = _pick(a, rng)
    if at is None:
        return None
    line = _line(a, at)
    quote = line.rfind(b'"', 0, len(line) - 2)
    if quote < 0:
        return None
    bad = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82"])
    return _with_line(a, at, [line[:quote] + bad + line[quote:]], f"bad UTF-8 {bad!r} in line {_number(a, at)}")


def crlf(a: Artifact, rng: random.Random, _: str) -> Artifact | None:
    at = _pick(a, rng)
    if at is None:
        return None
    if rng.random() < 0.5:
        batches = tuple(tuple(x + b"\r" for x in batch) for batch in a.batches)
        return replace(a, batches=batches, mutation="CRLF line ends on every event line")
    return _with_line(a, at, [_line(a, at) + b"\r"], f"CRLF at the end of line {_number(a, at)}")


def change_seq(a: Artifact, rng: random.Random, name: str) -> Artifact | None:
    def edit(record: dict[str, Any]) -> str | None:
        key = "seq0" if "seq0" in record else "seq"
        if key not in record:
            return None
        old = record[key]
        new = rng.choice([old + 1, old - 1, old + 7, str(old), float(old) + 0.5, None, -1])
        if rng.random() < 0.15:
            del record[key]
            return f"removed {key} {old}"
        record[key] = new
        return f"{key} {old} → {new!r}"

    return _edit_record(a, rng, "seq", edit)


def envelope_field(a: Artifact, rng: random.Random, name: str) -> Artifact | None:
    def edit(record: dict[str, Any]) -> str | None:
        key = rng.choice(["type", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable", "extra", "time0"])
        if rng.random() < 0.35 and key in record:
            del record[key]
            return f"removed {key}"
        value = rng.choice(_VALUES)
        record[key] = value
        return f"{key} = {orjson.dumps(value).decode()}"

    return _edit_record(a, rng, "envelope", edit)


def retype_data(a: Artifact, rng: random.Random, name: str) -> Artifact | None:
    def edit(record: dict[str, Any]) -> str | None:
        if "data" not in record:
            return None
        data = record["data"]
        if isinstance(data, dict) and data and rng.random() < 0.6:
            key = rng.choice(sorted(data))
            if rng.random() < 0.4:
                del data[key]
                return f"{record.get('type')} data.{key} removed"
            value = rng.choice(_VALUES)
            data[key] = value
            return f"{record.get('type')} data.{key} = {orjson.dumps(value).decode()}"
        value = rng.choice(_VALUES)
        record["data"] = value
        return f"{record.get('type')} data = {orjson.dumps(value).decode()}"

    return _edit_record(a, rng, "data", edit)


_READ_BY_REPAIR = ("turn/start", "step/start", "tool/call", "turn/end", "assistant/message", "step/end")


def repair_read_data(a: Artifact, rng: random.Random, name: str) -> Artifact | None:
    """The events dsh's crash-repair pass reads (docs/format.md §5.8), with their data null, of another type,
    or missing a field, in any turn: what that pass makes of each, closed turn or open."""
    kind = rng.choice(_READ_BY_REPAIR)
    needle = f'"type":"{kind}"'.encode()
    found = [at for at in _lines(a) if needle in _line(a, at)]
    if not found:
        return None
    at = found[-1] if rng.random() < 0.4 else rng.choice(found)
    record = orjson.loads(_line(a, at))
    data = record.get("data")
    if kind == "assistant/message" and isinstance(data, dict) and isinstance(data.get("message"), dict):
        content = data["message"].get("content")
        if isinstance(content, list):
            content.insert(rng.randrange(len(content) + 1), None)
            what = "a null content block"
        else:
            return None
    elif isinstance(data, dict) and data and rng.random() < 0.3:
        key = rng.choice(sorted(data))
        del data[key]
        what = f"data.{key} removed"
    else:
        record["data"] = rng.choice((None, None, [], 3, "x", {}, [1]))
        what = f"data = {orjson.dumps(record['data']).decode()}"
    return _with_line(a, at, [dumps(record)], f"repair-read {kind} {what} at line {_number(a, at)}")


def message_field(a: Artifact, rng: random.Random, name: str) -> Artifact | None:
    """A surface event's message (docs/format.md §4.1) or surfaceOp changed: its id, role, source, content,
    provider, or the span a replace covers."""
    found = [at for at in _lines(a) if b'"surfaceOp"' in _line(a, at)]
    if not found:
        return None
    at = found[-1] if rng.random() < 0.4 else rng.choice(found)
    record = orjson.loads(_line(a, at))
    data = record.get("data")
    message = data.get("message", data) if isinstance(data, dict) else None
    if not isinstance(message, dict):
        return None
    target = rng.choice(["id", "role", "source", "source.kind", "source.callId", "content", "block", "provider", "op"])
    value = rng.choice(("", 5, None, "user", "assistant", [], [None], "x", {"kind": "model"}, {}))
    if target == "op":
        seq = record.get("seq", 0)
        record["surfaceOp"] = rng.choice(
            [
                "append",
                {"op": "replace", "start": 0, "end": 0},
                {"op": "replace", "start": max(seq - 3, 0), "end": max(seq - 1, 0)},
                {"op": "replace", "start": seq, "end": seq},
                "prepend",
                {"op": "replace", "start": 2, "end": 1},
            ]
        )
        what = f"surfaceOp = {orjson.dumps(record['surfaceOp']).decode()}"
    elif target == "block":
        content = message.get("content")
        if not isinstance(content, list) or not content:
            return None
        block = content[rng.randrange(len(content))]
        if not isinstance(block, dict) or not block:
            return None
        key = rng.choice(sorted(block))
        block[key] = value
        what = f"a content block's {key} = {orjson.dumps(value).decode()}"
    elif target == "provider":
        source = message.get("source")
        if not isinstance(source, dict):
            return None
        source[rng.choice(["provider", "model"])] = value
        what = f"source provider/model = {orjson.dumps(value).decode()}"
    elif "." in target:
        source = message.get("source")
        if not isinstance(source, dict):
            return None
        source[target.split(".")[1]] = value
        what = f"message {target} = {orjson.dumps(value).decode()}"
    elif target == "id" and rng.random() < 0.4:
        ids = [m.group(1) for m in re.finditer(rb'"id":"([^"]+)"', b"\n".join(_line(a, x) for x in found))]
        if not ids:
            return None
        message["id"] = rng.choice(ids).decode()
        what = f"message id = another message's {message['id']!r}"
    else:
        message[target] = value
        what = f"message {target} = {orjson.dumps(value).decode()}"
    return _with_line(a, at, [dumps(record)], f"message {record.get('type')} {what} at line {_number(a, at)}")


def event_type(a: Artifact, rng: random.Random, name: str) -> Artifact | None:
    def edit(record: dict[str, Any]) -> str | None:
        old = record.get("type")
        new = rng.choice(
            ["future/event", "assistant/chunk", "tool/result", 7, None, ["x"], {"a": 1}, "", "text-chunks"]
        )
        if rng.random() < 0.2:
            record["ignorable"] = True
        if rng.random() < 0.1:
            record.pop("type", None)
            return f"type {old!r} removed"
        record["type"] = new
        return f"type {old!r} → {new!r}{' (ignorable)' if record.get('ignorable') is True else ''}"

    return _edit_record(a, rng, "type", edit)


def range_seqs(a: Artifact, rng: random.Random, name: str) -> Artifact | None:
    """`sourceEventSeqs` in the range form of releases after 0.1.1-rc.2 (docs/format.md §8)."""

    def edit(record: dict[str, Any]) -> str | None:
        seqs = record.get("sourceEventSeqs")
        if not isinstance(seqs, list) or not seqs or not all(isinstance(s, int) for s in seqs):
            return None
        first = seqs[0]
        record["sourceEventSeqs"] = [[first, first], *seqs[1:]] if rng.random() < 0.5 else [[0, max(first, 1)]]
        return f"sourceEventSeqs {seqs} → {record['sourceEventSeqs']}"

    for at in reversed(_lines(a)):
        line = _line(a, at)
        if b'"sourceEventSeqs"' in line:
            record = orjson.loads(line)
            what = edit(record)
            if what:
                return _with_line(a, at, [dumps(record)], f"seqs {what} at line {_number(a, at)}")
    return None


def header_field(a: Artifact, rng: random.Random, name: str) -> Artifact | None:
    header = orjson.loads(a.header_line)
    choices: list[tuple[str, Any]] = [
        ("version", 1),
        ("version", -1),
        ("version", 0.5),
        ("version", "0"),
        ("version", None),
        ("version", ...),
        ("id", "session-someone-else"),
        ("id", ...),
        ("id", ""),
        ("cwd", "/work/elsewhere"),
        ("cwd", ...),
        ("cwd", "relative/path"),
        ("createdAt", -5),
        ("createdAt", 1.5),
        ("createdAt", ...),
        ("delegationDepth", ...),
        ("delegationDepth", -1),
        ("delegationDepth", "0"),
        ("sandboxMode", "workspace-write"),
        ("futureKey", {"x": 1}),
        ("type", "sessions"),
        ("origin", "subagent"),
        ("seedLength", -1),
    ]
    key, value = rng.choice(choices)
    if value is ...:
        if key not in header:
            return None
        del header[key]
        what = f"header {key} removed"
    else:
        header[key] = value
        what = f"header {key} = {orjson.dumps(value).decode()}"
    return replace(a, header_line=dumps(header), mutation=what)


# physical damage: the encoded bytes themselves


def cut_bytes(a: Artifact, rng: random.Random, compression: str) -> Artifact | None:
    data = a.encode(compression)
    head = len(a.header_line) + 1 if compression == "none" else 0
    if len(data) <= head + 1:
        return None
    at = rng.randrange(head + 1, len(data)) if rng.random() < 0.8 else len(data) - rng.randrange(1, 6)
    return replace(a, raw=data[:at], mutation=f"cut at byte {at} of {len(data)}")


def flip_byte(a: Artifact, rng: random.Random, compression: str) -> Artifact | None:
    data = bytearray(a.encode(compression))
    if not data:
        return None
    at = rng.randrange(len(data)) if rng.random() < 0.5 else len(data) - 1 - rng.randrange(min(40, len(data)))
    bit = 1 << rng.randrange(8)
    data[at] ^= bit
    return replace(a, raw=bytes(data), mutation=f"flip bit {bit:#04x} of byte {at}")


def splice_frames(a: Artifact, rng: random.Random, compression: str) -> Artifact | None:
    """zstd only: frames duplicated, dropped, swapped, or a frame torn before another."""
    if compression != "zstd":
        return None
    frames = [zstd_frame(a.header_line + b"\n")] + [zstd_frame(_text(b)) for b in a.batches if b]
    if len(frames) < 3:
        return None
    k = rng.randrange(1, len(frames))
    how = rng.choice(["duplicate", "drop", "swap", "tear", "header-twice", "empty-frame"])
    if how == "duplicate":
        frames.insert(k, frames[k])
    elif how == "drop":
        del frames[k]
    elif how == "swap" and k + 1 < len(frames):
        frames[k], frames[k + 1] = frames[k + 1], frames[k]
    elif how == "tear":
        frames[k] = frames[k][: rng.randrange(1, len(frames[k]))]
    elif how == "header-twice":
        frames.insert(k, frames[0])
    elif how == "empty-frame":
        frames.insert(k, zstd_frame(b""))
    else:
        return None
    return replace(a, raw=b"".join(frames), mutation=f"zstd frames: {how} frame {k} of {len(frames)}")


def torn_tail_record(a: Artifact, rng: random.Random, compression: str) -> Artifact | None:
    """A last write cut short: a final batch holding a partial line, or a record only a crash leaves."""
    tail = rng.choice([b'{"type":"assistant/chunk","seq":', b"null", b"{}", b"[]", b"0"])
    complete = rng.random() < 0.6 and tail != b'{"type":"assistant/chunk","seq":'
    text_batches = list(a.batches)
    if compression == "zstd":
        frames = [zstd_frame(a.header_line + b"\n")] + [zstd_frame(_text(b)) for b in text_batches if b]
        last = zstd_frame(tail + (b"\n" if complete else b""))
        cut = last[: len(last) - rng.randrange(1, 5)] if rng.random() < 0.5 else last
        state = "torn frame" if cut is not last else "complete frame"
        return replace(a, raw=b"".join(frames) + cut, mutation=f"final {state} holding {tail!r}{' + LF' * complete}")
    body = a.encode("none") + tail + (b"\n" if complete else b"")
    return replace(a, raw=body, mutation=f"final line {tail!r}{' + LF' * complete}")


LOGICAL: tuple[Mutation, ...] = (
    drop_line,
    duplicate_line,
    swap_lines,
    cut_lines,
    garbage_line,
    bad_utf8,
    crlf,
    change_seq,
    envelope_field,
    retype_data,
    repair_read_data,
    message_field,
    event_type,
    range_seqs,
    header_field,
)
PHYSICAL: tuple[Mutation, ...] = (cut_bytes, flip_byte, splice_frames, torn_tail_record)


def mutants(bases: list[Base], per_base: int, seed: int) -> Iterator[tuple[Artifact, str]]:
    """Every base unchanged in both compressions, then `per_base` seeded mutants of each in each."""
    rng = random.Random(seed)
    for base in bases:
        plain = Artifact(base.name, "none", base, dumps(base.header), base.batches)
        for compression in ("zstd", "none"):
            yield replace(plain, name=f"{base.name}~{compression}", mutation="unchanged"), compression
            made = 0
            tries = 0
            while made < per_base and tries < per_base * 10:
                tries += 1
                mutation = rng.choice(LOGICAL + PHYSICAL)
                artifact = mutation(plain, rng, compression)
                if artifact is None:
                    continue
                if rng.random() < 0.15 and artifact.raw is None:  # two kinds of damage at once
                    second = rng.choice(LOGICAL + PHYSICAL)(artifact, rng, compression)
                    if second is not None:
                        artifact = replace(second, mutation=f"{artifact.mutation}; {second.mutation}")
                yield replace(artifact, name=f"{base.name}~{compression}~{made}"), compression
                made += 1
