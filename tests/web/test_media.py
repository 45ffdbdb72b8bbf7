"""Images an export ZIP carries show in their rows; without the archive's copy, a tag names them."""

from __future__ import annotations

from pathlib import Path

from tests.support.media import export_zip_with_image, session_with_image
from tests.support.server import app_client


def test_an_export_zip_image_shows_in_its_row(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    attachment, png = export_zip_with_image(archive)
    plain = tmp_path / "plain" / "session.jsonl"
    plain.parent.mkdir()
    plain.write_bytes(session_with_image(attachment).replace(b'"with-image"', b'"no-archive"', 1))
    with app_client([str(archive), str(plain)]) as client:
        page = client.get("/sessions/with-image").text
        image = client.get(f"/sessions/with-image/media/{attachment.replace(':', '%3A')}")
        missing = client.get(f"/sessions/with-image/media/sha256%3A{'0' * 64}")
        escape = client.get("/sessions/with-image/media/..%2Fsession.jsonl")
        plain_page = client.get("/sessions/no-archive").text
    assert f'src="/sessions/with-image/media/sha256%3A{attachment[7:]}"' in page and "data-image" in page
    assert image.status_code == 200 and image.content == png and image.headers["content-type"] == "image/png"
    assert missing.status_code == escape.status_code == 404
    assert "data-image-tag>Image dot.png image/png 1×1<" in plain_page and "<img" not in plain_page
