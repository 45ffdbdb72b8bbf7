"""Tiny files that expand enormously: the inputs of the decompression limits."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import zstandard

from tests.support.builders import header
from tests.support.writers import header_line, zstd_frame

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
