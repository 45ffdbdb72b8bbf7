"""The upload store: blobs plus catalog, and the rules that keep them in step
(docs/decisions/0003-upload-store.md, 0009-team-store.md)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import orjson
from cachetools import LRUCache

from ..log.sources import SessionSource
from .access_records import AccessRecords, SqliteAccess
from .backends import Blobs, Catalog
from .blobs import CHUNK, FileBlobs, Received, Receiving, sweep_temps, valid_digest
from .catalog import BaseGone, SqliteCatalog, StoredSession, Upload, with_labels
from .contents import ContentsReader, Refusal, read_contents
from .growing import GrowingCopies
from .histories import History, State, histories, identity
from .limits import MIB, READ_CACHE_MB, LimitExceeded, Limits, mib
from .pg_connections import DEFAULT_WAITS, Waits
from .read_cache import ReadCache
from .unavailable import Unavailable

ASK_AGAIN_SECONDS = 5.0  # a catalog that did not answer is taken as down this long (a 503's Retry-After)

# carriers that grow by appending: an upload of one such log may extend an earlier one (decision 0018)
T = TypeVar("T")

APPENDABLE = frozenset({"jsonl", "jsonl-zstd"})
HASHES_KEPT = 1024  # unfinished SHA-256s of the uploads last stored, for appends to continue (about 0.3 MB)

_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f]")


def clean_name(name: str | None) -> str:
    """An upload's name as shown and offered for download: its last path part,
    without control characters, at most 200 characters."""
    base = re.split(r"[/\\]", name or "")[-1]
    base = _UNSAFE_NAME.sub("", base).strip()[:200]
    return base if base not in ("", ".", "..") else "upload"


@dataclass(frozen=True, slots=True)
class Stored:
    upload: Upload
    created: bool  # False when the same bytes were already stored
    refused: tuple[Refusal, ...]  # parts of the upload that are not session logs


@dataclass(frozen=True, slots=True)
class ListedSession:
    """A session as one upload holds it, ready to read."""

    digest: str
    source: SessionSource
    header: dict[str, Any] | None
    name: str  # the upload's label
    size: int  # the upload's bytes
    uploaded_at: int  # ms since the epoch
    events: int | None  # as stored when uploaded
    labels: tuple[str, ...] = ()  # the upload's (`Upload.labels`)


@dataclass(frozen=True, slots=True)
class ListedHistory:
    """One session however often it arrived (docs/decisions/0018-session-versions.md)."""

    versions: tuple[tuple[ListedSession, ...], ...]  # each version's uploads, oldest first; versions likewise
    current: ListedSession  # the newest upload's: what the session's key shows
    first: ListedSession  # the earliest upload's: what decides its key
    labels: tuple[str, ...] = ()  # every label of every upload of it, the earliest upload's first


class NotHeld(Exception):
    """An append to a session no visible upload holds (or whose base was deleted meanwhile)."""


class PrefixMismatch(Exception):
    """An append whose offset and prefix digest name no upload of the session: the client's log and the
    server's copy diverged (or the client's view is stale); `held` is what the server has."""

    def __init__(self, held: list[Upload]) -> None:
        super().__init__("no upload of the session has that offset and digest")
        self.held = held


class UploadStore:
    """Uploads kept in a catalog and blobs (backends.py): embedded in `data_dir` unless `catalog_url` and
    `blobs_url` name others. `data_dir` always holds uploads while they arrive (`tmp/`), and for the team
    store this machine's read cache of blobs (`cache/`)."""

    def __init__(
        self,
        data_dir: str | Path,
        limits: Limits | None = None,
        *,
        catalog_url: str | None = None,
        blobs_url: str | None = None,
        read_cache_bytes: int = READ_CACHE_MB * MIB,
        waits: Waits = DEFAULT_WAITS,
    ) -> None:
        self.root = Path(data_dir)
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.limits = limits or Limits()
        self.tmp = self.root / "tmp"
        self.tmp.mkdir(mode=0o700, exist_ok=True)
        self.catalog: Catalog = open_catalog(catalog_url, self.root, waits)
        self.access: AccessRecords = access_records(self.catalog)
        self.blobs: Blobs = open_blobs(blobs_url, self.root, read_cache_bytes)
        # uploads stored as parts (a base and a tail), each assembled once into one file to be read
        self.assembled = ReadCache(self.root / "assembled", read_cache_bytes)
        # the newest state of each version that grew by appends, as one file appends extend in place
        self.growing = GrowingCopies(self.root / "growing")
        self._growing: dict[str, list[Upload]] = {}  # a listed upload read from a growing copy → its chain
        self._hashes: LRUCache[str, Any] = LRUCache(HASHES_KEPT)  # digest → its bytes' unfinished SHA-256
        self.shared = blobs_url is not None  # the blobs are not this machine's files: no process may assume so
        self._lock = threading.Lock()
        # one reading of the catalog's sessions at a time: those asking meanwhile take what it read
        self._reading = threading.Lock()
        self._listed: tuple[int, list[ListedHistory]] | None = None  # the catalog version it was read at
        self._uploads: dict[str, Upload] = {}  # every upload as `sessions` last read them, hidden ones too
        # what each reading of the catalog would otherwise make again for a thousand uploads after any one
        # changed: the blobs seen on disk (embedded), each listed session's source, each listed history
        # (`_read_sessions`)
        self._blobs_seen: set[str] = set()
        self._sources: dict[tuple[str, str | None, str, str, str | None], SessionSource] = {}
        self._histories: dict[HistoryKey, ListedHistory] = {}
        self.unavailable: Unavailable | None = None  # the catalog's failure to answer, until it answers again
        self._ask_again_at = 0.0  # (monotonic) when a catalog that did not answer is asked again
        self._sweep()

    def _sweep(self) -> None:
        """Leftovers of a crash: temp files of dead processes, and blobs whose
        catalog row was removed before the process could unlink them."""
        sweep_temps(self.tmp)
        self.catalog.sweep(self.blobs.digests(), self.blobs.delete)

    def receive(self) -> Receiving:
        return Receiving(self.tmp, self.limits.max_upload_bytes)

    def ingest(
        self,
        received: Received,
        name: str | None,
        by: str | None = None,
        admit: Callable[[tuple[StoredSession, ...]], None] | None = None,
        labels: tuple[str, ...] = (),
        read: ContentsReader = read_contents,
    ) -> Stored:
        """Read, then publish and catalogue an upload; raises LimitExceeded or NoSessions, or what `admit`
        raises for the sessions it holds (a token scoped to projects refuses others'). `by` names the actor
        publishing it. An upload whose bytes extend a stored upload of the same session keeps only the bytes
        after it (decision 0018), and its labels too. `labels` label the upload; bytes stored already gain
        them (nothing else is stored then). `read` reads what the upload holds (a server has a large one read by
        its process for heavy reads).

        The temp file is gone afterwards whatever happens (or kept as this machine's copy to read)."""
        shown = clean_name(name)
        try:
            existing = self.catalog.get(received.digest)
            if existing is not None and not existing.hidden:
                if admit is not None:
                    admit(existing.sessions)
                labelled = self._labelled(existing, labels)
                if labelled is not None:
                    return Stored(labelled, False, ())
                # deleted meanwhile: stored afresh below
            contents = read(str(received.temp), shown, self.limits)
            sessions = tuple(
                StoredSession(
                    received.digest,
                    i,
                    s.kind,
                    s.member,
                    s.session_id,
                    orjson.dumps(s.header).decode() if s.header is not None else None,
                    s.verdict,
                    s.events,
                )
                for i, s in enumerate(contents.sessions)
            )
            if admit is not None:
                admit(sessions)
            upload = Upload(
                received.digest,
                shown,
                received.size,
                contents.carrier,
                contents.media,
                time.time_ns() // 1_000_000,
                sessions,
                uploaded_by=by,
                labels=with_labels((), labels),
            )
            base = self._base_of(received, upload)
            current = self._publish(received, upload, base) if base is not None else None
            if base is None or isinstance(current, BaseGone):
                current = self.catalog.publish(
                    upload, lambda: self.blobs.publish(received), lambda: self.blobs.delete(received.digest)
                )
            self.unavailable = None  # the catalog answered: the list need not wait to ask it again
            self._remember(received.digest, received.sha)
            if current is not None:  # the same bytes, uploaded concurrently, won
                return Stored(current, False, contents.refused)
            return Stored(self.catalog.get(received.digest) or upload, True, contents.refused)
        finally:
            received.temp.unlink(missing_ok=True)

    def _base_of(self, received: Received, upload: Upload) -> Upload | None:
        """The longest stored upload of the same session whose whole bytes this one starts with: its digest is
        that of this upload's prefix of its size (each candidate's bytes are hashed here, none read there)."""
        if upload.carrier not in APPENDABLE or len(upload.sessions) != 1:
            return None
        ident = identity(upload.sessions[0].header)
        if ident is None:
            return None
        candidates = sorted(
            (
                u
                for u in self.catalog.holding(ident[0])
                if u.carrier == upload.carrier
                and len(u.sessions) == 1
                and identity(u.sessions[0].header) == ident
                and 0 < u.size < received.size
            ),
            key=lambda u: u.size,
        )
        found: Upload | None = None
        hashed, done = hashlib.sha256(), 0
        with open(received.temp, "rb") as f:
            for candidate in candidates:
                while done < candidate.size:
                    chunk = f.read(min(CHUNK, candidate.size - done))
                    if not chunk:
                        return found
                    hashed.update(chunk)
                    done += len(chunk)
                if hashed.hexdigest() == candidate.digest:
                    found = candidate
        return found

    def _publish(self, received: Received, upload: Upload, base: Upload) -> Upload | BaseGone | None:
        """Publish `upload` as `base` and the bytes after it: only those are stored. The catalog's answer, or
        BaseGone when the base was deleted meanwhile (then nothing was stored)."""
        tail = _tail(received, base.size, self.tmp)
        try:
            current = self.catalog.publish(
                replace(upload, base=base.digest, tail=tail.digest, labels=with_labels(base.labels, upload.labels)),
                lambda: self.blobs.publish(tail),
                lambda: self.blobs.delete(tail.digest),
            )
        except BaseGone as gone:
            return gone
        finally:
            tail.temp.unlink(missing_ok=True)
        if current is None:
            self.assembled.keep(received.digest, received.temp)  # its whole bytes: the first read copies nothing
        return current

    def _labelled(self, upload: Upload, labels: tuple[str, ...]) -> Upload | None:
        """`upload` labelled with `labels` too (the same bytes sent again with labels); None when it was
        deleted meanwhile (nothing is stored then)."""
        if set(labels) <= set(upload.labels):
            return upload

        def gone() -> None:
            raise BaseGone(upload.digest)  # the catalog would store it afresh: not here, it has no bytes to

        try:
            current = self.catalog.publish(replace(upload, labels=labels), gone, lambda: None)
        except BaseGone:
            return None
        self.unavailable = None  # the catalog answered
        return current if current is not None else self.catalog.get(upload.digest)  # shown again: as it is now

    def held(self, session_id: str, created: int) -> list[Upload]:
        """The uploads a user sees that hold the one session `session_id` created at `created` (ms), newest
        first: what a push asks for before it sends (docs/decisions/0024-push.md)."""
        found = [
            u
            for u in self._asked(lambda: self.catalog.holding(session_id))
            if not u.hidden
            and len(u.sessions) == 1
            and (ident := identity(u.sessions[0].header)) is not None
            and ident[:2] == (session_id, created)
        ]
        return sorted(found, key=lambda u: (u.uploaded_at, u.size), reverse=True)

    def append(
        self,
        session_id: str,
        created: int,
        offset: int,
        prefix: str,
        received: Received,
        by: str | None = None,
        admit: Callable[[tuple[StoredSession, ...]], None] | None = None,
        labels: tuple[str, ...] = (),
    ) -> Stored:
        """Store `received` as the bytes after the first `offset` of the session's log, whose digest is `prefix`
        (docs/decisions/0024-push.md): an upload extending the one that holds those bytes, labelled with its
        labels and `labels`. Only the new bytes are read and hashed here; they are not read as a log (its
        readers read on from the growing copy). No bytes at all label the upload those `offset` bytes are (a
        push of a log the server holds whole, run again with labels). Raises NotHeld, PrefixMismatch, or what
        `admit` raises. The temp file is gone afterwards."""
        try:
            held = self.held(session_id, created)
            if not held:
                raise NotHeld(session_id)
            base = next((u for u in held if u.digest == prefix and u.size == offset and u.carrier in APPENDABLE), None)
            if base is None:
                raise PrefixMismatch(held)
            if admit is not None:
                admit(base.sessions)
            if received.size + offset > self.limits.max_upload_bytes:
                raise LimitExceeded(
                    "max_upload_bytes",
                    f"the session would be {mib(received.size + offset)}, larger than "
                    f"{mib(self.limits.max_upload_bytes)}",
                )
            labels = with_labels(base.labels, labels)
            if received.size == 0:  # nothing new: those bytes are held, and labelled now
                labelled = self._labelled(base, labels)
                if labelled is None:
                    raise NotHeld(session_id)
                return Stored(labelled, False, ())
            sha = self._sha_of(base)
            with open(received.temp, "rb") as f:
                while chunk := f.read(CHUNK):
                    sha.update(chunk)
            digest = sha.hexdigest()
            existing = self.catalog.get(digest)
            if existing is not None and not existing.hidden:  # the same append again: nothing new but its labels
                labelled = self._labelled(existing, labels)
                if labelled is not None:
                    return Stored(labelled, False, ())
            session = replace(base.sessions[0], digest=digest, verdict="", events=None)
            upload = replace(
                base,
                digest=digest,
                size=offset + received.size,
                uploaded_at=time.time_ns() // 1_000_000,
                sessions=(session,),
                base=base.digest,
                tail=received.digest,
                hidden=False,
                uploaded_by=by,
                labels=labels,
            )
            try:
                current = self.catalog.publish(
                    upload, lambda: self.blobs.publish(received), lambda: self.blobs.delete(received.digest)
                )
            except BaseGone as gone:
                raise NotHeld(session_id) from gone
            self.unavailable = None
            self._remember(digest, sha)
            return Stored(current or self.catalog.get(digest) or upload, current is None, ())
        finally:
            received.temp.unlink(missing_ok=True)

    def _sha_of(self, upload: Upload) -> Any:
        """The unfinished SHA-256 of `upload`'s bytes: kept from when this process stored it, or its bytes
        hashed again (once: it is kept then)."""
        with self._lock:
            kept = self._hashes.get(upload.digest)
        if kept is not None:
            return kept.copy()
        sha = hashlib.sha256()
        for chunk in self.chunks(upload):
            sha.update(chunk)
        if sha.hexdigest() != upload.digest:
            raise OSError(f"the stored bytes of upload {upload.digest} do not match its digest")
        self._remember(upload.digest, sha)
        return sha.copy()

    def _remember(self, digest: str, sha: Any) -> None:
        if sha is None:
            return
        with self._lock:
            self._hashes[digest] = sha.copy()

    def uploads(self) -> list[Upload]:
        """Every upload a user sees, oldest first."""
        return [u for u in self.catalog.all() if not u.hidden]

    def catalogued(self) -> list[Upload]:
        """Every upload the catalog holds, hidden ones too (their bytes are kept), as `sessions` read them: read
        again only when the catalog's version moved. An upload asks the catalog itself, never the answer
        "down a moment ago" pages get: it may answer again by now."""
        self.catalog.version()
        self.unavailable = None  # the catalog answered
        self.sessions()
        with self._lock:
            return list(self._uploads.values())

    def size_of(self, digest: str) -> int | None:
        """The upload's size as `sessions` last read the catalog (None for one it did not find)."""
        with self._lock:
            found = self._uploads.get(digest)
        return found.size if found is not None else None

    def newest(self, limit: int) -> list[Upload]:
        """The first page of uploads, newest first, read through the catalog's index."""
        return self.catalog.newest(limit)

    def upload(self, digest: str) -> Upload | None:
        """The upload, unless a user deleted it."""
        found = self.catalog.get(digest) if valid_digest(digest) else None
        return found if found is not None and not found.hidden else None

    def local_path(self, upload: Upload) -> Path:
        """Where this machine reads the upload's bytes (for the team store, or an upload stored as parts,
        once `fetch` brought them): its first `upload.size` bytes."""
        with self._lock:
            chain = self._growing.get(upload.digest)
        if chain is not None:  # its version's growing copy, which may hold more than it by now: read its size
            return self.growing.path(chain[0].digest)
        return self.blobs.local_path(upload.digest) if upload.tail is None else self.assembled.path(upload.digest)

    def fetch(self, digest: str) -> Path:
        """The upload's bytes as a local file: streamed from the object store, or assembled from its parts,
        first when this machine has no copy. Raises OSError when they cannot be read, Unavailable when the
        store holding them does not answer."""
        with self._lock:
            chain = self._growing.get(digest)
        if chain is not None:
            return self.growing.bring(chain, self.blobs.chunks)
        upload = self._known(digest)
        if upload.tail is None:
            return self.blobs.fetch(digest)
        return self.assembled.get(digest) or self.assembled.fill(digest, self.chunks(upload))

    def chunks(self, upload: Upload) -> Iterator[bytes]:
        """The upload's bytes, streamed: its base's, then its tail, down to an upload stored whole."""
        for blob in self._parts(upload):
            yield from self.blobs.chunks(blob)

    def _parts(self, upload: Upload) -> list[str]:
        return [u.blob for u in self._chain(upload, self._known)]

    @staticmethod
    def _chain(upload: Upload, known: Callable[[str], Upload]) -> list[Upload]:
        """`upload` and the uploads it extends, the one stored whole first."""
        chain = [upload]
        while (base := chain[-1].base) is not None:
            chain.append(known(base))
        return chain[::-1]

    def _known(self, digest: str) -> Upload:
        with self._lock:
            found = self._uploads.get(digest)
        found = found or self.catalog.get(digest)
        if found is None:
            raise FileNotFoundError(f"no upload {digest}")
        return found

    def source(self, upload: Upload, session: StoredSession) -> SessionSource:
        return SessionSource(str(self.local_path(upload)), session.kind, session.member, display=upload.name)

    def changed(self) -> bool:
        """Whether an upload was added or deleted, by any process, since `sessions` last read the catalog."""
        with self._lock:
            listed = self._listed
        return listed is None or listed[0] != self._asked(self.catalog.version)

    def _asked(self, ask: Callable[[], T]) -> T:
        """`ask()` of the catalog; when it did not answer a moment ago, its Unavailable again at once: every
        page (a local session's too) asks whether uploads changed, and must not wait out the catalog's bound
        each time. Any answer, to this or to an upload or delete, ends that."""
        down = self.unavailable
        if down is not None and time.monotonic() < self._ask_again_at:
            raise Unavailable(down.role, down.detail)
        try:
            answer = ask()
        except Unavailable as exc:
            self.unavailable, self._ask_again_at = exc, time.monotonic() + ASK_AGAIN_SECONDS
            raise
        self.unavailable = None
        return answer

    def last_listed(self) -> list[ListedHistory]:
        """What `sessions` last found (none before it first did): listed while the catalog does not answer."""
        with self._lock:
            return list(self._listed[1]) if self._listed is not None else []

    def listed_version(self) -> int | None:
        """The catalog version `sessions` last read at (None before it first did)."""
        with self._lock:
            return self._listed[0] if self._listed is not None else None

    def sessions(self) -> list[ListedHistory]:
        """Every stored session, once however often it arrived, oldest first; read again only when the
        catalog's version moved (embedded: uploads whose blob is gone are skipped)."""
        version = self._asked(self.catalog.version)  # before the read: a change during it shows next time
        with self._lock:
            listed = self._listed
        if listed is not None and listed[0] == version:
            return list(listed[1])
        with self._reading:
            with self._lock:
                listed = self._listed
            if listed is not None and listed[0] == version:  # read while this waited
                return list(listed[1])
            return self._read_sessions(version)

    def _read_sessions(self, version: int) -> list[ListedHistory]:
        uploads = self.catalog.all()
        if not self.shared:
            # a blob once seen stays (a delete takes its upload out of the catalog first): each read after an
            # upload looks at the new one's file, not at a thousand, each a wait for the GIL on a busy server
            seen = self._blobs_seen
            uploads = [u for u in uploads if u.blob in seen or self.blobs.local_path(u.blob).is_file()]
            self._blobs_seen = {u.blob for u in uploads}
        found = histories(uploads)
        by_digest = {u.digest: u for u in uploads}
        # each session's newest upload, when it extends another, is read from its version's growing copy
        growing: dict[str, list[Upload]] = {}
        for h in found:
            if h.current.upload.tail is not None:
                with contextlib.suppress(KeyError):  # a base whose blob is gone: read as before, and fail so
                    growing[h.current.upload.digest] = self._chain(h.current.upload, by_digest.__getitem__)
        with self._lock:
            self._growing = growing
        made, self._histories = self._histories, {}
        out = []
        for h in found:
            key = _history_key(h, growing)
            listed = made.get(key) or self._listed_history(h, growing)
            self._histories[key] = listed
            out.append(listed)
        shown = {u.digest for u in uploads if not u.hidden}
        self._sources = {key: source for key, source in self._sources.items() if key[0] in shown}
        with self._lock:
            before = set(self._uploads)
            self._listed = (version, out)
            self._uploads = by_digest
        self.growing.retain(chain[0].digest for chain in growing.values())
        for digest in before - {u.digest for u in uploads if not u.hidden}:
            self.blobs.forget_local(digest)  # deleted by another process: this machine's copies go too
            self.assembled.forget(digest)
        return list(out)

    def _listed_history(self, history: History, growing: dict[str, list[Upload]]) -> ListedHistory:
        """`history` as listed; each session's source as the last reading made it when it is the same: a path
        is made once per upload, not again after every upload."""

        def listed(state: State) -> ListedSession:
            u, s = state.upload, state.session
            root = _growing_root(u, growing)
            key = (u.digest, s.member, s.kind, u.name, root)
            source = self._sources.get(key)
            if source is None:
                source = self.source(u, s)
                if root is not None:
                    source = replace(source, path=str(self.growing.path(root)))
                self._sources[key] = source
            return ListedSession(u.digest, source, s.header, u.name, u.size, u.uploaded_at, s.events, u.labels)

        states = sorted((s for v in history.versions for s in v), key=lambda s: s.order)
        return ListedHistory(
            tuple(tuple(listed(s) for s in v) for v in history.versions),
            listed(history.current),
            listed(history.first),
            with_labels((), [label for s in states for label in s.upload.labels]),
        )

    def delete(self, digest: str) -> bool:
        """A user's delete (docs/decisions/0018-session-versions.md): the upload leaves every list; its bytes
        go once no other upload starts with them (a crash in between leaves an orphan blob, which the next
        start removes)."""
        if not valid_digest(digest):
            return False
        deleted = self.catalog.remove(digest, self.blobs.delete)
        self.unavailable = None  # the catalog answered
        if deleted:
            self.assembled.forget(digest)
        return deleted


# A listed history's making: each of its uploads as it is listed (what of the upload and its session may change
# while its bytes cannot: its name, time and labels; the growing copy it is read from), in its versions, and which
# is current and which first. Not the uploads' places among all: a delete of an older upload moves every place, and
# no listed history. Plain values: hashing the uploads themselves would cost as much as listing them again.
ListedAs = tuple[str, int, str, int, tuple[str, ...], str | None]
HistoryKey = tuple[tuple[tuple[ListedAs, ...], ...], ListedAs, ListedAs]


def _history_key(history: History, growing: dict[str, list[Upload]]) -> HistoryKey:
    def part(state: State) -> ListedAs:
        u = state.upload
        return u.digest, state.session.ordinal, u.name, u.uploaded_at, u.labels, _growing_root(u, growing)

    versions = tuple(tuple(part(s) for s in v) for v in history.versions)
    return versions, part(history.current), part(history.first)


def _growing_root(upload: Upload, growing: dict[str, list[Upload]]) -> str | None:
    """The upload its growing copy is named by, when `upload` is read from one."""
    return growing[upload.digest][0].digest if upload.digest in growing else None


def _tail(received: Received, offset: int, folder: Path) -> Received:
    """The received bytes after `offset`, in a temp file of their own, hashed as they are copied."""
    fd, name = tempfile.mkstemp(dir=folder, prefix=f"upload-{os.getpid()}-", suffix=".part")
    hashed, size = hashlib.sha256(), 0
    try:
        with open(received.temp, "rb") as src, os.fdopen(fd, "wb") as dst:
            src.seek(offset)
            while chunk := src.read(CHUNK):
                hashed.update(chunk)
                dst.write(chunk)
                size += len(chunk)
            dst.flush()
            os.fsync(dst.fileno())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Received(Path(name), hashed.hexdigest(), size)


def open_catalog(url: str | None, data_dir: Path, waits: Waits = DEFAULT_WAITS) -> Catalog:
    """The catalog a URL names: None or `sqlite:///PATH` embedded, `postgresql://…` the team's (each call
    bounded by `waits`)."""
    if url is None:
        return SqliteCatalog(data_dir / "catalog.sqlite3")
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        return SqliteCatalog(Path(urlsplit(url).path))
    if scheme in ("postgresql", "postgres"):
        from .pg_catalog import PostgresCatalog

        return PostgresCatalog(url, waits)
    raise ValueError(f"store URL {url!r}: use postgresql://user@host:port/db, or leave it out for SQLite")


def access_records(catalog: Catalog) -> AccessRecords:
    """The tokens and audit trail kept in `catalog`'s database."""
    if isinstance(catalog, SqliteCatalog):
        return SqliteAccess(catalog)
    from .pg_access import PostgresAccess
    from .pg_catalog import PostgresCatalog

    assert isinstance(catalog, PostgresCatalog)
    return PostgresAccess(catalog)


def open_blobs(url: str | None, data_dir: Path, read_cache_bytes: int) -> Blobs:
    """The blobs a URL names: None the `blobs/` folder of `data_dir`, `s3://bucket/prefix` an object store."""
    if url is None:
        return FileBlobs(data_dir)
    if urlsplit(url).scheme == "s3":
        from .s3_blobs import S3Blobs

        return S3Blobs(url, data_dir / "cache", read_cache_bytes)
    raise ValueError(f"blobs URL {url!r}: use s3://bucket/prefix, or leave it out for files in --data-dir")
