"""Images an export ZIP carries (`media/<attachmentId>.<ext>`, FORMAT.md §1.4), shown in their rows."""

from __future__ import annotations

import os
import re
import zipfile
from functools import lru_cache

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from app.web.registry import Entry
from app.web.state import web

router = APIRouter()
_MEMBER = re.compile(r"media/(sha256:[0-9a-f]{64})\.(png|jpg|webp|gif)")
MEDIA_TYPES = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}
MAX_IMAGE_BYTES = 32 << 20


@lru_cache(maxsize=64)
def _members(path: str, version: tuple[int, int]) -> dict[str, str]:
    try:
        with zipfile.ZipFile(path) as archive:
            return {m.group(1): name for name in archive.namelist() if (m := _MEMBER.fullmatch(name))}
    except (OSError, zipfile.BadZipFile):
        return {}


def media_of(entry: Entry) -> dict[str, str]:
    """Attachment id → ZIP member, for a session that came in an export ZIP (else empty)."""
    if entry.source.kind != "zip":
        return {}
    try:
        st = os.stat(entry.source.path)
    except OSError:
        return {}
    return _members(entry.source.path, (st.st_size, st.st_mtime_ns))


@router.get("/sessions/{key}/media/{attachment_id}", include_in_schema=False)
def media(request: Request, key: str, attachment_id: str) -> Response:
    entry = web(request).entry(key)
    member = media_of(entry).get(attachment_id)
    if member is None:
        raise HTTPException(404, "no such image in this session's archive")
    with zipfile.ZipFile(entry.source.path) as archive, archive.open(member) as f:
        data = f.read(MAX_IMAGE_BYTES + 1)
    if len(data) > MAX_IMAGE_BYTES:
        raise HTTPException(413, "image too large to show")
    return Response(data, media_type=MEDIA_TYPES[member.rsplit(".", 1)[1]],
                    headers={"Cache-Control": "private, max-age=3600"})
