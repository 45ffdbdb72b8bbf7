"""`dsh-inspect push PATH… --to URL [--watch] [--label TEXT]…`: every session under PATH onto a server, sending
only what it does not hold (docs/decisions/0024-push.md).

A plain or zstd log the server holds a prefix of is sent as an append of the bytes after it; any other log
(new, or rewritten so that no held upload is its prefix), a SQLite store and an export ZIP, whole. Nothing is
sent twice: before sending, the server is asked what it holds, and a server's copy is the same bytes or a
refusal says why. What was pushed is remembered in a state file (the log's file identity, size and digest,
and digests of its first and last bytes), so a log that only grew is not hashed again; `--verify` hashes
every log again instead.

`--label` labels every upload and append the push sends (a CI job's id, which the server's list filters by); a
log or file the server holds already is labelled too, so a job run again labels what an earlier run sent: a log
by an append of no bytes (one request, nothing hashed on the server), any other file by sending it again whole
when the upload the server holds lacks a label.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

import httpx
import orjson

from ..log.sources import UnreadablePath, discover, read_source_header
from ..settings import default_cache_dir
from ..store.blobs import CHUNK
from ..store.catalog import MAX_LABELS, label_problem
from .progress import Progress

APPENDABLE = frozenset({"jsonl", "jsonl-zstd"})
WINDOW = 64 * 1024  # the last bytes of a pushed prefix, hashed again to tell a log that only grew
HEAD = 4 * 1024  # its first bytes, likewise
TRIES = 4  # a request that found no server is tried this often, waiting 1, 2, 4 s between
LONGEST_PAUSE = 60.0  # a 429's Retry-After waited out (then asked again, TRIES in all); a longer one is refused
TOKEN_ENV = "DSH_INSPECT_TOKEN"


class Refused(Exception):
    """The server refused to say what it holds of one log (a 4xx): that log is refused, the others go on."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class Unreachable(Exception):
    """The server did not answer (or answered 5xx) after every try, or refused the token."""


@dataclass
class Tally:
    """What a push did: the `--json` object."""

    sessions: int = 0  # logs, stores and ZIPs considered
    sent: int = 0  # of them, sent whole or appended to
    bytes: int = 0  # session bytes sent over the wire (request bodies)
    skipped: int = 0  # of them, held by the server already
    refused: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "sent": self.sent,
            "bytes": self.bytes,
            "skipped": self.skipped,
            "refused": self.refused,
        }


@dataclass(frozen=True, slots=True)
class Pushed:
    """What the server was last found to hold of a file: its first `size` bytes, whose digest is `digest`."""

    dev: int
    ino: int
    size: int
    digest: str
    head: str  # sha-256 of its first HEAD bytes
    window: str  # sha-256 of the WINDOW bytes before `size`


class PushState:
    """The state file: per file path, what the server holds of it (`Pushed`). Lost or damaged, it costs a
    hash of each log, never a wrong append: the server checks every append's prefix digest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.files: dict[str, Pushed] = {}
        try:
            raw = orjson.loads(path.read_bytes())
            self.files = {k: Pushed(**v) for k, v in raw.get("files", {}).items()}
        except (OSError, orjson.JSONDecodeError, TypeError, AttributeError):
            self.files = {}

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        files = {k: {s: getattr(v, s) for s in Pushed.__slots__} for k, v in self.files.items()}
        temp.write_bytes(orjson.dumps({"files": files}))
        os.replace(temp, self.path)


def state_path(url: str) -> Path:
    """The state file of pushes to `url`, in the user's cache folder."""
    name = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
    return Path(default_cache_dir()) / "push" / f"{name}.json"


def _hash_range(path: str, start: int, end: int) -> str:
    sha = hashlib.sha256()
    for chunk in _chunks(path, start, end):
        sha.update(chunk)
    return sha.hexdigest()


def _marks(path: str, size: int) -> tuple[str, str]:
    return _hash_range(path, 0, min(HEAD, size)), _hash_range(path, max(0, size - WINDOW), size)


def _chunks(path: str, start: int, end: int) -> Iterator[bytes]:
    with open(path, "rb") as f:
        f.seek(start)
        left = end - start
        while left > 0 and (chunk := f.read(min(CHUNK, left))):
            left -= len(chunk)
            yield chunk


def complete_lines(path: str, size: int) -> int:
    """The length of `path`'s first `size` bytes up to its last newline: what a writer has finished."""
    with open(path, "rb") as f:
        end = size
        while end > 0:
            start = max(0, end - CHUNK)
            f.seek(start)
            at = f.read(end - start).rfind(b"\n")
            if at >= 0:
                return start + at + 1
            end = start
    return 0


class Pusher:
    """Pushes files to one server over one connection, remembering what it holds in `state`."""

    def __init__(
        self, url: str, token: str | None, state: PushState, *, verify: bool = False, labels: Sequence[str] = ()
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self.client = httpx.Client(base_url=self.url, headers=headers, timeout=httpx.Timeout(60.0, connect=10.0))
        self.state = state
        self.verify = verify
        self.tally = Tally()
        self.stop = threading.Event()  # set, the waits between tries end at once (a watch being stopped)
        self.labels = tuple(dict.fromkeys(labels))  # every upload and append carries them
        self._labelled: dict[str, str] = {}  # a file → the digest of the upload this run labelled of it

    def _params(self, **params: Any) -> dict[str, Any]:
        """A request's query parameters, with this push's labels."""
        return {**params, "label": list(self.labels)} if self.labels else params

    def _labelled_already(self, path: str, digest: str) -> bool:
        """Whether the upload `digest` of `path` needs no labelling: no labels given, or labelled by this run."""
        return not self.labels or self._labelled.get(path) == digest

    def close(self) -> None:
        self.client.close()

    def push(self, path: str, kind: str, header: dict[str, Any] | None, *, finished_only: bool = False) -> None:
        """Bring the server to hold `path` as it is (with `finished_only`, a log up to its last whole line)."""
        self.tally.sessions += 1
        try:
            st = os.stat(path)
            size = st.st_size
            if finished_only and kind == "jsonl":
                size = complete_lines(path, size)
            known = self.state.files.get(path)
            if size == 0 or (
                finished_only
                and kind != "sqlite"  # a store's changes may lie in its write-ahead log
                and known is not None
                and self._unchanged(path, st, size, known)
                and self._labelled_already(path, known.digest)
            ):
                self.tally.skipped += 1  # while watching, a file as it was pushed is not asked about again
                return
            ident = _identity(header) if kind in APPENDABLE else None
            if ident is None:
                self._whole(path, kind, st, size)
            else:
                self._log(path, kind, st, size, *ident)
        except OSError as exc:
            self._refuse(path, 0, f"cannot be read: {exc.strerror or exc}")
        except Refused as exc:
            self._refuse(path, exc.status, exc.reason)

    @staticmethod
    def _unchanged(path: str, st: os.stat_result, size: int, known: Pushed) -> bool:
        return (known.dev, known.ino, known.size) == (st.st_dev, st.st_ino, size) and _marks(path, size) == (
            known.head,
            known.window,
        )

    # -- a plain or zstd log ---------------------------------------------------------------

    def _log(self, path: str, kind: str, st: os.stat_result, size: int, sid: str, created: int) -> None:
        # every character escaped, dots too: a client would otherwise fold an id of `..` into the path
        url = "/api/pushes/" + quote(sid, safe="").replace(".", "%2E")
        for attempt in range(2):  # a second time when the server's copy moved meanwhile (409)
            held = self._held(url, created)
            base = self._base(path, st, size, held, trust=attempt == 0 and not self.verify)
            if base is not None and base[0] == size:
                if not self._labelled_already(path, base[1]):  # held whole: an append of nothing labels it
                    answer = self._ask(
                        "POST",
                        url,
                        content=lambda: b"",
                        params=self._params(created=created),
                        headers={"Upload-Offset": str(size), "If-Match": f'"{base[1]}"'},
                    )
                    if answer.status_code == 409:
                        continue
                    if answer.status_code == 404:  # deleted meanwhile: it goes whole
                        self._whole(path, kind, st, size)
                        return
                    if answer.status_code not in (200, 201):
                        self._refuse(path, answer.status_code, _reason(answer))
                        return
                    self._labelled[path] = base[1]
                self._remember(path, st, size, base[1])
                self.tally.skipped += 1
                return
            if base is None:
                self._whole(path, kind, st, size, held={d for d, _ in held})
                return
            offset, prefix = base
            answer = self._send(
                "POST",
                url,
                path,
                offset,
                size,
                params=self._params(created=created),
                headers={"Upload-Offset": str(offset), "If-Match": f'"{prefix}"'},
            )
            if answer.status_code in (200, 201):
                digest = answer.json()["upload"]["digest"]
                self._remember(path, st, size, digest)
                self._labelled[path] = digest
                self.tally.sent += 1
                return
            if answer.status_code == 404:  # deleted meanwhile: it goes whole
                self._whole(path, kind, st, size)
                return
            if answer.status_code != 409:
                self._refuse(path, answer.status_code, _reason(answer))
                return
        self._refuse(path, 409, "the server's copy kept changing while this log was pushed")

    def _held(self, url: str, created: int) -> list[tuple[str, int]]:
        """What the server holds of the session: (digest, size) of each upload of it."""
        answer = self._ask("GET", url, params={"created": created})
        if answer.status_code == 404:
            return []
        if answer.status_code != 200:
            raise Refused(answer.status_code, _reason(answer))
        return [(h["digest"], h["size"]) for h in answer.json()["held"]]

    def _base(
        self, path: str, st: os.stat_result, size: int, held: list[tuple[str, int]], *, trust: bool
    ) -> tuple[int, str] | None:
        """The longest held upload that is `path`'s first bytes, as (size, digest); None when none is."""
        sizes: dict[int, set[str]] = {}
        for digest, held_size in held:
            if held_size <= size:
                sizes.setdefault(held_size, set()).add(digest)
        known = self.state.files.get(path)
        if (
            trust
            and known is not None
            and (known.dev, known.ino) == (st.st_dev, st.st_ino)
            and known.digest in sizes.get(known.size, ())
            and max(sizes) == known.size
            and _marks(path, known.size) == (known.head, known.window)
        ):
            return known.size, known.digest  # only grew since it was last pushed: its start is held, unhashed
        found: tuple[int, str] | None = None
        sha, done = hashlib.sha256(), 0
        for at in sorted(sizes):  # one pass: the digest of each held size's prefix, compared with its uploads'
            for chunk in _chunks(path, done, at):
                sha.update(chunk)
            done = at
            if (digest := sha.hexdigest()) in sizes[at]:
                found = (at, digest)
        return found

    # -- whole files ----------------------------------------------------------------------

    def _whole(self, path: str, kind: str, st: os.stat_result, size: int, held: set[str] | None = None) -> None:
        if kind == "sqlite":
            with _snapshot(path) as copy:  # what it holds, its write-ahead log included, as SQLite reads it
                self._whole_file(path, copy, st, os.path.getsize(copy), held)
            return
        self._whole_file(path, path, st, size, held)

    def _whole_file(self, path: str, data: str, st: os.stat_result, size: int, held: set[str] | None) -> None:
        digest = _hash_range(data, 0, size)
        found = None if held is not None else self._ask("GET", f"/api/uploads/{digest}")
        holds = digest in held if held is not None else found is not None and found.status_code == 200
        if holds and (self._labelled_already(path, digest) or self._labels_held(found)):
            self._remember(path, st, size, digest)
            self.tally.skipped += 1
            return
        # new to the server, or held without a label of this push: the same bytes again add theirs
        answer = self._send("POST", "/api/uploads", data, 0, size, params=self._params(name=os.path.basename(path)))
        if answer.status_code in (200, 201):
            self._remember(path, st, size, digest)
            self._labelled[path] = digest
            if holds:
                self.tally.skipped += 1
            else:
                self.tally.sent += 1
        else:
            self._refuse(path, answer.status_code, _reason(answer))

    def _labels_held(self, found: httpx.Response | None) -> bool:
        """Whether the upload the server answered with carries every label of this push (a server that keeps
        no labels says none, and is sent nothing again for them)."""
        if found is None:
            return False
        try:
            labels = found.json().get("labels")
        except (ValueError, AttributeError):
            return False
        return not isinstance(labels, list) or set(self.labels) <= set(labels)

    # -- the wire -------------------------------------------------------------------------

    def _send(self, method: str, url: str, path: str, start: int, end: int, **kw: Any) -> httpx.Response:
        headers = {**kw.pop("headers", {}), "Content-Length": str(end - start)}
        headers["Content-Type"] = "application/octet-stream"

        def sent() -> Iterator[bytes]:
            for chunk in _chunks(path, start, end):
                self.tally.bytes += len(chunk)
                yield chunk

        return self._ask(method, url, content=sent, headers=headers, **kw)

    def _ask(self, method: str, url: str, *, content: Any = None, **kw: Any) -> httpx.Response:
        """The server's answer; tried again while it does not answer, or answers 502-504 (a restart, a proxy),
        then Unreachable. A body is sent afresh each try."""
        wait = 1.0
        for attempt in range(TRIES):
            pause = wait
            try:
                answer = self.client.request(method, url, content=content() if content else None, **kw)
            except httpx.TransportError as exc:
                problem = f"{self.url} did not answer: {exc}"
            else:
                if answer.status_code == 401:
                    raise Unreachable(f"{self.url} refused the token: {_reason(answer)}")
                later = _later(answer)
                if answer.status_code not in (502, 503, 504) and (later is None or attempt == TRIES - 1):
                    return answer  # a 429 asked again this often is the server's answer: refused for now
                problem = f"{self.url}{url}: {answer.status_code} {_reason(answer)}"
                pause = later if later is not None else wait
            if attempt < TRIES - 1:
                if self.stop.wait(pause):
                    break
                wait *= 2
        raise Unreachable(problem)

    def _remember(self, path: str, st: os.stat_result, size: int, digest: str) -> None:
        head, window = _marks(path, size)
        self.state.files[path] = Pushed(st.st_dev, st.st_ino, size, digest, head, window)

    def _refuse(self, path: str, status: int, reason: str) -> None:
        self.tally.refused.append({"path": path, "status": status, "reason": reason})


@contextlib.contextmanager
def _snapshot(path: str) -> Iterator[str]:
    """A copy of the SQLite store at `path` taken through SQLite (its write-ahead log included), deleted after."""
    fd, copy = tempfile.mkstemp(prefix="dsh-inspect-push-", suffix=".sqlite3")
    os.close(fd)
    try:
        source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            target = sqlite3.connect(copy)
            try:
                source.backup(target)
                target.execute("PRAGMA journal_mode = delete")
            finally:
                target.close()
        finally:
            source.close()
        yield copy
    finally:
        os.unlink(copy)


def _identity(header: dict[str, Any] | None) -> tuple[str, int] | None:
    sid, created = (header or {}).get("id"), (header or {}).get("createdAt")
    if isinstance(sid, str) and sid and isinstance(created, int) and not isinstance(created, bool):
        return sid, created
    return None


def _later(answer: httpx.Response) -> float | None:
    """The seconds a 429 asks to wait (a client past its share of the server's time), when short enough to
    wait out here; None for any other answer, or a wait as long as an upload quota's hour."""
    if answer.status_code != 429:
        return None
    try:
        seconds = float(answer.headers.get("retry-after", ""))
    except ValueError:
        return None
    return seconds if 0 <= seconds <= LONGEST_PAUSE else None


def _reason(answer: httpx.Response) -> str:
    try:
        detail = answer.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    return str(detail) if detail else answer.text[:300] or answer.reason_phrase


def files_under(paths: Sequence[str]) -> list[tuple[str, str, dict[str, Any] | None]]:
    """Each file holding sessions under `paths` once: (path, kind, header of its log when it is one)."""
    found = discover(list(paths))
    out: dict[str, tuple[str, str, dict[str, Any] | None]] = {}
    for source in found.sources:
        if source.path in out:
            continue
        header = read_source_header(source) if source.kind in APPENDABLE else None
        out[source.path] = (source.path, source.kind, header)
    return list(out.values())


def read_token(token_file: str | None) -> str | None:
    """The API token: from `--token-file`, else `$DSH_INSPECT_TOKEN`; never from the command line."""
    if token_file:
        return Path(token_file).read_text().strip() or None
    return os.environ.get(TOKEN_ENV) or None


def run_push(
    paths: Sequence[str],
    *,
    to: str,
    token_file: str | None,
    as_json: bool,
    watch: bool,
    verify: bool,
    out: TextIO,
    err: TextIO,
    labels: Sequence[str] = (),
) -> int:
    """Exit 0 when the server holds every session, 1 when it refused one, 2 for a usage or connection error."""
    try:
        token = read_token(token_file)
    except OSError as exc:
        err.write(f"dsh-inspect push: --token-file: {exc.strerror or exc}\n")
        return 2
    for label in labels:
        if (why := label_problem(label)) is not None:
            err.write(f"dsh-inspect push: --label: {why}\n")
            return 2
    if len(set(labels)) > MAX_LABELS:
        err.write(f"dsh-inspect push: --label: at most {MAX_LABELS} labels, not {len(set(labels))}\n")
        return 2
    if not to.startswith(("http://", "https://")):
        err.write(f"dsh-inspect push: --to {to!r}: give the server's URL, http://host:port\n")
        return 2
    state = PushState(state_path(to))
    pusher = Pusher(to, token, state, verify=verify, labels=labels)
    try:
        if watch:
            from .push_watch import watch_and_push

            return watch_and_push(paths, pusher, out=out, err=err)
        return push_once(paths, pusher, as_json=as_json, out=out, err=err)
    except UnreadablePath as exc:
        err.write(f"dsh-inspect push: {exc}\n")
        return 2
    except Unreachable as exc:
        err.write(f"dsh-inspect push: {exc}\n")
        if as_json:
            out.write(orjson.dumps({**pusher.tally.as_json(), "error": str(exc)}).decode() + "\n")
        return 2
    finally:
        state.save()
        pusher.close()


def push_once(paths: Sequence[str], pusher: Pusher, *, as_json: bool, out: TextIO, err: TextIO) -> int:
    files = files_under(paths)
    progress = Progress(err, len(files), "pushing")
    for path, kind, header in files:
        progress.step(os.path.basename(os.path.dirname(path)) or path)
        pusher.push(path, kind, header)
        pusher.state.save()  # a push stopped here resumes after what it sent
    progress.close()
    tally = pusher.tally
    if as_json:
        out.write(orjson.dumps(tally.as_json()).decode() + "\n")
    else:
        out.write(
            f"{tally.sessions} considered: {tally.sent} sent ({tally.bytes} bytes), {tally.skipped} held already"
            + (f", {len(tally.refused)} refused" if tally.refused else "")
            + "\n"
        )
        for r in tally.refused:
            err.write(f"refused: {r['path']}: {r['reason']}\n")
    return 1 if tally.refused else 0
