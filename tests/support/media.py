"""A one-pixel PNG, a session whose prompt carries it, and an export ZIP holding both."""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from pathlib import Path

import orjson

from tests.support.builders import LogBuilder, header


def png_1x1() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", bytes.fromhex("0000000100000001080200000090")[:13])
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def session_with_image(attachment: str) -> bytes:
    b = LogBuilder()
    b.turn(1)
    image = {
        "type": "image",
        "attachment": {
            "attachmentId": attachment,
            "mediaType": "image/png",
            "bytes": 69,
            "width": 1,
            "height": 1,
            "name": "dot.png",
        },
    }
    prompt = next(e for e in b.events if e["type"] == "user/message")
    prompt["data"]["content"].append(image)
    return b"".join(orjson.dumps(x) + b"\n" for x in [header("with-image"), *b.events])


def export_zip_with_image(archive: Path) -> tuple[str, bytes]:
    """Writes an export ZIP whose session shows one image; returns the attachment id and its bytes."""
    png = png_1x1()
    attachment = "sha256:" + hashlib.sha256(png).hexdigest()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("session.jsonl", session_with_image(attachment))
        z.writestr(f"media/{attachment}.png", png)
    return attachment, png
