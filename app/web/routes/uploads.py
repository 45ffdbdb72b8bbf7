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
from collections.abc import Callable, Iterator
from typing import Annotated, Any
from urllib.parse import quote, urlencode

import orjson
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.requests import ClientDisconnect

from ...access import Identity, project_of
from ...log.sources import escapes
from ...sessions.registry import Entry, url_safe_id
from ...store import (
    MIB,
    LimitExceeded,
    NoSessions,
    Refusal,
    Stored,
    StoredSession,
    Upload,
    UploadStore,
    clean_name,
    mib,
    valid_digest,
)
from ..access import client_of
from ..present.entries import entry_json
from ..present.twins import UploadJson, UploadsJson
from ..state import SessionEntry, State, WebState, Who
from ..views import Served, page_and_twin, page_or_twin

router = APIRouter()
_log = logging.getLogger(__name__)
CHUNK = 1 << 20


def _store(state: WebState) -> UploadStore:
    if state.store is None:
        raise HTTPException(404, "this server keeps no uploads (start it with --data-dir)")
    return state.store


def _upload(state: WebState, digest: str, who: Identity) -> Upload:
    """The upload, or 404: also for one holding a session `who` may not see (a hidden upload is a missing one)."""
    upload = _store(state).upload(digest) if valid_digest(digest) else None
    if upload is None or not visible(upload, who):
        raise HTTPException(404, f"no upload {digest!r}")
    return upload


def visible(upload: Upload, who: Identity) -> bool:
    """Whether `who` may see the upload: every session it holds is of a project `who` sees (its bytes hold them all)."""
    return not who.scoped or all(who.sees_header(s.header) for s in upload.sessions)


def admit(who: Identity) -> Callable[[tuple[StoredSession, ...]], None]:
    """What `who` may upload: a token scoped to projects, only sessions of those projects (never re-labelled)."""

    def check(sessions: tuple[StoredSession, ...]) -> None:
        others = sorted({project_of(s.header) or "(no cwd)" for s in sessions if not who.sees_header(s.header)})
        if others:
            raise NotAdmitted(f"this token may upload sessions of its projects only, not of {', '.join(others)}")

    return check


class NotAdmitted(Exception):
    """An upload holding a session of a project its sender's token may not upload to."""


def audit(state: WebState, request: Request, who: Identity, action: str, target: str, status: int) -> None:
    """Record an upload, download or delete in the audit trail (`outcome` from the status answered)."""
    if state.access is not None:
        outcome = "ok" if status < 400 else "denied" if status in (401, 403) else "failed"
        state.access.auditor.record(who.actor, action, target, client_of(request), outcome, status)


def upload_url(digest: str) -> str:
    return f"/uploads/{digest}"


def entries_by_upload(state: WebState, who: Identity) -> dict[str, list[Entry]]:
    """The loaded sessions of each upload that `who` sees, found in one pass (a list of every upload asks for each)."""
    grouped: dict[str, list[Entry]] = {}
    for e in state.registry.uploaded():
        if not who.sees_header(e.header):
            continue
        grouped.setdefault(e.upload or "", []).append(e)
    return grouped


def upload_json(state: WebState, upload: Upload, grouped: dict[str, list[Entry]]) -> dict[str, Any]:
    entries = grouped.get(upload.digest, [])
    verdicts = {s.member: s.verdict for s in upload.sessions}
    return {
        "digest": upload.digest,
        "name": upload.name,
        "size": upload.size,
        "carrier": upload.carrier,
        "media": upload.media,
        "uploadedAt": upload.uploaded_at,
        "uploadedBy": upload.uploaded_by,
        "url": upload_url(upload.digest),
        "download": f"{upload_url(upload.digest)}/raw",
        "sessions": [{**entry_json(e), "verdict": verdicts.get(e.source.member)} for e in entries],
        # its sessions that other uploads hold too (docs/decisions/0018-session-versions.md): a delete leaves them
        "sessionsKept": sum(1 for e in entries if _other_uploads(e)),
    }


def _other_uploads(entry: Entry) -> int:
    """How many uploads besides this entry's hold its session."""
    versions = entry.versions
    return sum(len(v) for v in versions.versions) - 1 if versions is not None else 0


def _refusal(
    status: int,
    code: str,
    message: str,
    *,
    setting: str | None = None,
    hint: str | None = None,
    refused: tuple[Refusal, ...] = (),
) -> JSONResponse:
    detail = f"{message}. {hint}" if hint else message
    return JSONResponse(
        {
            "detail": detail,
            "error": {"code": code, "setting": setting, "hint": hint},
            "refused": [{"path": r.part, "reason": r.reason} for r in refused],
        },
        status_code=status,
    )


def _too_much(state: WebState, name: str, exc: LimitExceeded) -> JSONResponse:
    setting, hint = state.settings.raise_hint(exc.limit)
    return _refusal(413, "limit", f"{name}: refused, {exc.message}", setting=setting, hint=hint)


def _over_quota(state: WebState, request: Request, name: str, size: int) -> JSONResponse | None:
    """A refusal when `size` more bytes would pass what the store may hold (507) or what this client may upload
    in an hour (429, with `Retry-After`); None when it may be stored (its bytes then count for the hour)."""
    store = _store(state)
    cap = state.settings.max_stored_gb * 1024 * MIB
    held = store.catalog.stored_bytes()
    if held + size > cap:
        raise_to = state.settings.max_stored_gb * 2
        hint = f"delete some uploads, or raise it: dsh-inspect serve --setting max_stored_gb {raise_to}"
        message = f"{name}: refused, the store holds {mib(held)} of its {mib(cap)}"
        return _refusal(507, "quota", message, setting="max_stored_gb", hint=hint)
    quota = state.access.uploads if state.access is not None else None
    client = client_of(request)
    if quota is not None and not quota.take(client, size):
        hint = "wait, or raise it: setting upload_mb_per_hour"
        message = f"{name}: refused, this client has uploaded its {mib(quota.bytes_per_hour)} for this hour"
        refused = _refusal(429, "quota", message, setting="upload_mb_per_hour", hint=hint)
        refused.headers["Retry-After"] = str(quota.retry_after(client))
        return refused
    return None


def _no_room(name: str, exc: OSError) -> JSONResponse:
    """507 with the system's reason (a full disk); an object store's own words, which name its bucket and
    endpoint, go to the server's log only."""
    if exc.strerror is None:
        _log.warning("an upload was not kept: %s", exc)
    why = exc.strerror or "the store refused it"
    return _refusal(507, "storage", f"{name}: the upload store could not keep the upload: {why}")


@router.post(
    "/api/uploads",
    status_code=201,
    summary="Upload a log, a zstd log, a SQLite store or an export ZIP",
    responses={
        200: {"description": "The same bytes were already stored"},
        413: {"description": "A limit was exceeded; the answer names the setting"},
        422: {"description": "Not a dsh session log; the answer says where reading stopped"},
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
    request: Request, state: State, who: Who, name: str | None = Query(None, max_length=1000)
) -> Response:
    response = await _create_upload(request, state, who, name)
    target = _digest_of(response) or clean_name(name)
    await run_in_threadpool(audit, state, request, who, "upload", target, response.status_code)
    return response


def _digest_of(response: Response) -> str | None:
    """The digest an upload's answer names, when it stored (or found) one."""
    if response.status_code not in (200, 201) or not isinstance(response, JSONResponse):
        return None
    found = orjson.loads(bytes(response.body)).get("upload", {}).get("digest")
    return found if isinstance(found, str) else None


async def _create_upload(request: Request, state: WebState, who: Identity, name: str | None) -> Response:
    store = _store(state)
    shown = clean_name(name)
    declared = request.headers.get("content-length", "")
    if (
        declared.isascii()
        and declared.isdigit()
        and len(declared) <= 19
        and int(declared) > store.limits.max_upload_bytes
    ):
        return _too_much(
            state,
            shown,
            LimitExceeded(
                "max_upload_bytes",
                f"the upload is {mib(int(declared))}, larger than {mib(store.limits.max_upload_bytes)}",
            ),
        )
    try:
        receiving = store.receive()
    except OSError as exc:
        return _no_room(shown, exc)
    try:
        async for chunk in request.stream():
            receiving.write(chunk)
        received = await run_in_threadpool(receiving.finish)
    except LimitExceeded as exc:
        receiving.discard()
        return _too_much(state, shown, exc)
    except ClientDisconnect:
        receiving.discard()
        return Response(status_code=400)  # nobody is left to read an answer
    except OSError as exc:
        receiving.discard()
        return _no_room(shown, exc)
    if received.size == 0:
        received.temp.unlink(missing_ok=True)
        return _refusal(400, "empty", f"{shown}: the upload is empty")
    over = await run_in_threadpool(_over_quota, state, request, shown, received.size)
    if over is not None:
        received.temp.unlink(missing_ok=True)
        return over
    try:
        stored: Stored = await run_in_threadpool(
            store.ingest, received, shown, None if who.everything else who.actor, admit(who)
        )
    except NotAdmitted as exc:
        return _refusal(403, "project", f"{shown}: refused, {exc}")
    except LimitExceeded as exc:
        return _too_much(state, shown, exc)
    except NoSessions as exc:
        return _refusal(422, "not-a-session", exc.message, refused=exc.refused)
    except OSError as exc:
        return _no_room(shown, exc)
    state.registry.refresh()
    body = {
        "upload": upload_json(state, stored.upload, entries_by_upload(state, who)),
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
    store = _store(state)
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
    seen = [u for u in _store(state).uploads() if visible(u, who)]  # oldest first
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
        if not _store(state).delete(digest):
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
    store = _store(state)
    audit(state, request, who, "download", digest, 200)
    local = store.local_path(upload)
    if local.is_file():  # the embedded store's blob, or a copy cached or assembled here
        return _attachment(str(local), upload.name)
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


def _attachment(path: str, filename: str) -> FileResponse:
    return FileResponse(
        path, media_type="application/octet-stream", headers={"Content-Disposition": _disposition(filename)}
    )
