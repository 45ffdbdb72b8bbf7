"""Decoded JSONL text, read as a stream of lines and re-read by byte range.

Every JSONL carrier (plain file, zstd frames, ZIP member, uploaded bytes) is
reduced to one `Plaintext`: a scan walks its lines once, and later a window of
events is re-read by (offset, length) without decoding anything else.
"""

from __future__ import annotations

import bisect
import io
import mmap
import os
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import NamedTuple, Protocol

import zstandard
from cachetools import LRUCache

from .diagnostics import Diagnostic, Location

MIB = 1 << 20
READ_CHUNK = MIB
# lines in a batch, at most: a reader parses a batch at once, and that many events alive at a time
# stay in the processor's caches and out of the cycle collector's way
BATCH_LINES = 128
LINES_AT_ONCE = 1 << 16  # bytes of a chunk split into lines at a time


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """How much of one session a reader decodes: the server's `max_line_mb` and `max_decompressed_mb`
    settings, whose defaults `check` and `render` use too. A line (or SQLite data blob) over its limit is
    never held whole: reading stops before it, with a located finding, and what precedes it reads."""

    max_line_bytes: int = 64 * MIB
    # the decoded text of one session from a compressed carrier (zstd frames, a ZIP member) or SQLite rows
    max_session_bytes: int = 1024 * MIB

    def too_long(self, what: str) -> str:
        """Why `what` (a line, a SQLite row's data) is not read."""
        return f"{what} is over the {self.max_line_bytes / MIB:g} MiB line limit (setting max_line_mb): not read"

    def session_too_large(self) -> str:
        return (
            f"the decoded text is over the {self.max_session_bytes / MIB:g} MiB limit for one session "
            "(setting max_decompressed_mb): not read from here on"
        )


DEFAULT_LIMITS = ReadLimits()
# The codes of a carrier problem that stops reading at a limit: the verdict is then this reader's, not dsh's.
OVER_LIMIT = frozenset({"line-too-long", "too-large"})


class LineTooLong(ValueError):
    """The first line of a text is over the line limit: there is no header to read."""


class Plaintext(Protocol):
    label: str
    problems: list[Diagnostic]  # carrier-level defects met while decoding

    def chunks(self) -> Iterator[bytes]:
        """The decoded text in order, in pieces of any size."""

    def chunks_from(self, offset: int) -> Iterator[bytes]:
        """The decoded text from `offset` on, re-reading a file that has grown since."""

    def read(self, start: int, length: int) -> bytes:
        """Bytes of the decoded text from `start`."""

    @property
    def complete_end(self) -> int | None:
        """Where text from complete zstd frames ends, if the carrier has frames."""


class Line(NamedTuple):
    number: int  # 1-based
    offset: int  # byte offset of the line's first byte in the decoded text
    raw: bytes  # without its LF
    terminated: bool  # False for a final fragment with no LF


class LineBatch(NamedTuple):
    """The whole lines of one decoded chunk, split once: readers walk them in bulk."""

    number: int  # 1-based number of the first line
    offset: int  # byte offset of the first line in the decoded text
    lines: list[bytes]  # each with its LF (JSON reads it as whitespace), but a final fragment
    terminated: bool  # False only for a final fragment with no LF (then the one line)


def line_batches(chunks: Iterator[bytes], *, number: int = 0, base: int = 0) -> Iterator[LineBatch]:
    """Lines of the text, a batch per chunk; `number` and `base` say how many lines and bytes precede `chunks`."""
    carry: list[bytes] = []  # a line begun in earlier chunks: joined once its LF comes, not once per chunk
    for chunk in chunks:
        if not chunk:
            continue
        if carry and b"\n" not in chunk:
            carry.append(chunk)
            continue
        if not carry and chunk.find(b"\n") == len(chunk) - 1:  # one line (a long one comes alone): not copied
            yield LineBatch(number + 1, base, [chunk], True)
            number, base = number + 1, base + len(chunk)
            continue
        text = io.BytesIO(b"".join((*carry, chunk)) if carry else chunk)
        carry = []
        # LFs found by memchr, where bytes.split tests byte by byte; a slice of the chunk at a time, so a chunk of
        # tiny lines is not made a million line objects at once
        while lines := text.readlines(LINES_AT_ONCE):
            if not lines[-1].endswith(b"\n"):
                carry = [lines.pop()]  # the chunk's last line goes on in the next
            for i in range(0, len(lines), BATCH_LINES):
                batch = lines[i : i + BATCH_LINES] if len(lines) > BATCH_LINES else lines
                yield LineBatch(number + 1, base, batch, True)
                number += len(batch)
                base += sum(map(len, batch))
    if carry:
        yield LineBatch(number + 1, base, [b"".join(carry)], False)


def batch_lines(batch: LineBatch) -> Iterator[Line]:
    """The lines of `batch`, each with its number and offset, without its LF."""
    number, offset, lines, terminated = batch
    for line in lines:
        yield Line(number, offset, line[:-1] if terminated else line, terminated)
        number += 1
        offset += len(line)


def within_limits(text: Plaintext, chunks: Iterator[bytes], offset: int, limits: ReadLimits) -> Iterator[bytes]:
    """`chunks` (the text from `offset`) in whole lines, up to the first line over the line limit: the text
    ends before that line, and `text.problems` says where it is. Each line is held back until its LF shows
    it within the limit, so nothing of a line too long reaches a reader, and at most the limit of it is held.
    A final fragment without LF comes last, as it is."""
    limit = limits.max_line_bytes
    # a line begun in earlier chunks, in one buffer: its pieces go as they come, so a long line leaves no heap
    # of them behind (freed small blocks the C allocator keeps, while the line and its parse take new ones)
    held = bytearray()
    pos = offset  # where the next chunk starts in the text
    for chunk in chunks:
        first = chunk.find(b"\n")
        if first < 0:
            held += chunk
            pos += len(chunk)
            if len(held) > limit:
                _over_line_limit(text, pos - len(held), limits)
                return
            continue
        if len(held) + first > limit:
            _over_line_limit(text, pos - len(held), limits)
            return
        last = chunk.rfind(b"\n")
        inner = _long_line(chunk, first, last, limit) if last - first > limit else None
        cut = inner if inner is not None else last + 1
        if inner is None and len(chunk) - cut > limit:
            inner = cut  # the chunk ends in a line already too long
        rest = memoryview(chunk)[cut:] if inner is None else b""
        pos += len(chunk)
        if held:  # the line begun in earlier chunks goes alone, so that a reader need not copy it out
            held += memoryview(chunk)[: first + 1]
            line = bytes(held)
            held = bytearray(rest)  # the begun line's buffer goes before the line is read
            yield line
            del line
            if first + 1 < cut:
                yield chunk[first + 1 : cut]
        else:
            held = bytearray(rest)
            yield chunk if cut == len(chunk) else chunk[:cut]
        if inner is not None:
            _over_line_limit(text, pos - len(chunk) + inner, limits)
            return
    if held:
        yield bytes(held)


def _long_line(chunk: bytes, first: int, last: int, limit: int) -> int | None:
    """Where a line over `limit` bytes begins between the chunk's first and last LF, if one does. (Every
    line in a window of `limit + 1` bytes that holds an LF is within it: the window moves past them at once.)"""
    start = first + 1
    while last - start > limit:
        lf = chunk.rfind(b"\n", start, start + limit + 1)
        if lf < 0:
            return start
        start = lf + 1
    return None


def _over_line_limit(text: Plaintext, at: int, limits: ReadLimits) -> None:
    """Record that the line at `at` is too long (once: a text may be read more than once). Raises
    LineTooLong for the first line, which leaves nothing to read."""
    number = _line_at(text, at)
    message = limits.too_long(f"line {number}")
    if at == 0:
        raise LineTooLong(message)
    problem = Diagnostic("line-too-long", "error", message, Location(file=text.label, line=number, offset=at))
    if problem not in text.problems:
        text.problems.append(problem)


def _line_at(text: Plaintext, at: int) -> int:
    """The number of the line that starts at `at`, counted from the start again: only on the way to a finding."""
    number, pos = 1, 0
    while pos < at:
        piece = text.read(pos, min(READ_CHUNK, at - pos))
        if not piece:
            break
        number += piece.count(b"\n")
        pos += len(piece)
    return number


class PlaintextTooLarge(ValueError):
    pass


def read_text(read: Callable[[int], bytes], limits: ReadLimits) -> tuple[bytearray, Diagnostic | None]:
    """A whole text from `read`, to be held in memory (a bytearray: never copied whole), and why it stops
    short, if it does: before a line over the line limit (of which nothing is kept), or after the last whole
    line within the session limit. The problem's location names no file: the caller's label goes there.
    Raises LineTooLong when the first line is too long."""
    out = bytearray()
    line_start = 0
    while chunk := read(READ_CHUNK):
        out += chunk
        last = chunk.rfind(b"\n")
        if last >= 0:
            line_start = len(out) - len(chunk) + last + 1
        if len(out) - line_start > limits.max_line_bytes:
            del out[line_start:]
            number = out.count(b"\n") + 1
            if line_start == 0:
                raise LineTooLong(limits.too_long("line 1"))
            where = Location(line=number, offset=line_start)
            return out, Diagnostic("line-too-long", "error", limits.too_long(f"line {number}"), where)
        if len(out) > limits.max_session_bytes:
            del out[out.rfind(b"\n", 0, limits.max_session_bytes) + 1 :]
            return out, Diagnostic("too-large", "error", limits.session_too_large(), Location(offset=len(out)))
    return out, None


class BytesPlaintext:
    """Text already in memory: an upload, a ZIP member, a test's bytes."""

    def __init__(self, data: bytes | bytearray, label: str, limits: ReadLimits = DEFAULT_LIMITS) -> None:
        self._data = data
        self.label = label
        self.limits = limits
        self.problems: list[Diagnostic] = []

    def chunks(self) -> Iterator[bytes]:
        return self.chunks_from(0)

    def chunks_from(self, offset: int) -> Iterator[bytes]:
        return within_limits(self, self._pieces(offset), offset, self.limits)

    def _pieces(self, offset: int) -> Iterator[bytes]:
        view = memoryview(self._data)
        for start in range(offset, len(self._data), READ_CHUNK):
            yield bytes(view[start : start + READ_CHUNK])

    def read(self, start: int, length: int) -> bytes:
        return bytes(memoryview(self._data)[start : start + length])

    @property
    def complete_end(self) -> int | None:
        return None


class FilePlaintext:
    """A plain JSONL file on disk, read in chunks and re-read by offset."""

    def __init__(self, path: str, label: str | None = None, limits: ReadLimits = DEFAULT_LIMITS) -> None:
        self.path = path
        self.label = label or path
        self.limits = limits
        self.problems: list[Diagnostic] = []

    def chunks(self) -> Iterator[bytes]:
        return self.chunks_from(0)

    def chunks_from(self, offset: int) -> Iterator[bytes]:
        return within_limits(self, self._pieces(offset), offset, self.limits)

    def _pieces(self, offset: int) -> Iterator[bytes]:
        with open(self.path, "rb") as f:
            f.seek(offset)
            while chunk := f.read(READ_CHUNK):
                yield chunk

    def read(self, start: int, length: int) -> bytes:
        fd = os.open(self.path, os.O_RDONLY)
        try:
            return os.pread(fd, length, start)
        finally:
            os.close(fd)

    @property
    def complete_end(self) -> int | None:
        return None


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
FRAME_HEADER_MAX = 18  # bytes: magic, descriptor, window, dictionary id and content size at their longest
FRAME_GROUP = 1 << 14  # bytes of text decoded in one call, at most (one frame may take it past)


@dataclass(frozen=True, slots=True)
class FrameScan:
    frames: tuple[tuple[int, int], ...]  # (start, end) byte ranges of complete frames
    torn_start: int | None  # start of a final frame cut short by EOF
    error: tuple[int, str] | None  # (offset, reason) of a framing defect


def scan_frames(buf: bytes | mmap.mmap) -> FrameScan:
    """Find frame boundaries without decompressing (docs/format.md §1.1 reader algorithm)."""
    frames: list[tuple[int, int]] = []
    pos = 0
    size = len(buf)
    while pos < size:
        head = buf[pos : pos + 4]
        if head != ZSTD_MAGIC[: len(head)]:
            return FrameScan(tuple(frames), None, (pos, "invalid frame magic"))
        p = pos + 4
        if p >= size:
            return FrameScan(tuple(frames), pos, None)
        fhd = buf[p]
        if fhd & 0x18:
            return FrameScan(tuple(frames), None, (p, "reserved bits set in the frame header descriptor"))
        single_segment = (fhd >> 5) & 1
        has_checksum = (fhd >> 2) & 1
        p += 1
        if not single_segment:
            p += 1
        p += (0, 1, 2, 4)[fhd & 3]
        p += (1 if single_segment else 0, 2, 4, 8)[fhd >> 6]
        while True:
            if p + 3 > size:
                return FrameScan(tuple(frames), pos, None)
            block = int.from_bytes(buf[p : p + 3], "little")
            block_type = (block >> 1) & 3
            if block_type == 3:
                return FrameScan(tuple(frames), None, (p, "reserved zstd block type"))
            p += 3 + (1 if block_type == 1 else block >> 3)
            if block & 1:
                break
        if has_checksum:
            p += 4
        if p > size:
            return FrameScan(tuple(frames), pos, None)
        frames.append((pos, p))
        pos = p
    return FrameScan(tuple(frames), None, None)


def decompress_frame(frame: bytes, limit: int, dctx: zstandard.ZstdDecompressor | None = None) -> bytes:
    """One complete frame, checksum verified by libzstd; at most `limit` bytes. A scan passes
    one `dctx` for all its frames: making a decompression context per frame costs more than a small frame."""
    dctx = dctx or zstandard.ZstdDecompressor()
    try:
        # the common case in one call: a frame that declares its size (dsh's writer's do) within the limit
        if 0 <= zstandard.frame_content_size(frame) <= limit:
            return dctx.decompress(frame)
    except zstandard.ZstdError:
        pass  # decoded again below, so that a bad frame is reported in the stream reader's words
    reader = dctx.stream_reader(io.BytesIO(frame), read_across_frames=False)
    out = bytearray()
    while block := reader.read(READ_CHUNK):
        out += block
        if len(out) > limit:
            raise PlaintextTooLarge(f"decompressed text exceeds {limit} bytes")
    return bytes(out)


def recover_torn_frame(frame: bytes, limits: ReadLimits) -> tuple[bytearray, Diagnostic | None]:
    """Whatever plaintext a frame cut short by EOF still yields, held as `read_text` holds a text."""
    reader = zstandard.ZstdDecompressor().stream_reader(frame, read_across_frames=False)
    try:
        return read_text(reader.read, limits)
    except zstandard.ZstdError:
        return bytearray(), None


# A frame that declares more text than this, or does not say, is decoded in pieces of READ_CHUNK, never whole.
STREAMED_FRAME = 4 * MIB
# Decoded frames kept for random reads, in bytes (the last one read always stays, whatever its size).
FRAME_CACHE_BYTES = 32 * MIB


class ZstdPlaintext:
    """Concatenated zstd frames (docs/format.md §1.1): complete frames are decoded
    one by one with checksums; a final torn frame yields what it can.

    Random reads decode only the frames they touch (a small LRU, bounded in
    bytes, keeps the most recent), so a window of a long session costs a few
    frames; a frame too large to decode whole is decoded only as far as a read needs.
    """

    def __init__(
        self, path: str, *, data: bytes | None = None, limits: ReadLimits = DEFAULT_LIMITS, label: str | None = None
    ) -> None:
        self.path = path
        self.label = label or path
        self.limits = limits
        self._limit = limits.max_session_bytes
        self._from_file = data is None
        self._buf = data if data is not None else _read_file(path)
        self.framing = scan_frames(self._buf)
        # decoded-text start offset of each complete frame, and its file range
        self._starts: list[int] = []
        self._ranges: list[tuple[int, int]] = []
        self._complete_end: int | None = None
        self.torn_plaintext = bytearray()
        self.problems: list[Diagnostic] = []
        # frame index → its text; each weighs its bytes, at most all the room: cachetools refuses a larger one
        self._cache: LRUCache[int, bytes] = LRUCache(
            FRAME_CACHE_BYTES, getsizeof=lambda text: min(len(text), FRAME_CACHE_BYTES)
        )

    @property
    def complete_end(self) -> int | None:
        return self._complete_end

    def chunks(self) -> Iterator[bytes]:
        return self.chunks_from(0)

    def chunks_from(self, offset: int) -> Iterator[bytes]:
        return within_limits(self, self._decoded(offset), offset, self.limits)

    def _decoded(self, offset: int) -> Iterator[bytes]:
        """Decode frames from the one holding `offset`; frames before it are known and unchanged."""
        if offset and self._from_file:
            self._buf = _read_file(self.path)  # the file grew: only frames past `offset` are decoded
            self.framing = scan_frames(self._buf)
        first = bisect.bisect_right(self._starts, offset) - 1 if offset else 0
        if offset and (first < 0 or self._complete_end is None or offset >= self._complete_end):
            first = len(self._starts)  # past every complete frame: start at the first new one
        total = self._starts[first] if first < len(self._starts) else (self._complete_end or 0)
        del self._starts[first:], self._ranges[first:]
        self.problems.clear()
        self.torn_plaintext = bytearray()
        # kept current while frames decode: a scan asks it whether a line lies in a complete frame
        self._complete_end = total
        self._cache.clear()
        framing = self.framing
        dctx = zstandard.ZstdDecompressor()
        if not framing.frames:
            self._problem("missing-first-frame", "the first zstd frame (the header) is missing or incomplete", 0)
        frames = framing.frames[first:]
        k = 0
        while k < len(frames):
            group, text = self._decode_group(frames, k, self._limit - total, dctx)
            if group:  # frames decoded in one call, their text yielded as one chunk
                group_start = total
                for (start, end), size in group:
                    if not self._starts and text[:size].count(b"\n") != 1:
                        self._header_frame_problem(start)
                    self._starts.append(total)
                    self._ranges.append((start, end))
                    total += size
                self._complete_end = total
                k += len(group)
                skip = max(offset - group_start, 0)
                if skip < len(text):
                    yield text[skip:]
                continue
            start, end = frames[k]
            k += 1
            if not 0 <= _declared_size(self._buf, start) <= STREAMED_FRAME:
                total, full = yield from self._stream_frame(start, end, offset, dctx)
                if full:
                    self._problem("too-large", self.limits.session_too_large(), start)
                    return
                continue
            try:
                text = decompress_frame(self._buf[start:end], self._limit - total, dctx)
            except zstandard.ZstdError as exc:
                self._problem("bad-frame", f"zstd frame does not decode: {exc}", start)
                text = b""
            except PlaintextTooLarge:
                self._problem("too-large", self.limits.session_too_large(), start)
                return
            if not self._starts and text.count(b"\n") != 1:
                self._header_frame_problem(start)
            self._starts.append(total)
            self._ranges.append((start, end))
            skip = max(offset - total, 0)
            total += len(text)
            self._complete_end = total
            if skip < len(text):
                yield text[skip:]
        if framing.error is not None:
            error_offset, reason = framing.error
            self._problem("bad-framing", f"{reason} at byte {error_offset} of the file", error_offset)
        elif framing.torn_start is not None and framing.frames:
            room = ReadLimits(self.limits.max_line_bytes, max(self._limit - total, 0))
            try:
                self.torn_plaintext, stop = recover_torn_frame(self._buf[framing.torn_start :], room)
            except LineTooLong:  # the torn text's first line
                self.torn_plaintext, stop = bytearray(), Diagnostic("line-too-long", "error", "", Location(offset=0))
            self.problems.append(
                Diagnostic(
                    "torn-frame",
                    "info",
                    f"the final zstd frame is cut short ({len(self._buf) - framing.torn_start} bytes); "
                    f"{len(self.torn_plaintext)} bytes of text recovered from it",
                    Location(file=self.label, offset=framing.torn_start),
                )
            )
            if stop is not None and stop.code == "too-large":
                self._problem("too-large", stop.message, framing.torn_start)
            elif stop is not None:
                at = total + (stop.location.offset or 0)
                number = _line_at(self, at)
                self._problem("line-too-long", self.limits.too_long(f"line {number}"), at, line=number)
            skip = max(offset - total, 0)
            if skip < len(self.torn_plaintext):
                yield bytes(memoryview(self.torn_plaintext)[skip:])

    def _stream_frame(
        self, start: int, end: int, offset: int, dctx: zstandard.ZstdDecompressor
    ) -> Generator[bytes, None, tuple[int, bool]]:
        """A frame too large to decode whole (or that does not say its size), in pieces as they decode, up to
        the session limit; returns where its text ends and whether it reached the limit. A frame that fails part
        way keeps the text it gave; the failure is its problem."""
        total = self._complete_end or 0
        header = not self._starts
        self._starts.append(total)
        self._ranges.append((start, end))
        newlines = 0
        full = False
        try:
            with dctx.stream_reader(self._buf[start:end], read_across_frames=False) as reader:
                while piece := reader.read(READ_CHUNK):
                    if total + len(piece) > self._limit:
                        piece, full = piece[: self._limit - total], True
                    if header:
                        newlines += piece.count(b"\n")
                    skip = max(offset - total, 0)
                    total += len(piece)
                    self._complete_end = total
                    if skip < len(piece):
                        yield piece[skip:] if skip else piece
                    if full:
                        break
        except zstandard.ZstdError as exc:
            self._problem("bad-frame", f"zstd frame does not decode: {exc}", start)
        if header and newlines != 1:
            self._header_frame_problem(start)
        return total, full

    def _header_frame_problem(self, start: int) -> None:
        self._problem(
            "header-frame", "corrupt session log: the header frame must contain exactly one complete line", start
        )

    def _decode_group(
        self, frames: tuple[tuple[int, int], ...], k: int, limit: int, dctx: zstandard.ZstdDecompressor
    ) -> tuple[list[tuple[tuple[int, int], int]], bytes]:
        """Frames from the `k`-th on decoded in one call, as many as declare their sizes (dsh's do) up to
        FRAME_GROUP bytes of text within `limit`: each frame's (range, size), and their text. Nothing when
        fewer than two qualify or the call fails: then the next frame is decoded alone, to report it as it is.
        (A call per small frame costs more than the decoding; libzstd still checks each frame's checksum.)"""
        group: list[tuple[tuple[int, int], int]] = []
        size_sum = 0
        for start, end in islice(frames, k, None):
            size = _declared_size(self._buf, start)
            if size < 0 or size > STREAMED_FRAME or size_sum + size > limit:
                break
            group.append(((start, end), size))
            size_sum += size
            if size_sum >= FRAME_GROUP:
                break
        if len(group) < 2:
            return [], b""
        try:
            text = dctx.decompressobj(read_across_frames=True).decompress(self._buf[group[0][0][0] : group[-1][0][1]])
        except zstandard.ZstdError:
            return [], b""
        return (group, text) if len(text) == size_sum else ([], b"")

    def _problem(self, code: str, message: str, offset: int, line: int | None = None) -> None:
        self.problems.append(Diagnostic(code, "error", message, Location(self.label, line, None, offset)))

    def read(self, start: int, length: int) -> bytes:
        end = start + length
        pieces: list[memoryview] = []  # joined once: a long read spans a hundred frames or more
        got = 0
        i = max(bisect.bisect_right(self._starts, start) - 1, 0)
        dctx = zstandard.ZstdDecompressor()  # one a read, for every frame it decodes (a thread's own)
        while got < length and i < len(self._ranges):
            fstart = self._starts[i]
            piece = memoryview(self._frame_text(i, end - fstart, dctx))[max(start - fstart, 0) : end - fstart]
            pieces.append(piece)
            got += len(piece)
            i += 1
        if got < length and self._complete_end is not None and end > self._complete_end:
            tstart = max(start - self._complete_end, 0)
            pieces.append(memoryview(self.torn_plaintext)[tstart : end - self._complete_end])
        return b"".join(pieces)

    def _frame_text(self, i: int, upto: int, dctx: zstandard.ZstdDecompressor) -> bytes:
        """The text of frame `i`, as far as `upto` bytes at least (a frame too large to decode whole is decoded
        no further than a read needs, and only as far as the scan read it)."""
        text = self._cache.get(i)
        if text is not None and len(text) >= min(upto, self._size_of(i)):
            return text
        a, b = self._ranges[i]
        if 0 <= _declared_size(self._buf, a) <= STREAMED_FRAME:
            text = decompress_frame(self._buf[a:b], self._limit, dctx)
        else:
            text = self._stream_prefix(a, b, min(self._size_of(i), -(-upto // READ_CHUNK) * READ_CHUNK))
        self._cache[i] = text
        return text

    def _size_of(self, i: int) -> int:
        """The bytes of text frame `i` gave the scan."""
        following = self._starts[i + 1] if i + 1 < len(self._starts) else self._complete_end
        return (following or 0) - self._starts[i]

    def _stream_prefix(self, start: int, end: int, size: int) -> bytes:
        out = bytearray()
        try:
            with zstandard.ZstdDecompressor().stream_reader(self._buf[start:end], read_across_frames=False) as reader:
                while len(out) < size and (piece := reader.read(min(READ_CHUNK, size - len(out)))):
                    out += piece
        except zstandard.ZstdError:
            pass  # the scan met the same failure here and read only what came before it
        return bytes(out)


def _declared_size(buf: bytes, start: int) -> int:
    """The text size the frame at `start` declares; -1 when it does not say or its header does not read."""
    try:
        return int(zstandard.frame_content_size(buf[start : start + FRAME_HEADER_MAX]))
    except zstandard.ZstdError:
        return -1


def _read_file(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()
