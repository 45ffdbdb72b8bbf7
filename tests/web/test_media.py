"""Images an export ZIP carries show in their rows; without the archive's copy, a tag names them."""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from pathlib import Path

import httpx
import orjson

from tests.support.builders import LogBuilder, header
from tests.support.server import live_server


def png_1x1() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", bytes.fromhex("0000000100000001080200000090")[:13])
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


def session_with_image(attachment: str) -> bytes:
    b = LogBuilder()
    b.turn(1)
    image = {"type": "image", "attachment": {"attachmentId": attachment, "mediaType": "image/png", "bytes": 69,
                                             "width": 1, "height": 1, "name": "dot.png"}}
    prompt = next(e for e in b.events if e["type"] == "user/message")
    prompt["data"]["content"].append(image)
    return b"".join(orjson.dumps(x) + b"\n" for x in [header("with-image"), *b.events])


def test_an_export_zip_image_shows_in_its_row(tmp_path: Path) -> None:
    png = png_1x1()
    attachment = "sha256:" + hashlib.sha256(png).hexdigest()
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("session.jsonl", session_with_image(attachment))
        z.writestr(f"media/{attachment}.png", png)
    plain = tmp_path / "plain" / "session.jsonl"
    plain.parent.mkdir()
    plain.write_bytes(session_with_image(attachment).replace(b'"with-image"', b'"no-archive"', 1))
    with live_server([str(archive), str(plain)]) as url:
        page = httpx.get(f"{url}/sessions/with-image").text
        image = httpx.get(f"{url}/sessions/with-image/media/{attachment.replace(':', '%3A')}")
        missing = httpx.get(f"{url}/sessions/with-image/media/sha256%3A{'0' * 64}")
        escape = httpx.get(f"{url}/sessions/with-image/media/..%2Fsession.jsonl")
        plain_page = httpx.get(f"{url}/sessions/no-archive").text
    assert f'src="/sessions/with-image/media/sha256%3A{attachment[7:]}"' in page and "data-image" in page
    assert image.status_code == 200 and image.content == png and image.headers["content-type"] == "image/png"
    assert missing.status_code == escape.status_code == 404
    assert "data-image-tag>Image dot.png image/png 1×1<" in plain_page and "<img" not in plain_page
