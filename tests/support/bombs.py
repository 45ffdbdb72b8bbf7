"""Tiny files that expand enormously: the inputs of the decompression limits."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import BinaryIO, cast

import zstandard

from tests.support.builders import T0, LogBuilder, header
from tests.support.writers import dumps, header_line, new_store, write_sqlite_session, zstd_frame

MIB = 1 << 20


def zstd_bomb(path: Path, expands_to: int) -> Path:
    """A real header frame, then one frame of zeros `expands_to` bytes long."""
    with path.open("wb") as f:
        f.write(zstd_frame(header_line(header("zstd-bomb"))))
        with zstandard.ZstdCompressor(level=3, write_checksum=True).stream_writer(f, closefd=False) as w:
            zero = bytes(MIB)
            for _ in range(expands_to // MIB):
                w.write(zero)
    return path


def zip_bomb(path: Path, expands_to: int, name: str = "session.jsonl") -> Path:
    """A ZIP whose one member deflates to `expands_to` zero bytes (< 4 GiB).

    One MiB of zeros is deflated once with a full flush, which makes the
    piece byte-aligned and independent of what came before, then repeated."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = co.compress(bytes(MIB)) + co.flush(zlib.Z_FULL_FLUSH)
    count = expands_to // MIB
    data = piece * count + zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    crc = 0
    zero = bytes(MIB)
    for _ in range(count):
        crc = zlib.crc32(zero, crc)
    raw = name.encode()
    size = count * MIB
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), size, len(raw), 0) + raw
    central = (
        struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, len(data), size, len(raw), 0, 0, 0, 0, 0, 0
        )
        + raw
    )
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    path.write_bytes(local + data + central + end)
    return path


# -- hostile shapes within the limits: tiny records by the million, one line too long --------------


def _zstd_stream(f: BinaryIO, pieces: Iterable[bytes]) -> None:
    """One zstd frame of the pieces, written as they stream (no content size: it is not known)."""
    with zstandard.ZstdCompressor(level=3, write_checksum=True).stream_writer(f, closefd=False) as w:
        for piece in pieces:
            w.write(piece)


def _repeat(piece: bytes, total: int) -> Iterator[bytes]:
    """`piece` repeated to `total` bytes, a MiB or so at a time."""
    block = piece * max(1, MIB // len(piece))
    left = total
    while left > 0:
        yield block[:left]
        left -= len(block)


def tiny_records_zstd(path: Path, count: int, record: bytes = b"{}", session_id: str = "tiny-records") -> Path:
    """A header frame, then one frame of `count` lines of `record`: millions of lines from a few hundred bytes."""
    with path.open("wb") as f:
        f.write(zstd_frame(header_line(header(session_id))))
        _zstd_stream(f, _repeat(record + b"\n", count * (len(record) + 1)))
    return path


def tiny_records_jsonl(path: Path, count: int, record: bytes = b"{}", session_id: str = "tiny-records") -> Path:
    """A header line, then `count` lines of `record`, plain."""
    with path.open("wb") as f:
        f.write(header_line(header(session_id)))
        for block in _repeat(record + b"\n", count * (len(record) + 1)):
            f.write(block)
    return path


def tiny_records_root(root: Path, count: int) -> Path:
    """`root` holding one session, `tiny`, of `count` `{}` lines: its first 1,000 rows each after their two
    listed findings, the rest one run row (`seq-1000-{count - 1}`)."""
    (root / "tiny").mkdir(parents=True, exist_ok=True)
    tiny_records_jsonl(root / "tiny" / "session.jsonl", count)
    return root


def title_line(seq: int, title_bytes: int) -> Iterator[bytes]:
    """A valid `session/title` event whose title is `title_bytes` long, streamed."""
    yield b'{"type":"session/title","seq":%d,"time":%d,"data":{"title":"' % (seq, T0 + seq)
    yield from _repeat(b"a", title_bytes)
    yield b'"}}\n'


def long_line_text(line_bytes: int, *, before: int = 1, session_id: str = "long-line") -> Iterator[bytes]:
    """A header line, `before` small valid events, then one valid event about `line_bytes` long (line
    `before + 2`) and one more small event after it."""
    yield header_line(header(session_id))
    for seq in range(before):
        yield from title_line(seq, 8)
    yield from title_line(before, line_bytes)
    yield from title_line(before + 1, 8)


def long_line_jsonl(path: Path, line_bytes: int, *, before: int = 1, session_id: str = "long-line") -> Path:
    """A plain log whose line `before + 2` is `line_bytes` long."""
    with path.open("wb") as f:
        for piece in long_line_text(line_bytes, before=before, session_id=session_id):
            f.write(piece)
    return path


def long_line_zstd(path: Path, line_bytes: int, *, before: int = 1, session_id: str = "long-line") -> Path:
    """A zstd artifact whose line `before + 2` is `line_bytes` long: a few KiB of file."""
    text = long_line_text(line_bytes, before=before, session_id=session_id)
    with path.open("wb") as f:
        f.write(zstd_frame(next(text)))
        _zstd_stream(f, text)
    return path


def long_line_zip(path: Path, line_bytes: int, *, before: int = 1, session_id: str = "long-line") -> Path:
    """An export ZIP whose session.jsonl holds one line `line_bytes` long, deflated."""
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
        zf.open("session.jsonl", "w", force_zip64=True) as member,
    ):
        for piece in long_line_text(line_bytes, before=before, session_id=session_id):
            member.write(piece)
    return path


def big_blob_sqlite(path: Path, blob_bytes: int) -> Path:
    """A dsh store with one session whose one event's zstd data blob expands to `blob_bytes`."""
    conn = new_store(path)
    write_sqlite_session(conn, header("big-blob"), [])
    buffer = io.BytesIO()
    pieces = chain([b'{"title":"'], _repeat(b"a", blob_bytes), [b'"}'])
    _zstd_stream(cast(BinaryIO, buffer), pieces)
    conn.execute(
        "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ("big-blob", 0, "session/title", T0, buffer.getvalue(), None, None, None),
    )
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = delete")
    conn.close()
    return path


def many_blobs_sqlite(path: Path, rows: int, blob_bytes: int) -> Path:
    """A dsh store with one session of `rows` title events, each a zstd blob expanding to `blob_bytes`:
    every row within the line limit, their sum past a small session limit."""
    conn = new_store(path)
    write_sqlite_session(conn, header("many-blobs"), [])
    blob = zstandard.ZstdCompressor().compress(b'{"title":"' + b"a" * blob_bytes + b'"}')
    conn.executemany(
        "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [("many-blobs", seq, "session/title", T0 + seq, blob, None, None, None) for seq in range(rows)],
    )
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = delete")
    conn.close()
    return path


def subagents_zip(path: Path, count: int) -> Path:
    """An export ZIP of one session and `count` subagent sessions, each one small turn."""
    b = LogBuilder()
    b.turn(1)
    body = b"".join(dumps(e) + b"\n" for e in b.events)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("session.jsonl", header_line(header("parent")) + body)
        for i in range(count):
            child = header(f"child-{i:05d}", parentSession="parent", origin="subagent", delegationDepth=1)
            zf.writestr(f"subagents/child-{i:05d}/session.jsonl", header_line(child) + body)
    return path
