"""Images an export ZIP carries (`media/<attachmentId>.<ext>`, docs/format.md §1.4), shown in their rows.

The page fetches each from its route (`media.py`); the one-file export (`dsh-inspect render`)
has no server to fetch from, so it carries them itself as `data:` URIs, within a budget.
"""

from __future__ import annotations

import base64
import os
import re
import zipfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .registry import Entry

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


def media_type(member: str) -> str:
    return MEDIA_TYPES[member.rsplit(".", 1)[1]]


def read_member(archive: zipfile.ZipFile, member: str, limit: int) -> bytes | None:
    """The member's bytes, or None when it holds more than `limit`: read no further than that,
    because the size a ZIP declares may lie (a bomb)."""
    with archive.open(member) as f:
        data = f.read(limit + 1)
    return data if len(data) <= limit else None


@dataclass(frozen=True, slots=True)
class InlineImages:
    """The images an export carries (attachment id → `data:` URI) and those left out over the budget."""

    uris: dict[str, str]
    left_out: tuple[str, ...] = ()
    left_out_bytes: int = 0  # as the archive declares them: they are never read


def inline_images(entry: Entry, shown: Iterable[str], budget: int) -> InlineImages:
    """`data:` URIs for the archive's images, in the order shown, while their bytes fit in `budget`.

    `shown` names an image once per place it shows, as each place carries its own copy. The
    order is the page's, so a budget that runs out keeps the images a reader meets first;
    a later, smaller image still goes in when it fits what is left."""
    members = media_of(entry)
    places = Counter(a for a in shown if a in members)
    if not places:
        return InlineImages({})
    uris: dict[str, str] = {}
    left_out: list[str] = []
    left_out_bytes = 0
    remaining = budget
    with zipfile.ZipFile(entry.source.path) as archive:
        for attachment, copies in places.items():
            member = members[attachment]
            declared = archive.getinfo(member).file_size
            fits = declared * copies <= remaining
            data = read_member(archive, member, min(remaining // copies, MAX_IMAGE_BYTES)) if fits else None
            if data is None:
                left_out.append(attachment)
                left_out_bytes += declared
                continue
            remaining -= len(data) * copies
            uris[attachment] = f"data:{media_type(member)};base64,{base64.b64encode(data).decode('ascii')}"
    return InlineImages(uris, tuple(left_out), left_out_bytes)
