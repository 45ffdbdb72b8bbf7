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
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import NamedTuple, Protocol

import zstandard

from .diagnostics import Diagnostic, Location

READ_CHUNK = 1 << 20
# lines in a batch, at most: a reader parses a batch at once, and that many events alive at a time
# stay in the processor's caches and out of the cycle collector's way
BATCH_LINES = 128


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
    carry = b""
    for chunk in chunks:
        if not chunk:
            continue
        text = carry + chunk if carry else chunk
        lines = io.BytesIO(text).readlines()  # LFs found by memchr, where bytes.split tests byte by byte
        carry = b"" if lines[-1].endswith(b"\n") else lines.pop()
        for i in range(0, len(lines), BATCH_LINES):
            batch = lines[i : i + BATCH_LINES] if len(lines) > BATCH_LINES else lines
            yield LineBatch(number + 1, base, batch, True)
            number += len(batch)
            base += sum(map(len, batch))
    if carry:
        yield LineBatch(number + 1, base, [carry], False)


def iter_lines(chunks: Iterator[bytes], *, number: int = 0, base: int = 0) -> Iterator[Line]:
    """Lines of the text one by one; `number` and `base` say how many lines and bytes precede `chunks`."""
    for batch in line_batches(chunks, number=number, base=base):
        yield from batch_lines(batch)


def batch_lines(batch: LineBatch) -> Iterator[Line]:
    """The lines of `batch`, each with its number and offset, without its LF."""
    number, offset, lines, terminated = batch
    for line in lines:
        yield Line(number, offset, line[:-1] if terminated else line, terminated)
        number += 1
        offset += len(line)


class BytesPlaintext:
    """Text already in memory: an upload, a ZIP member, a test's bytes."""

    def __init__(self, data: bytes, label: str) -> None:
        self._data = data
        self.label = label
        self.problems: list[Diagnostic] = []

    def chunks(self) -> Iterator[bytes]:
        return self.chunks_from(0)

    def chunks_from(self, offset: int) -> Iterator[bytes]:
        for start in range(offset, len(self._data), READ_CHUNK):
            yield self._data[start : start + READ_CHUNK]

    def read(self, start: int, length: int) -> bytes:
        return self._data[start : start + length]

    @property
    def complete_end(self) -> int | None:
        return None


class FilePlaintext:
    """A plain JSONL file on disk, read in chunks and re-read by offset."""

    def __init__(self, path: str, label: str | None = None) -> None:
        self.path = path
        self.label = label or path
        self.problems: list[Diagnostic] = []

    def chunks(self) -> Iterator[bytes]:
        return self.chunks_from(0)

    def chunks_from(self, offset: int) -> Iterator[bytes]:
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
    """Find frame boundaries without decompressing (FORMAT.md §1.1 reader algorithm)."""
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


class PlaintextTooLarge(ValueError):
    pass


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


def recover_torn_frame(frame: bytes, limit: int) -> bytes:
    """Whatever plaintext a frame cut short by EOF still yields."""
    dobj = zstandard.ZstdDecompressor().decompressobj()
    try:
        out = dobj.decompress(frame)
    except zstandard.ZstdError:
        return b""
    return out[:limit]


class ZstdPlaintext:
    """Concatenated zstd frames (FORMAT.md §1.1): complete frames are decoded
    one by one with checksums; a final torn frame yields what it can.

    Random reads decode only the frames they touch (a small LRU keeps the
    most recent), so a window of a long session costs a few frames.
    """

    def __init__(self, path: str, *, data: bytes | None = None, limit: int = 1 << 34, label: str | None = None) -> None:
        self.path = path
        self.label = label or path
        self._limit = limit
        self._from_file = data is None
        self._buf = data if data is not None else _read_file(path)
        self.framing = scan_frames(self._buf)
        # decoded-text start offset of each complete frame, and its file range
        self._starts: list[int] = []
        self._ranges: list[tuple[int, int]] = []
        self._complete_end: int | None = None
        self.torn_plaintext = b""
        self.problems: list[Diagnostic] = []
        self._cache: OrderedDict[int, bytes] = OrderedDict()

    @property
    def complete_end(self) -> int | None:
        return self._complete_end

    def chunks(self) -> Iterator[bytes]:
        return self.chunks_from(0)

    def chunks_from(self, offset: int) -> Iterator[bytes]:
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
        self.torn_plaintext = b""
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
                        self._problem(
                            "header-frame",
                            "corrupt session log: the header frame must contain exactly one complete line",
                            start,
                        )
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
            try:
                text = decompress_frame(self._buf[start:end], self._limit - total, dctx)
            except zstandard.ZstdError as exc:
                self._problem("bad-frame", f"zstd frame does not decode: {exc}", start)
                text = b""
            except PlaintextTooLarge as exc:
                self._problem("too-large", str(exc), start)
                return
            if not self._starts and text.count(b"\n") != 1:
                self._problem(
                    "header-frame",
                    "corrupt session log: the header frame must contain exactly one complete line",
                    start,
                )
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
            self.torn_plaintext = recover_torn_frame(self._buf[framing.torn_start :], self._limit - total)
            self.problems.append(
                Diagnostic(
                    "torn-frame",
                    "info",
                    f"the final zstd frame is cut short ({len(self._buf) - framing.torn_start} bytes); "
                    f"{len(self.torn_plaintext)} bytes of text recovered from it",
                    Location(file=self.label, offset=framing.torn_start),
                )
            )
            skip = max(offset - total, 0)
            if skip < len(self.torn_plaintext):
                yield self.torn_plaintext[skip:]

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
            try:
                size = zstandard.frame_content_size(self._buf[start : start + FRAME_HEADER_MAX])
            except zstandard.ZstdError:
                break
            if size < 0 or size_sum + size > limit:
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

    def _problem(self, code: str, message: str, offset: int) -> None:
        self.problems.append(Diagnostic(code, "error", message, Location(file=self.label, offset=offset)))

    def read(self, start: int, length: int) -> bytes:
        out = bytearray()
        end = start + length
        i = max(bisect.bisect_right(self._starts, start) - 1, 0)
        while len(out) < length and i < len(self._ranges):
            text = self._frame_text(i)
            fstart = self._starts[i]
            out += text[max(start - fstart, 0) : end - fstart]
            i += 1
        if len(out) < length and self._complete_end is not None and end > self._complete_end:
            tstart = max(start - self._complete_end, 0)
            out += self.torn_plaintext[tstart : end - self._complete_end]
        return bytes(out)

    def _frame_text(self, i: int) -> bytes:
        text = self._cache.get(i)
        if text is None:
            a, b = self._ranges[i]
            text = decompress_frame(self._buf[a:b], self._limit)
            self._cache[i] = text
            if len(self._cache) > 8:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(i)
        return text


def _read_file(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()
