"""What the routes that take uploads share (`/api/uploads`, `/api/pushes`): the store, who may send what,
the audit trail, an upload's JSON, and the refusals, each naming the setting to raise."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastapi import HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from starlette.requests import ClientDisconnect

from ..access import Identity, project_of
from ..sessions.registry import Entry
from ..store import MIB, LimitExceeded, Received, Refusal, Stored, StoredSession, Upload, UploadStore, mib
from ..store.catalog import LABEL_CHARS, MAX_LABELS, label_problem
from .access import client_of
from .present.entries import entry_json
from .state import WebState

_log = logging.getLogger(__name__)

# `?label=…&label=…` of an upload or append (`dsh-inspect push --label`): checked by `checked_labels`
Labels = Annotated[
    list[str] | None,
    Query(
        description=f"a label for the upload (a CI job's id; repeat for more, at most {MAX_LABELS}): 1 to "
        f"{LABEL_CHARS} characters, no control characters. The list filters sessions by it (`/?label=`); the "
        "same bytes sent again gain the labels they carry",
    ),
]


def store_of(state: WebState) -> UploadStore:
    if state.store is None:
        raise HTTPException(404, "this server keeps no uploads (start it with --data-dir)")
    return state.store


def visible(upload: Upload, who: Identity) -> bool:
    """Whether `who` may see the upload: every session it holds is of a project `who` sees (its bytes hold them all)."""
    return not who.scoped or all(who.sees_header(s.header) for s in upload.sessions)


def admit(state: WebState, who: Identity, received: Received) -> Callable[[tuple[StoredSession, ...]], None]:
    """What `who` may upload: a token scoped to projects, only sessions of those projects (never re-labelled);
    and the bytes `received` only where no project they hold would pass `max_project_gb`."""

    def check(sessions: tuple[StoredSession, ...]) -> None:
        others = sorted({project_of(s.header) or "(no cwd)" for s in sessions if not who.sees_header(s.header)})
        if others:
            raise NotAdmitted(f"this token may upload sessions of its projects only, not of {', '.join(others)}")
        full = fullest_project(store_of(state), sessions, received, state.settings.max_project_gb * 1024 * MIB)
        if full is not None:
            raise ProjectFull(*full)

    return check


def fullest_project(
    store: UploadStore, sessions: tuple[StoredSession, ...], received: Received, cap: int
) -> tuple[str, int, int] | None:
    """The project of `sessions` that the bytes `received` would take past `cap`, with what it holds and `cap`;
    None when none would, or when those bytes are catalogued already (the same upload again stores nothing)."""
    catalogued = store.catalogued()
    if any(u.digest == received.digest for u in catalogued):
        return None
    projects = {project_of(s.header) for s in sessions}
    held = dict.fromkeys(projects, 0)
    for upload in catalogued:
        for project in {project_of(s.header) for s in upload.sessions} & projects:
            held[project] += upload.size
    over = [(p, n) for p, n in held.items() if n + received.size > cap]
    if not over:
        return None
    project, holds = max(over, key=lambda found: found[1])
    return project or "(no cwd)", holds, cap


class NotAdmitted(Exception):
    """An upload holding a session of a project its sender's token may not upload to."""


class ProjectFull(Exception):
    """An upload that would take a project past what it may hold (`max_project_gb`)."""

    def __init__(self, project: str, holds: int, cap: int) -> None:
        super().__init__(f"the project {project} holds {mib(holds)} of its {mib(cap)}")
        self.project, self.holds, self.cap = project, holds, cap


def audit(state: WebState, request: Request, who: Identity, action: str, target: str, status: int) -> None:
    """Record an upload, download or delete in the audit trail (`outcome` from the status answered)."""
    if state.access is not None:
        outcome = "ok" if status < 400 else "denied" if status in (401, 403) else "failed"
        state.access.auditor.record(who.actor, action, target, client_of(request), outcome, status)


def checked_labels(values: Sequence[str] | None) -> tuple[str, ...] | JSONResponse:
    """The `label` parameters, each once, in the order given; or the 422 that says which is wrong and why,
    never saying it back (it may be long)."""
    values = values or ()
    for n, label in enumerate(values, 1):
        which = f"query parameter `label` ({n} of {len(values)})" if len(values) > 1 else "query parameter `label`"
        if (why := label_problem(label)) is not None:
            return refusal(422, "bad-label", f"{which}: {why}", more={"parameter": "label"})
    labels = tuple(dict.fromkeys(values))
    if len(labels) > MAX_LABELS:
        why = f"at most {MAX_LABELS} labels an upload, not {len(labels)}"
        return refusal(422, "bad-label", f"query parameter `label`: {why}", more={"parameter": "label"})
    return labels


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


def stored_json(state: WebState, stored: Stored, who: Identity) -> dict[str, Any]:
    """A stored upload as its answer shows it, its sessions found again first. Called in a worker thread: on the
    event loop, finding a thousand uploads' sessions again held up every request of the process (issue 33)."""
    state.registry.refresh()
    return upload_json(state, stored.upload, entries_by_upload(state, who))


def upload_json(state: WebState, upload: Upload, grouped: dict[str, list[Entry]]) -> dict[str, Any]:
    entries = grouped.get(upload.digest, [])
    verdicts = {s.member: s.verdict or None for s in upload.sessions}  # an append is not read when it arrives
    return {
        "digest": upload.digest,
        "name": upload.name,
        "size": upload.size,
        "carrier": upload.carrier,
        "media": upload.media,
        "uploadedAt": upload.uploaded_at,
        "uploadedBy": upload.uploaded_by,
        "labels": list(upload.labels),
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


def refusal(
    status: int,
    code: str,
    message: str,
    *,
    setting: str | None = None,
    hint: str | None = None,
    refused: tuple[Refusal, ...] = (),
    more: dict[str, Any] | None = None,
) -> JSONResponse:
    detail = f"{message}. {hint}" if hint else message
    return JSONResponse(
        {
            "detail": detail,
            "error": {"code": code, "setting": setting, "hint": hint},
            "refused": [{"path": r.part, "reason": r.reason} for r in refused],
            **(more or {}),
        },
        status_code=status,
    )


def too_much(state: WebState, name: str, exc: LimitExceeded) -> JSONResponse:
    setting, hint = state.settings.raise_hint(exc.limit)
    return refusal(413, "limit", f"{name}: refused, {exc.message}", setting=setting, hint=hint)


def project_full(state: WebState, name: str, exc: ProjectFull) -> JSONResponse:
    raise_to = state.settings.max_project_gb * 2
    hint = f"delete some of its uploads, or raise it: dsh-inspect serve --setting max_project_gb {raise_to}"
    return refusal(507, "quota", f"{name}: refused, {exc}", setting="max_project_gb", hint=hint)


def over_quota(state: WebState, request: Request, name: str, size: int) -> JSONResponse | None:
    """A refusal when `size` more bytes would pass what the store may hold (507) or what this client may upload
    at this rate (429, with `Retry-After`); None when it may be stored (its bytes then count for the hour)."""
    store = store_of(state)
    cap = state.settings.max_stored_gb * 1024 * MIB
    held = store.catalog.stored_bytes()
    if held + size > cap:
        raise_to = state.settings.max_stored_gb * 2
        hint = f"delete some uploads, or raise it: dsh-inspect serve --setting max_stored_gb {raise_to}"
        message = f"{name}: refused, the store holds {mib(held)} of its {mib(cap)}"
        return refusal(507, "quota", message, setting="max_stored_gb", hint=hint)
    quota = state.access.uploads if state.access is not None else None
    client = client_of(request)
    if quota is not None and not quota.take(client, size):
        hint = "wait, or raise it: setting upload_mb_per_hour"
        message = (
            f"{name}: refused, this client may upload {mib(quota.bytes_per_hour)} an hour, "
            f"at most {mib(quota.held_at_most)} at once, and has sent that for now"
        )
        refused = refusal(429, "quota", message, setting="upload_mb_per_hour", hint=hint)
        refused.headers["Retry-After"] = str(quota.retry_after(client, size))
        return refused
    return None


def no_room(name: str, exc: OSError) -> JSONResponse:
    """507 with the system's reason (a full disk); an object store's own words, which name its bucket and
    endpoint, go to the server's log only."""
    if exc.strerror is None:
        _log.warning("an upload was not kept: %s", exc)
    why = exc.strerror or "the store refused it"
    return refusal(507, "storage", f"{name}: the upload store could not keep the upload: {why}")


async def receive_body(request: Request, state: WebState, name: str) -> Received | Response:
    """The request's body in a temp file under the store, counted against `max_upload_mb` as it arrives; or
    the refusal to answer (a client that left gets a 400 nobody reads, and nothing is kept)."""
    try:
        receiving = store_of(state).receive()
    except OSError as exc:
        return no_room(name, exc)
    try:
        async for chunk in request.stream():
            receiving.write(chunk)
        return await run_in_threadpool(receiving.finish)
    except LimitExceeded as exc:
        receiving.discard()
        return too_much(state, name, exc)
    except ClientDisconnect:
        receiving.discard()
        return Response(status_code=400)
    except OSError as exc:
        receiving.discard()
        return no_room(name, exc)
