"""The images of a session that came in an export ZIP, one route each (`archive.py` finds them)."""

from __future__ import annotations

import zipfile

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

from ...sessions.archive import MAX_IMAGE_BYTES, media_of, media_type, read_member
from ..state import SessionEntry

router = APIRouter()


@router.get("/sessions/{key}/media/{attachment_id}", include_in_schema=False)
def media(entry: SessionEntry, attachment_id: str) -> Response:
    member = media_of(entry).get(attachment_id)
    if member is None:
        raise HTTPException(404, "no such image in this session's archive")
    with zipfile.ZipFile(entry.source.path) as archive:
        data = read_member(archive, member, MAX_IMAGE_BYTES)
    if data is None:
        raise HTTPException(413, "image too large to show")
    return Response(data, media_type=media_type(member), headers={"Cache-Control": "private, max-age=3600"})
