"""How far an upload's bytes expand, measured before anything else reads them.

Every decoder here streams in bounded chunks and stops at the limit, so a
zstd or ZIP bomb is refused after at most `max_decompressed_bytes` of
counting and a few MiB of memory, whatever it claims or hides. Bytes that do
not decode are not counted: the session reader reports them later.
"""

from __future__ import annotations

import mmap
import os
import zipfile
import zlib
from collections.abc import Callable
from contextlib import suppress
from typing import IO, cast

import zstandard

from ..log.plaintext import scan_frames
from ..log.sources import Kind
from ..log.sqlite_store import SqliteStore, StoreRefused
from .limits import LimitExceeded, Limits, mib

CHUNK = 1 << 20
_CD_HEADER = b"PK\x01\x02"
_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def take(self, n: int, where: str) -> None:
        self.used += n
        if self.used > self.limit:
            raise LimitExceeded(
                "max_decompressed_bytes", f"{where} decompresses past the limit of {mib(self.limit)} for one upload"
            )


def decoded_size(path: str, kind: Kind, limits: Limits) -> int:
    """Bytes a reader may decode from the file at `path`; raises LimitExceeded early."""
    budget = _Budget(limits.max_decompressed_bytes)
    if kind == "jsonl-zstd":
        _zstd_frames(path, budget)
    elif kind == "zip":
        _zip_members(path, limits, budget)
    elif kind == "sqlite":
        _sqlite_blobs(path, budget)
    else:
        budget.take(os.path.getsize(path), "the text")
    return budget.used


def _drain(read: Callable[[int], bytes], budget: _Budget, where: str) -> None:
    while chunk := read(CHUNK):
        budget.take(len(chunk), where)


class _Span:
    """`length` bytes of a file from where it stands: one frame, fed to the
    decoder without holding it in memory (the decoder would run on into the
    next frame if it could)."""

    def __init__(self, f: IO[bytes], length: int) -> None:
        self._f = f
        self._left = length

    def read(self, n: int = -1) -> bytes:
        n = self._left if n < 0 else min(n, self._left)
        data = self._f.read(n)
        self._left -= len(data)
        return data


def _zstd_frames(path: str, budget: _Budget) -> None:
    if os.path.getsize(path) == 0:
        return
    with open(path, "rb") as f:
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            framing = scan_frames(buf)
            size = len(buf)
        spans = list(framing.frames)
        if framing.error is None and framing.torn_start is not None and spans:
            spans.append((framing.torn_start, size))  # a torn frame still yields text
        for start, end in spans:
            f.seek(start)
            # stream_reader's source may be "any object with a read(size) method" (zstandard's docs)
            span = cast(IO[bytes], _Span(f, end - start))
            with (
                zstandard.ZstdDecompressor().stream_reader(span, read_across_frames=False) as reader,
                suppress(zstandard.ZstdError),
            ):
                _drain(reader.read, budget, f"the zstd frame at byte {start}")


def _is_read_member(name: str) -> bool:
    """The members anything here ever decodes: the logs and the export's images."""
    return (
        name == "session.jsonl"
        or name.startswith("media/")
        or (name.startswith("subagents/") and name.endswith("/session.jsonl"))
    )


def _zip_members(path: str, limits: Limits, budget: _Budget) -> None:
    entries = zip_entry_count(path, stop_after=limits.max_zip_entries)
    if entries is not None and entries > limits.max_zip_entries:
        raise LimitExceeded(
            "max_sessions_per_upload",
            f"the ZIP archive lists more than {limits.max_zip_entries} entries "
            f"(ten times the most sessions one upload may hold)",
        )
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        return
    with zf:
        for info in zf.infolist():
            if not _is_read_member(info.filename):
                continue
            try:
                with zf.open(info) as member:
                    _drain(member.read, budget, f"the ZIP member {info.filename!r}")
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError):
                continue


def zip_entry_count(path: str, *, stop_after: int) -> int | None:
    """Entries in the central directory that `zipfile` would parse (it reads the
    directory whole), counted by walking it without building anything; None
    when there is no end record. Stops counting past `stop_after`."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        tail_start = max(0, size - (22 + 0xFFFF))
        f.seek(tail_start)
        tail = f.read()
        at = tail.rfind(_EOCD)
        if at < 0 or at + 22 > len(tail):
            return None
        eocd_location = tail_start + at
        cd_size = int.from_bytes(tail[at + 12 : at + 16], "little")
        if at >= 20 and tail[at - 20 : at - 16] == _ZIP64_LOCATOR:
            f.seek(int.from_bytes(tail[at - 12 : at - 4], "little"))
            record = f.read(56)
            if record[:4] == _ZIP64_EOCD:
                cd_size = int.from_bytes(record[40:48], "little")
                eocd_location = int.from_bytes(tail[at - 12 : at - 4], "little")
        # zipfile finds the directory just before the end record, as here
        f.seek(max(0, eocd_location - cd_size))
        return _count_headers(f, cd_size, stop_after)


def _count_headers(f: IO[bytes], cd_size: int, stop_after: int) -> int:
    count = 0
    consumed = 0
    while consumed + 46 <= cd_size and count <= stop_after:
        head = f.read(46)
        if len(head) < 46 or head[:4] != _CD_HEADER:
            break
        skip = sum(int.from_bytes(head[i : i + 2], "little") for i in (28, 30, 32))
        f.seek(skip, os.SEEK_CUR)
        consumed += 46 + skip
        count += 1
    return count


def _sqlite_blobs(path: str, budget: _Budget) -> None:
    budget.take(os.path.getsize(path), "the database file")
    try:
        store = SqliteStore(path)
    except StoreRefused:
        return
    try:  # only from dsh's schema, every step under the store's clock: a hostile file stops in seconds
        for session_id, seq, blob in store.data_blobs():
            with (
                zstandard.ZstdDecompressor().stream_reader(blob, read_across_frames=False) as reader,
                suppress(zstandard.ZstdError),
            ):
                _drain(reader.read, budget, f"the data blob of session {session_id!r} row seq {seq}")
    except StoreRefused:
        return  # not a dsh store, or a damaged one: discovery says which
    finally:
        store.close()
