"""Uploads (`POST /api/uploads`), their pages and JSON twins, deletes, and the
original bytes of any session or upload.

An upload is the request body itself (`curl --data-binary @file
'/api/uploads?name=file'`), streamed to a temp file under `--data-dir`
while it is counted against `max_upload_mb`; the carrier is told by content.
"""

from __future__ import annotations

import itertools
import logging
import os
import zipfile
from collections.abc import Iterator
from functools import partial
from typing import Annotated, Any
from urllib.parse import quote, urlencode

import orjson
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse

from ...access import Identity
from ...log.sources import escapes
from ...sessions.priority import ELSEWHERE_BYTES
from ...sessions.registry import Entry, url_safe_id
from ...store import (
    Contents,
    ContentsReader,
    LimitExceeded,
    Limits,
    NoSessions,
    Stored,
    Upload,
    clean_name,
    mib,
    read_contents,
    valid_digest,
)
from ..present.twins import UploadJson, UploadsJson
from ..state import SessionEntry, State, WebState, Who
from ..uploading import (
    Labels,
    NotAdmitted,
    ProjectFull,
    admit,
    audit,
    checked_labels,
    entries_by_upload,
    no_room,
    over_quota,
    project_full,
    receive_body,
    refusal,
    store_of,
    stored_json,
    too_much,
    upload_json,
    visible,
)
from ..views import Served, page_and_twin, page_or_twin

router = APIRouter()
_log = logging.getLogger(__name__)
CHUNK = 1 << 20


def _upload(state: WebState, digest: str, who: Identity) -> Upload:
    """The upload, or 404: also for one holding a session `who` may not see (a hidden upload is a missing one)."""
    upload = store_of(state).upload(digest) if valid_digest(digest) else None
    if upload is None or not visible(upload, who):
        raise HTTPException(404, f"no upload {digest!r}")
    return upload


@router.post(
    "/api/uploads",
    status_code=201,
    summary="Upload a log, a zstd log, a SQLite store or an export ZIP",
    responses={
        200: {"description": "The same bytes were already stored (they gain the `label`s sent)"},
        413: {"description": "A limit was exceeded; the answer names the setting"},
        422: {"description": "Not a dsh session log (the answer says where reading stopped), or a `label` refused"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "The file's bytes, as they are",
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def create_upload(
    request: Request, state: State, who: Who, name: str | None = Query(None, max_length=1000), label: Labels = None
) -> Response:
    response = await _create_upload(request, state, who, name, label)
    target = _digest_of(response) or clean_name(name)
    await run_in_threadpool(audit, state, request, who, "upload", target, response.status_code)
    return response


def _digest_of(response: Response) -> str | None:
    """The digest an upload's answer names, when it stored (or found) one."""
    if response.status_code not in (200, 201) or not isinstance(response, JSONResponse):
        return None
    found = orjson.loads(bytes(response.body)).get("upload", {}).get("digest")
    return found if isinstance(found, str) else None


async def _create_upload(
    request: Request, state: WebState, who: Identity, name: str | None, label: list[str] | None
) -> Response:
    store = store_of(state)
    shown = clean_name(name)
    labels = checked_labels(label)
    if isinstance(labels, Response):
        return labels
    declared = request.headers.get("content-length", "")
    if (
        declared.isascii()
        and declared.isdigit()
        and len(declared) <= 19
        and int(declared) > store.limits.max_upload_bytes
    ):
        return too_much(
            state,
            shown,
            LimitExceeded(
                "max_upload_bytes",
                f"the upload is {mib(int(declared))}, larger than {mib(store.limits.max_upload_bytes)}",
            ),
        )
    received = await receive_body(request, state, shown)
    if isinstance(received, Response):
        return received
    if received.size == 0:
        received.temp.unlink(missing_ok=True)
        return refusal(400, "empty", f"{shown}: the upload is empty")
    over = await run_in_threadpool(over_quota, state, request, shown, received.size)
    if over is not None:
        received.temp.unlink(missing_ok=True)
        return over
    try:
        stored: Stored = await run_in_threadpool(
            partial(store.ingest, read=contents_reader(state, received.size)),
            received,
            shown,
            None if who.everything else who.actor,
            admit(state, who, received),
            labels,
        )
    except NotAdmitted as exc:
        return refusal(403, "project", f"{shown}: refused, {exc}")
    except ProjectFull as exc:
        return project_full(state, shown, exc)
    except LimitExceeded as exc:
        return too_much(state, shown, exc)
    except NoSessions as exc:
        return refusal(422, "not-a-session", exc.message, refused=exc.refused)
    except OSError as exc:
        return no_room(shown, exc)
    body = {
        "upload": await run_in_threadpool(stored_json, state, stored, who),
        "created": stored.created,
        "refused": [{"path": r.part, "reason": r.reason} for r in stored.refused],
    }
    return JSONResponse(body, status_code=201 if stored.created else 200)


# The uploads page: a page of uploads, newest first, through the catalog's index (`Catalog.page`), each
# with its sessions by title and id; `before` is the last upload of the page before, as `next` names it.
PAGE_SIZE = 50
SHOWN_SESSIONS = 5  # of an upload's sessions, the list names this many; its own page and the JSON twin, all
CURSOR = r"^[0-9]{1,18}-[0-9a-f]{64}$"  # an upload's `uploaded_at` (ms), a dash, its digest
# `?before=`: the cursor of the last upload of the page before, as `next` names it
Before = Annotated[
    str | None,
    Query(pattern=CURSOR, description="the page after this upload, as `next` names it (50 unless `limit` says)"),
]


def contents_reader(state: WebState, size: int) -> ContentsReader:
    """What reads an upload of `size` bytes: a large one the process for heavy reads reads, as the list and the
    search index read large logs (docs/decisions/0043): seconds of this process's time that every request here
    would wait behind (issue 33)."""
    if size < ELSEWHERE_BYTES:
        return read_contents

    def elsewhere(path: str, name: str, limits: Limits) -> Contents:
        return state.elsewhere.run(read_contents, path, name, limits)

    return elsewhere


def cursor(upload: Upload) -> str:
    return f"{upload.uploaded_at}-{upload.digest}"


def _before(value: str | None) -> tuple[int, str] | None:
    if value is None:
        return None
    at, digest = value.split("-", 1)  # the route's pattern checked its form
    return int(at), digest


def listed_upload(state: WebState, upload: Upload, grouped: dict[str, list[Entry]]) -> dict[str, Any]:
    """An upload as the list shows it: its JSON, each session with what a read of it found so far (the session
    list's summary, `title` its title as plain text), or None until a page asked for it (`/sessions-summaries`)."""
    item = upload_json(state, upload, grouped)
    for session in item["sessions"]:
        found: dict[str, Any] | None = state.registry.peek(session["key"], "summary")
        session["summary"] = found
        session["title"] = found.get("plainTitle") if found else None
    return item


def page_url(path: str, limit: int, before: str) -> str:
    """The page of `limit` uploads after `before` (`limit` said only when not the default)."""
    return f"{path}?{urlencode({'before': before} if limit == PAGE_SIZE else {'limit': limit, 'before': before})}"


def uploads_listing(state: WebState, who: Identity, limit: int | None, before: str | None) -> dict[str, Any]:
    """A page: `limit` uploads (50 unless said) older than `before`, or the newest, newest first. With neither,
    every upload, oldest first. With how many there are, how many come before the page, and the next's cursor.
    Only the uploads `who` sees: for a token scoped to projects, paged here rather than by the catalog."""
    state.registry.refresh()
    store = store_of(state)
    grouped = entries_by_upload(state, who)
    if who.scoped:
        return _scoped_listing(state, who, grouped, limit, before)
    if limit is None and before is None:
        every = store.uploads()
        return {
            "uploads": [listed_upload(state, u, grouped) for u in every],
            "total": len(every),
            "offset": 0,
            "limit": None,
            "next": None,
        }
    size = limit or PAGE_SIZE
    found = store.catalog.page(size, _before(before))
    return {
        "uploads": [listed_upload(state, u, grouped) for u in found.uploads],
        "total": found.total,
        "offset": found.newer,  # uploads newer than this page's first, on the pages before it
        "limit": size,
        "next": cursor(found.uploads[-1]) if found.more else None,
    }


def _scoped_listing(
    state: WebState, who: Identity, grouped: dict[str, list[Entry]], limit: int | None, before: str | None
) -> dict[str, Any]:
    """`uploads_listing` for a token scoped to projects: every upload it sees, paged in memory."""
    seen = [u for u in store_of(state).uploads() if visible(u, who)]  # oldest first
    if limit is None and before is None:
        page, newer, more = seen, 0, False
    else:
        newest = sorted(seen, key=lambda u: (u.uploaded_at, u.digest), reverse=True)
        cut = _before(before)
        older = [u for u in newest if cut is None or (u.uploaded_at, u.digest) < cut]
        size = limit or PAGE_SIZE
        page, newer, more = older[:size], len(newest) - len(older), len(older) > size
    return {
        "uploads": [listed_upload(state, u, grouped) for u in page],
        "total": len(seen),
        "offset": newer,
        "limit": None if limit is None and before is None else limit or PAGE_SIZE,
        "next": cursor(page[-1]) if more else None,
    }


@router.get(
    "/api/uploads",
    summary="The stored uploads with their sessions: a page of them, newest first (`limit`, `before`), or every "
    "one, oldest first",
)
def api_uploads(
    state: State,
    who: Who,
    limit: int | None = Query(None, ge=1, le=1000, description="a page of this many, newest first"),
    before: Before = None,
) -> UploadsJson:
    data = uploads_listing(state, who, limit, before)
    if data["next"] is not None:
        data["next"] = page_url("/api/uploads", data["limit"], data["next"])
    return UploadsJson.model_validate(data)


# The page and its twin differ in what they give without `limit` and `before`: the page, the newest 50; the
# twin, every upload, oldest first. They keep a handler each.
@router.get("/uploads", response_class=HTMLResponse, include_in_schema=False)
def uploads_page(
    request: Request, state: State, who: Who, limit: int = Query(PAGE_SIZE, ge=1, le=1000), before: Before = None
) -> HTMLResponse:
    data = uploads_listing(state, who, limit, before)
    if data["next"] is not None:
        data["next"] = page_url("/uploads", limit, data["next"])
    newest = "/uploads" if limit == PAGE_SIZE else f"/uploads?limit={limit}"
    return state.page(request, "uploads.html", **data, newest=newest, shown_sessions=SHOWN_SESSIONS)


@page_and_twin(router, "/uploads/{digest}", twin=UploadJson, summary="One upload and its sessions", name="api_upload")
def upload_page(request: Request, state: State, who: Who, digest: str) -> Served[UploadJson]:
    found = UploadJson.model_validate(upload_json(state, _upload(state, digest, who), entries_by_upload(state, who)))
    # the page reads the upload as its twin words it (`upload.sessionsKept`), as the uploads list does
    return page_or_twin(request, found, "upload.html", lambda upload: {"upload": upload.model_dump(by_alias=True)})


@router.delete("/api/uploads/{digest}", summary="Delete an upload: its bytes and its sessions")
def delete_upload(request: Request, state: State, who: Who, digest: str) -> dict[str, Any]:
    try:
        upload = _upload(state, digest, who)
        if not who.may_delete(upload.uploaded_by, tuple(s.header for s in upload.sessions)):
            raise HTTPException(403, f"{who.actor} may delete only the uploads it made")
        if not store_of(state).delete(digest):
            raise HTTPException(404, f"no upload {digest!r}")
    except HTTPException as exc:
        audit(state, request, who, "delete", digest, exc.status_code)
        raise
    audit(state, request, who, "delete", digest, 200)
    state.registry.refresh()
    return {"deleted": digest}


@router.get("/uploads/{digest}/raw", summary="The uploaded bytes, as sent")
def upload_raw(request: Request, state: State, who: Who, digest: str) -> Response:
    upload = _upload(state, digest, who)
    store = store_of(state)
    audit(state, request, who, "download", digest, 200)
    local = store.local_path(upload)
    if local.is_file():  # the embedded store's blob, or a copy cached, assembled or growing here
        return _sized_attachment(str(local), upload.name, upload.size)
    # straight from its parts in the store: nothing lands on this machine's disk. Its first bytes are asked
    # for before the answer starts, so a store that does not answer is a 503, not a 200 with no body; one that
    # stops answering midway aborts the connection, and the client sees fewer bytes than Content-Length says
    chunks = store.chunks(upload)
    first = next(chunks, b"")
    return StreamingResponse(
        itertools.chain((first,), chunks),
        media_type="application/octet-stream",
        headers={"Content-Disposition": _disposition(upload.name), "Content-Length": str(upload.size)},
    )


@router.get("/sessions/{key}/raw", summary="A session's original bytes (its file, store or ZIP member)")
def session_raw(request: Request, state: State, who: Who, entry: SessionEntry) -> Response:
    path = _readable(state, entry)
    if not _whole_file_visible(state, who, entry):
        raise HTTPException(404, f"no session {entry.key!r}")
    audit(state, request, who, "download", f"/sessions/{entry.key}", 200)
    source = entry.source
    if source.kind == "zip" and source.member is not None:
        filename = f"{url_safe_id(entry.session_id)}.jsonl" if entry.session_id else "session.jsonl"
        return StreamingResponse(
            _member_chunks(path, source.member),
            media_type="application/octet-stream",
            headers={"Content-Disposition": _disposition(filename)},
        )
    upload = state.store.upload(entry.upload) if entry.upload is not None and state.store is not None else None
    if upload is not None:  # its first bytes: a growing copy may hold more by now
        return _sized_attachment(path, os.path.basename(source.display or source.path), upload.size)
    return _attachment(path, os.path.basename(source.display or source.path))


def _whole_file_visible(state: WebState, who: Identity, entry: Entry) -> bool:
    """Whether `who` may have the bytes a session's download sends: a ZIP member's alone; any other file whole,
    so every session it holds (a SQLite store holds many) must be one `who` sees."""
    if not who.scoped or (entry.source.kind == "zip" and entry.source.member is not None):
        return True
    if entry.upload is not None and state.store is not None:
        upload = state.store.upload(entry.upload)
        return upload is not None and visible(upload, who)
    return all(who.sees_header(e.header) for e in state.registry.entries() if e.source.path == entry.source.path)


def _readable(state: WebState, entry: Entry) -> str:
    """The file behind the entry, which must lie inside a served path or the store."""
    path = entry.source.path
    if entry.upload is not None and state.store is not None:
        upload = state.store.upload(entry.upload)
        inside = upload is not None and path == str(state.store.local_path(upload))
    else:
        inside = any(
            not escapes(path, p) if os.path.isdir(p) else os.path.realpath(p) == os.path.realpath(path)
            for p in state.registry.paths
        )
    if not inside or not os.path.isfile(path):
        raise HTTPException(404, f"no session {entry.key!r}")
    return path


def _member_chunks(path: str, member: str) -> Iterator[bytes]:
    with zipfile.ZipFile(path) as zf, zf.open(member) as f:
        while chunk := f.read(CHUNK):
            yield chunk


def _disposition(filename: str) -> str:
    return f"attachment; filename*=utf-8''{quote(filename, safe='')}"


def _sized_attachment(path: str, filename: str, size: int) -> StreamingResponse:
    """The first `size` bytes of the file at `path`, as a download."""

    def chunks() -> Iterator[bytes]:
        left = size
        with open(path, "rb") as f:
            while left > 0 and (chunk := f.read(min(CHUNK, left))):
                left -= len(chunk)
                yield chunk

    return StreamingResponse(
        chunks(),
        media_type="application/octet-stream",
        headers={"Content-Disposition": _disposition(filename), "Content-Length": str(size)},
    )


def _attachment(path: str, filename: str) -> FileResponse:
    return FileResponse(
        path, media_type="application/octet-stream", headers={"Content-Disposition": _disposition(filename)}
    )
