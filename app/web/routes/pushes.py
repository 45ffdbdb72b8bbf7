"""Pushes (docs/decisions/0024-push.md): what the server holds of a session, and appends of a log's new bytes.

`GET /api/pushes/{id}?created=MS` names every upload holding the session (404 `not-held` when none does);
`POST` the same URL with `Upload-Offset: N` and `If-Match: "<sha-256 of the log's first N bytes>"` sends the
bytes after them. The server keeps them as an upload extending the one those N bytes are (decision 0018):
409 `prefix-mismatch` when no upload of the session is those bytes, 404 when it holds none. A log's first
push, and any that is not an append, is a whole upload (`POST /api/uploads`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from ...access import Identity
from ...store import LimitExceeded, NotHeld, PrefixMismatch, Stored, Upload
from ..state import State, WebState, Who
from ..uploading import (
    Labels,
    NotAdmitted,
    ProjectFull,
    admit,
    audit,
    checked_labels,
    no_room,
    over_quota,
    project_full,
    receive_body,
    refusal,
    store_of,
    stored_json,
    too_much,
    upload_url,
    visible,
)

router = APIRouter()

SessionId = Annotated[str, Path(min_length=1, max_length=10_000, description="the session's id (its header's `id`)")]
Created = Annotated[int, Query(ge=0, lt=1 << 53, description="the session's `createdAt` (ms), as its header says")]
_ETAG = re.compile(r'(?:W/)?"?([0-9a-f]{64})"?')


def held_json(upload: Upload) -> dict[str, Any]:
    return {
        "digest": upload.digest,
        "size": upload.size,
        "carrier": upload.carrier,
        "uploadedAt": upload.uploaded_at,
        "url": upload_url(upload.digest),
    }


def _held(state: WebState, who: Identity, session_id: str, created: int) -> list[Upload]:
    return [u for u in store_of(state).held(session_id, created) if visible(u, who)]


def _not_held(session_id: str) -> JSONResponse:
    return refusal(404, "not-held", f"the server holds no upload of session {session_id[:80]!r} created then")


@router.get(
    "/api/pushes/{session_id:path}",
    summary="What the server holds of a session: each upload's size and digest, newest first",
    responses={404: {"description": "No upload holds the session (`error.code` is `not-held`)"}},
)
def pushed(state: State, who: Who, session_id: SessionId, created: Created) -> Response:
    found = _held(state, who, session_id, created)
    if not found:
        return _not_held(session_id)
    return JSONResponse({"id": session_id, "created": created, "held": [held_json(u) for u in found]})


@router.post(
    "/api/pushes/{session_id:path}",
    status_code=201,
    summary="Append a log's new bytes to the upload its first `Upload-Offset` bytes are",
    responses={
        200: {"description": "These bytes were appended already, or none were sent: nothing new but its `label`s"},
        400: {"description": "`Upload-Offset` or `If-Match` is missing or malformed"},
        403: {"description": "The token may not push sessions of this project"},
        404: {"description": "No upload holds the session (`not-held`): send it whole"},
        409: {"description": "No upload of the session is those bytes (`prefix-mismatch`); `held` says what is"},
        422: {"description": "A `label` is refused (`bad-label`): 1 to 100 characters, no control characters"},
        413: {"description": "A limit was exceeded; the answer names the setting"},
    },
    openapi_extra={
        "parameters": [
            {"name": "Upload-Offset", "in": "header", "required": True, "schema": {"type": "integer"}},
            {"name": "If-Match", "in": "header", "required": True, "schema": {"type": "string"}},
        ],
        "requestBody": {
            "required": True,
            "description": "The log's bytes after the first `Upload-Offset`",
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        },
    },
)
async def push(
    request: Request, state: State, who: Who, session_id: SessionId, created: Created, label: Labels = None
) -> Response:
    response = await _push(request, state, who, session_id, created, label)
    await run_in_threadpool(audit, state, request, who, "push", session_id[:200], response.status_code)
    return response


async def _push(
    request: Request, state: WebState, who: Identity, session_id: str, created: int, label: list[str] | None
) -> Response:
    store = store_of(state)
    labels = checked_labels(label)
    if isinstance(labels, Response):
        return labels
    offset_text = request.headers.get("upload-offset", "")
    match = _ETAG.fullmatch(request.headers.get("if-match", "").strip())
    if not (offset_text.isascii() and offset_text.isdigit() and len(offset_text) <= 15) or match is None:
        return refusal(
            400,
            "bad-request",
            'an append needs `Upload-Offset: N` and `If-Match: "<sha-256 of the first N bytes>"`',
        )
    offset, prefix = int(offset_text), match.group(1)
    received = await receive_body(request, state, session_id)
    if isinstance(received, Response):
        return received
    over = await run_in_threadpool(over_quota, state, request, session_id, received.size)
    if over is not None:
        received.temp.unlink(missing_ok=True)
        return over
    by = None if who.everything else who.actor
    try:
        stored: Stored = await run_in_threadpool(
            store.append, session_id, created, offset, prefix, received, by, admit(state, who, received), labels
        )
    except NotHeld:
        return _not_held(session_id)
    except PrefixMismatch as exc:
        return refusal(
            409,
            "prefix-mismatch",
            f"no upload of session {session_id[:80]!r} is {offset} bytes with that digest: ask what is held "
            "(GET this URL), or send the log whole",
            more={"held": [held_json(u) for u in exc.held if visible(u, who)]},
        )
    except NotAdmitted as exc:
        return refusal(403, "project", f"{session_id[:80]}: refused, {exc}")
    except ProjectFull as exc:
        return project_full(state, session_id[:80], exc)
    except LimitExceeded as exc:
        return too_much(state, session_id, exc)
    except OSError as exc:
        return no_room(session_id, exc)
    body = {"upload": await run_in_threadpool(stored_json, state, stored, who), "created": stored.created}
    return JSONResponse(body, status_code=201 if stored.created else 200)
