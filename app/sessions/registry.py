"""The sessions a server knows: found from its paths, keyed for URLs, read on demand.

Keys follow docs/product.md Interfaces: the header id (URL-safe) when no other
loaded session shares it, else the id plus `~` and 8 hex digits of a hash of
the source's path. A `SessionLog` is cached per file version (size, mtime),
so a growing log is re-read when it changes and not before: read on from where
it stopped when the bytes read before are still there (`appended`), afresh
when the file was rewritten, and not at all once it holds another session.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import sqlite3
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, TypeVar

from cachetools import LRUCache

from ..history.session import SessionLog, load_session
from ..log.plaintext import DEFAULT_LIMITS, MIB, ReadLimits
from ..log.records import NotASessionLog
from ..log.sources import (
    KindCache,
    NotASession,
    RecordChanged,
    SessionSource,
    discover,
    forget_archive,
    read_source_header,
)
from ..store import ListedHistory, ListedSession, UploadStore
from ..store.unavailable import Unavailable
from .caches import CACHE_MB, SessionCache, approx_bytes
from .generation_keys import earlier_claims, held_apart
from .keys import Claim, Held, assign
from .known_versions import KnownVersions

T = TypeVar("T")
# how long an answer of `heard` stands: every open live tail asks it four times a second on the event loop, and
# forty tails' SQLite reads there, each a wait for the GIL behind the worker threads, held up every request
HEARD_SECONDS = 0.2
_URL_SAFE = re.compile(r"[A-Za-z0-9._-]+")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")


def url_safe_id(session_id: str) -> str:
    """The id itself when URL-safe; else a readable slug of it and a digest of the whole id, which a
    plain id (never holding `~`) cannot spell: `{{sessionId}}` reads `sessionId~1f3a…`, not `~007B~007B…`."""
    if _URL_SAFE.fullmatch(session_id) and session_id not in (".", ".."):
        return session_id
    return f"{id_slug(session_id)}~{hashlib.sha256(session_id.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def id_slug(session_id: str) -> str:
    """The readable part of a key: the id's URL-safe runs, joined by `-`."""
    return _UNSAFE_RUN.sub("-", session_id).strip("-.")[:64] or "session"


def source_identity(source: SessionSource) -> str:
    """What tells one source from every other: its file and member. Never its label: an upload's label is
    the name its client gave, and dsh names every log `session.jsonl[.zstd]`."""
    return source.path if source.member is None else f"{source.path}\0{source.member}"


def _claim(source: SessionSource, header: dict[str, Any] | None, digest: str | None) -> Claim:
    """What a source asks for: its id's short key, and a key unique by construction, the id's slug and
    8 hex digits of the upload's digest or of a hash of the source's path (docs/product.md Interfaces)."""
    sid = header.get("id") if header else None
    sid = sid if isinstance(sid, str) and sid else None
    base = id_slug(sid) if sid is not None else "session"
    return Claim(
        source_identity(source),
        sid,
        url_safe_id(sid) if sid is not None else None,
        f"{base}~{digest[:8] if digest else path_hash(source)}",
    )


def _stored_claim(history: ListedHistory) -> Claim:
    """What an uploaded session asks for: its newest upload's claim, with its earliest upload's unique key, so
    that the key never moves as the session grows."""
    current, first = history.current, history.first
    unique = _claim(first.source, first.header, first.digest).unique
    return replace(_claim(current.source, current.header, current.digest), unique=unique)


@dataclass(frozen=True, slots=True)
class Made:
    """An uploaded session's entry, and the entries of its earlier uploads, as made from its listed history
    (`asked`, its claim before any other was weighed; `claim`, after)."""

    history: ListedHistory
    asked: Claim
    claim: Claim
    entry: Entry
    states: dict[str, Entry]


def _state_key(key: str, digest: str) -> str:
    return f"{key}{STATE_MARK}{digest[:12]}"


def _versions(key: str, history: ListedHistory) -> Versions:
    def uploaded(s: ListedSession) -> UploadedAs:
        return UploadedAs(_state_key(key, s.digest), s.digest, s.name, s.size, s.uploaded_at, s.events)

    return Versions(key, tuple(tuple(uploaded(s) for s in v) for v in history.versions), history.current.digest)


def _states(listed: Entry, history: ListedHistory) -> dict[str, Entry]:
    """Each upload of `listed`'s session at its own key: the newest's is `listed` itself; an earlier one's an
    entry of its own, showing the session as it stood then."""
    out: dict[str, Entry] = {}
    for state in (s for v in history.versions for s in v):
        key = _state_key(listed.key, state.digest)
        if state.digest == history.current.digest:
            out[key] = listed
        else:
            out[key] = replace(
                listed,
                key=key,
                source=state.source,
                header=state.header,
                upload=state.digest,
                group=f"upload:{state.digest}",
                unique=key,
                as_of=state.digest,
            )
    return out


def catalog_keys(claims: list[Claim]) -> dict[str, Held]:
    """The key of each uploaded session, decided by the catalog alone so every process gives the same: the
    earliest upload holding an id gets its short key, later copies their unique key. Claims oldest upload
    first; the registry hands these to `assign` as held keys."""
    taken: set[str] = set()
    held: dict[str, Held] = {}
    for claim in claims:
        key = claim.short if claim.short is not None and claim.short not in taken else claim.unique
        taken.add(key)
        held[claim.source] = Held(key, claim.session_id)
    return held


def path_hash(source: SessionSource) -> str:
    return hashlib.sha256(source.label.encode("utf-8", "surrogatepass")).hexdigest()[:8]


@dataclass(frozen=True, slots=True)
class UploadedAs:
    """One upload of an uploaded session: the session as it stood then, at its own key (`key@digest12`)."""

    key: str
    digest: str
    name: str  # the upload's label
    size: int
    uploaded_at: int  # ms since the epoch
    events: int | None  # as stored when uploaded


@dataclass(frozen=True, slots=True)
class Versions:
    """An uploaded session's history (docs/decisions/0018-session-versions.md): each version's uploads, oldest
    first, versions by their first upload, and which upload the session's key shows."""

    key: str  # the session's: it shows the newest upload
    versions: tuple[tuple[UploadedAs, ...], ...]
    current: str  # the newest upload's digest


STATE_MARK = "@"  # `key@digest12`: a session as one upload held it (no session id or key holds `@`)


@dataclass(frozen=True, slots=True)
class Entry:
    key: str
    source: SessionSource
    header: dict[str, Any] | None
    upload: str | None = None  # digest of the upload holding this session
    group: str = ""  # the PATH or upload it was found in: sessions of one group link to each other
    unique: str = ""  # its key unique by construction, which always answers for it (README "Session keys")
    versions: Versions | None = None  # an uploaded session's: every upload of it
    as_of: str | None = None  # the upload shown, when it is not the session's newest (a `key@digest12`)
    labels: tuple[str, ...] = ()  # an uploaded session's: every label of every upload of it (none when served)

    @property
    def session_id(self) -> str | None:
        sid = self.header.get("id") if self.header else None
        return sid if isinstance(sid, str) else None


FileVersion = tuple[int, int, int]  # (size, mtime in ns, inode)


def file_version(source: SessionSource) -> FileVersion:
    """(size, mtime, inode): a log that grew in place keeps its inode and gains bytes."""
    return _version(os.stat(source.path))


def _version(st: os.stat_result) -> FileVersion:
    return (st.st_size, st.st_mtime_ns, st.st_ino)


# Carriers that grow only by appending; a SQLite store rewrites its pages in place, so its bytes prove nothing.
APPEND_ONLY = frozenset({"jsonl", "jsonl-zstd"})
# Bytes hashed per read. The running CRC at each block boundary is kept per file version, so another look at
# the same version hashes at most one block, and a check at a new version reads the file once (~35 ms for
# 100 MB, docs/decisions/0010-rewrite-detection.md).
BLOCK = 1 << 20
_RUNNING_KEPT = 64  # file versions whose block CRCs are kept, the least recently used dropped first
_RUNNING: LRUCache[tuple[str, FileVersion], list[int]] = LRUCache(_RUNNING_KEPT)  # crcs[i]: of the first i blocks
_running_lock = threading.Lock()


def fingerprint(source: SessionSource, size: int) -> bytes:
    """A CRC-32 of the file's first `size` bytes, and how many there were. An append after them does not
    change it; a change to them does once the file's version moves. At a version seen before, the blocks
    whose CRCs are kept are not read again: a rewrite that keeps the version (size, mtime and inode) shows
    only if it lies past them (docs/decisions/0010-rewrite-detection.md). Raises OSError."""
    if source.kind not in APPEND_ONLY:
        return b""
    with open(source.path, "rb", buffering=0) as f:
        version = _version(os.fstat(f.fileno()))
        with _running_lock:
            crcs = list(_RUNNING.get((source.path, version), (0,)))
        whole = min(size, version[0]) // BLOCK
        del crcs[whole + 1 :]
        f.seek((len(crcs) - 1) * BLOCK)
        block = bytearray(BLOCK if len(crcs) <= whole else 0)
        while len(crcs) <= whole and _read_into(f, block) == BLOCK:
            crcs.append(zlib.crc32(block, crcs[-1]))
        done = (len(crcs) - 1) * BLOCK
        f.seek(done)
        # less than a block is left, unless the file ended early: then what it still holds is less too
        rest = bytearray(min(max(0, size - done), BLOCK))
        rest_read = _read_into(f, rest)
        if _version(os.fstat(f.fileno())) == version:  # else the bytes hashed may mix two versions: keep none
            _keep(source.path, version, crcs)
    crc = zlib.crc32(memoryview(rest)[:rest_read], crcs[-1])
    return crc.to_bytes(4, "big") + (done + rest_read).to_bytes(8, "big")


def _read_into(f: io.FileIO, buf: bytearray) -> int:
    """How many bytes were read into `buf`: all it holds unless the file ends first (an unbuffered read may
    return fewer bytes than asked for before the end)."""
    view, got = memoryview(buf), 0
    while got < len(buf) and (n := f.readinto(view[got:])):
        got += n
    return got


def _keep(path: str, version: FileVersion, crcs: list[int]) -> None:
    with _running_lock:
        known = _RUNNING.get((path, version))
        if known is None or len(known) < len(crcs):
            _RUNNING[(path, version)] = crcs


class Mark(NamedTuple):
    """What a read saw of a file: its version, and the fingerprint of its bytes at that size."""

    version: FileVersion
    fingerprint: bytes


def mark_at(source: SessionSource, version: FileVersion) -> Mark:
    return Mark(version, fingerprint(source, version[0]))


def appended(source: SessionSource, before: Mark, now: FileVersion) -> bool:
    """Whether the file, at `now`, is what `before` saw with bytes added after it, if any (the same inode, as
    long or longer, the bytes seen unchanged): only then may a read go on from where it stopped. Raises OSError."""
    old = before.version
    return now[2] == old[2] and now[0] >= old[0] and fingerprint(source, old[0]) == before.fingerprint


def moved_on(source: SessionSource, before: Mark, now: FileVersion) -> bool:
    """Whether `source`, another file than the one `before` saw, starts with the bytes it saw: an uploaded
    session's first append moves it from its upload's file to its version's growing copy
    (docs/decisions/0024-push.md), which a page follows as an append, not as a rewrite. Raises OSError."""
    return (
        source.kind in APPEND_ONLY
        and now[0] >= before.version[0]
        and fingerprint(source, before.version[0]) == before.fingerprint
    )


class CachedLog(NamedTuple):
    """A log as read, with the version and fingerprint of the file it was read from."""

    version: FileVersion
    log: SessionLog
    fingerprint: bytes

    @property
    def mark(self) -> Mark:
        return Mark(self.version, self.fingerprint)


class SessionGone(LookupError):
    """A key whose session went while it was being shown: its file deleted, emptied, or holding another session."""


# a source's header at a file version: a warm listing costs one stat per log, not a read
HeaderCache = dict[SessionSource, tuple[FileVersion, dict[str, Any] | None]]


def _cached_header(
    source: SessionSource, known: HeaderCache, seen: HeaderCache, version: FileVersion | None = None
) -> dict[str, Any] | None:
    """The source's header, read again only when its file version changed; recorded in `seen`.

    `version` is the one discovery saw, when it saw one (a root artifact): no second stat."""
    try:
        version = version or file_version(source)
    except OSError:
        return read_source_header(source)  # vanished or unreadable: the read reports it, nothing to cache
    cached = known.get(source)
    header = cached[1] if cached is not None and cached[0] == version else read_source_header(source)
    seen[source] = (version, header)
    return header


class Registry:
    """Sessions found under the configured paths; thread-safe."""

    def __init__(
        self,
        paths: list[str],
        store: UploadStore | None = None,
        *,
        limits: ReadLimits = DEFAULT_LIMITS,
        cache_bytes: int = CACHE_MB * MIB,
    ) -> None:
        self.paths = list(paths)
        self.store = store
        self.limits = limits
        self._lock = threading.Lock()
        # one refresh at a time: many asking at once wait for the one under way, and then find nothing left to do,
        # rather than each finding every session again (a look-up of a listed key does not wait: `_catch_up`)
        self._refreshing = threading.RLock()
        self._entries: dict[str, Entry] = {}
        self._made: list[Made] = []  # each uploaded session's entry as the last refresh made it
        self._aliases: dict[str, Entry] = {}  # other keys that mean one session alone: its unique key, its id
        self._ambiguous: dict[str, tuple[Entry, ...]] = {}  # short keys several copies share: a chooser
        self._held: dict[str, Held] = {}  # the key each source was listed under, kept from refresh to refresh
        self._refused: list[NotASession] = []
        # each key's log, prefix and derived values, least recently used first out past `cache_bytes`
        self._cache: SessionCache[CachedLog] = SessionCache(cache_bytes)
        # one read, extension or derivation of a session's log at a time, each session apart: a long one of
        # one session never holds up reading another (`_reading`)
        self._readers: dict[str, threading.RLock] = {}
        self._headers: HeaderCache = {}
        self._basis: int | None = None  # the catalog version the entries were made from
        self._heard: tuple[float, int | None] = (float("-inf"), None)  # (monotonic) when `heard` asked, and its answer
        self._kinds: KindCache = {}  # the carrier of each root artifact, so it is not opened to be sniffed
        self._forgetting: list[Callable[[list[SessionSource]], object]] = []  # told of the sources that went
        self._version = 0  # moves when the entries or a file's version change (`version`)
        # uploaded sessions' file versions, looked at once per upload (`known_version`)
        self._uploaded = KnownVersions(file_version, store.size_of if store is not None else lambda _: None)
        self.refresh()

    def on_forget(self, hook: Callable[[list[SessionSource]], object]) -> None:
        """Have `hook` told of the sources each refresh finds gone (a deleted upload, a vanished file), so what
        is kept of them elsewhere (the cross-session search index) goes with them."""
        self._forgetting.append(hook)

    def refresh(self) -> None:
        """Find sessions again: new files appear, vanished ones go."""
        with self._refreshing:
            self._refresh()

    def _refresh(self) -> None:
        refused: list[NotASession] = []
        # (source, header, upload digest, group): a group is what the user named, so
        # sessions found under one PATH (or in one upload) can link to each other
        headers: list[tuple[SessionSource, dict[str, Any] | None, str | None, str]] = []
        known = self._headers
        seen: HeaderCache = {}
        for path in self.paths:
            found = discover([path], kinds=self._kinds)
            refused += found.refused
            group = os.path.abspath(path)
            headers += [
                (s, _cached_header(s, known, seen, found.versions.get(s.path)), None, group) for s in found.sources
            ]
        stored, basis = self._stored()
        with self._lock:
            # the same files at the same versions, the catalog at the same version: what the last refresh made
            # stands, so a warm list costs the files on disk and one catalog read, however many uploads there are
            if basis is not None and basis == self._basis and seen == self._headers and refused == self._refused:
                return
        on_disk = len(headers)
        headers += [
            (h.current.source, h.current.header, h.current.digest, f"upload:{h.current.digest}") for h in stored
        ]
        made = {id(m.history): m for m in self._made}  # each kept with its history: no id is another's meanwhile
        asked = [m.asked if (m := made.get(id(h))) is not None and m.history is h else _stored_claim(h) for h in stored]
        claims = [_claim(source, header, digest) for source, header, digest, _ in headers[:on_disk]] + asked
        uniques = Counter(c.unique for c in claims)
        # two sessions of one upload sharing an id share its digest too: their member's path tells them apart
        claims = [
            replace(c, unique=f"{c.unique.rsplit('~', 1)[0]}~{path_hash(h[0])}") if uniques[c.unique] > 1 else c
            for c, h in zip(claims, headers, strict=True)
        ]
        claims, earlier = earlier_claims(claims, [h[0] for h in headers])  # a session's id names its newest file
        uploaded = [c for c, h in zip(claims, headers, strict=True) if h[2] is not None]
        with self._lock:
            keys = assign(claims, {**held_apart(self._held, earlier), **catalog_keys(uploaded)})
        entries: dict[str, Entry] = {}
        states: dict[str, Entry] = {}  # each upload of an uploaded session, at `key@digest12`
        histories: list[ListedHistory | None] = [None] * on_disk + stored
        histories_asked: list[Claim | None] = [None] * on_disk + asked
        # each made once, with its uploads' history: a refresh follows every upload. An uploaded session whose
        # listed history, claim and key are as the last refresh made them is that refresh's (the store hands
        # back the same history while its uploads are the same): an upload remakes its own session's, not a
        # thousand others'
        kept: list[Made] = []
        for claim, (source, header, digest, group), history, first_asked in zip(
            claims, headers, histories, histories_asked, strict=True
        ):
            key = keys.primary[claim.source]
            if history is None or first_asked is None:
                entries[key] = Entry(key, source, header, digest, group, claim.unique)
                continue
            m = made.get(id(history))
            if m is None or m.history is not history or m.claim != claim or m.entry.key != key:
                entry = Entry(
                    key, source, header, digest, group, claim.unique, _versions(key, history), labels=history.labels
                )
                m = Made(history, first_asked, claim, entry, _states(entry, history))
            kept.append(m)
            entries[key] = m.entry
            states |= m.states
        by_source = {source_identity(e.source): e for e in entries.values()}
        aliases = {key: by_source[source] for key, source in keys.aliases.items()}
        aliases |= states
        ambiguous = {key: tuple(by_source[s] for s in sources) for key, sources in keys.ambiguous.items()}
        with self._lock:
            if entries != self._entries or seen != self._headers:
                self._version += 1
            gone = {e.source.path for e in self._entries.values()} - {e.source.path for e in entries.values()}
            went = list({e.source for e in self._entries.values()} - {e.source for e in entries.values()})
            self._entries = entries
            self._made = kept
            self._basis = basis
            self._aliases = aliases
            self._ambiguous = ambiguous
            self._held = {source_identity(e.source): Held(e.key, e.session_id) for e in entries.values()}
            self._refused = refused
            self._headers = seen  # vanished sources drop out
            self._uploaded.retain({(e.source, e.upload) for e in entries.values() if e.upload is not None})
            paths = {s.path for s in seen}
            self._kinds = {p: k for p, k in self._kinds.items() if p in paths}
            # all a key kept goes with its session: deleted, vanished, or the key moved to another source
            # (a deleted upload, an id no longer shared)
            self._cache.retain(
                lambda key, source: (
                    (key in entries and entries[key].source == source)
                    or (key in aliases and aliases[key].key == key and aliases[key].source == source)
                )
            )
        for path in gone:
            forget_archive(path)
        if went:
            for hook in self._forgetting:
                hook(went)

    def _stored(self) -> tuple[list[ListedHistory], int | None]:
        """The store's sessions, and the catalog version they were read at. When the store does not answer:
        those its last read found, still listed (their pages read from this machine's copies where it has
        them), and `unavailable` says so until it answers again."""
        if self.store is None:
            return [], None
        try:
            stored = self.store.sessions()
        except Unavailable:
            return self.store.last_listed(), self.store.listed_version()
        return stored, self.store.listed_version()

    def heard(self) -> int | None:
        """A count that moves when the store's catalog was changed by any process (PostgreSQL's notices, SQLite's
        version row), as asked at most HEARD_SECONDS ago; None while it cannot tell, or without a store: ask `entry`
        again instead."""
        if self.store is None:
            return None
        now = time.monotonic()
        with self._lock:
            asked, answer = self._heard
        if now - asked < HEARD_SECONDS:
            return answer
        try:
            answer = self.store.catalog.heard()
        except (Unavailable, sqlite3.Error):
            answer = None
        with self._lock:
            self._heard = (now, answer)
        return answer

    @property
    def unavailable(self) -> Unavailable | None:
        """The store's failure to answer, until it answers again."""
        return self.store.unavailable if self.store is not None else None

    @property
    def version(self) -> int:
        """A number that moves whenever the sessions found, their keys or headers, or any one's file version
        changed: what a listing made of one version (an order, a count) stands until it moves."""
        with self._lock:
            return self._version

    @property
    def kept_bytes(self) -> int:
        """An estimate of the bytes kept of the sessions read (logs, prefixes, derived values): `cache_bytes` at
        most, unless the one session in use alone is larger."""
        with self._lock:
            return self._cache.size

    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._entries.values())

    def uploaded(self) -> list[Entry]:
        """Every uploaded session as each upload holds it: the listed ones (their newest upload) and, at their
        own `key@digest12`, the earlier uploads of each."""
        with self._lock:
            listed = [e for e in self._entries.values() if e.upload is not None]
            return listed + [e for k, e in self._aliases.items() if e.as_of is not None and e.key == k]

    def known_version(self, entry: Entry) -> FileVersion:
        """`entry`'s file version: an upload's as first seen holding its bytes (`KnownVersions`: no look at a
        thousand files for each list or search), a file on disk's as it is now. Raises OSError."""
        if entry.upload is not None:
            return self._uploaded.of(entry.source, entry.upload)
        return file_version(entry.source)

    def look_again(self, entry: Entry) -> FileVersion:
        """`entry`'s file version as it is now, which `known_version` gives from then on. Raises OSError."""
        if entry.upload is not None:
            return self._uploaded.look_again(entry.source, entry.upload)
        return file_version(entry.source)

    def refused(self) -> list[NotASession]:
        with self._lock:
            return list(self._refused)

    def entry(self, key: str) -> Entry | None:
        """The session `key` names: the key it is listed under, or another key that means it alone. Uploads
        added or deleted by another process are found first (one catalog version read), and an upload's
        bytes are on this machine once it returns (the team store streams them into its read cache)."""
        if self.store is not None:
            try:
                if self.store.changed():
                    self._catch_up(key)
            except Unavailable:  # the entries the store last listed stand meanwhile
                pass
        with self._lock:
            found = self._entries.get(key) or self._aliases.get(key)
        down = self.unavailable
        if found is None and down is not None:  # it may be an upload the store cannot be asked for: no 404
            raise Unavailable(down.role, down.detail)
        if found is not None and found.upload is not None and self.store is not None:
            with contextlib.suppress(OSError):  # its read reports the missing bytes as for a vanished file
                self.store.fetch(found.upload)  # raises Unavailable: the store holds them but does not answer
        return found

    def _catch_up(self, key: str) -> None:
        """A refresh for a look-up of `key` once the catalog moved. While another thread's refresh is under way, a
        key listed already is answered as listed (as it was a moment before): under one client's stream of uploads,
        every page and live tail of any session waited for each refresh in turn. A key not listed yet waits for
        that refresh, and reads again: it may name what just arrived."""
        if self._refreshing.acquire(blocking=False):
            try:
                self._refresh()
            finally:
                self._refreshing.release()
            return
        with self._lock:
            listed = key in self._entries or key in self._aliases
        if not listed:
            self.refresh()

    def copies(self, key: str) -> tuple[Entry, ...]:
        """The sessions an ambiguous short key could mean (the chooser's), or () for any other key."""
        with self._lock:
            return self._ambiguous.get(key, ())

    def log(self, key: str) -> SessionLog | None:
        """The session read at its current file version: read on when the file only grew, afresh when it
        was rewritten. None when the key answers no more: its file is gone, or holds another session now
        (sessions are found again first, so a key answers for what its file holds). Raises NotASessionLog."""
        with self._reading(key):
            for _ in range(2):  # a second look once sessions were found again
                entry = self.entry(key)
                if entry is None:
                    return None
                try:
                    log = self._read(key, entry)
                except OSError:
                    log = None  # deleted, or unreadable now
                if log is not None:
                    return log
                self.refresh()
            return None

    @contextmanager
    def _reading(self, *keys: str) -> Iterator[None]:
        """The reading locks of `keys`, taken in one order (their names') whoever asks, so two requests
        each needing two sessions never wait for each other."""
        with self._lock:
            locks = [self._readers.setdefault(k, threading.RLock()) for k in sorted(set(keys))]
        with contextlib.ExitStack() as held:
            for lock in locks:
                held.enter_context(lock)
            yield

    def _read(self, key: str, entry: Entry) -> SessionLog | None:
        """`entry`'s log at its file's current version; None when the file no longer starts with the
        header the entry was found with. Raises OSError and NotASessionLog."""
        version = file_version(entry.source)
        with self._lock:
            cached = self._cache.log(key)
        if cached and cached.version == version:
            return cached.log
        now = mark_at(entry.source, version)  # taken before reading: a rewrite during the read shows next time
        if cached and appended(entry.source, cached.mark, version) and cached.log.extend():
            log = cached.log  # read on from where it stopped: only the new bytes
        elif self._holds(entry, version):
            log = load_session(entry.source, limits=self.limits)
        else:
            return None
        weight = approx_bytes(log)
        with self._lock:
            self._cache.keep_log(key, entry.source, CachedLog(version, log, now.fingerprint), weight)
        return log

    def _holds(self, entry: Entry, version: FileVersion) -> bool:
        """Whether `entry`'s file, at `version`, still starts with the header it was found with. The header
        cache learns the version when it does, so a listing need not read that header again."""
        with self._lock:
            known = self._headers.get(entry.source)
        if known is None or known[0] == version:
            return True  # an upload's file (never rewritten), or one found at this very version
        header = read_source_header(entry.source)
        if header != entry.header:
            return False
        with self._lock:
            if entry.source in self._headers:
                self._headers[entry.source] = (version, header)
                self._version += 1  # the next refresh sees this version as known: it moves nothing then
        return True

    def drop(self, changed: RecordChanged) -> None:
        """Forget what was read of the log that `changed` was reread from: the next look reads it afresh."""
        with self._lock:
            self._cache.retain(lambda key, source: source.label != changed.location.file)

    def first_screen(self, key: str, events: int) -> SessionLog | None:
        """The log read at its current version, or, while it has not been read whole, its first
        `events` events (a `partial` log) so a first screen need not wait for a long log. None when
        its file is gone or holds another session now (`log` finds the sessions again)."""
        entry = self.entry(key)
        if entry is None:
            return None
        try:
            version = file_version(entry.source)
        except OSError:
            return None
        with self._lock:
            cached = self._cache.log(key)
            prefix = self._cache.prefix(key)
        if cached and cached[0] == version:
            return cached[1]
        if prefix and prefix[0] == version:
            return prefix[1]
        if not self._holds(entry, version):
            return None
        log = load_session(entry.source, events=events, limits=self.limits)
        weight = approx_bytes(log)
        with self._lock:
            self._cache.keep_prefix(key, (version, log), weight)
        return log

    def peek(self, key: str, name: str) -> Any:
        """A derived value of the current file version if it was built already, else None."""
        entry = self.entry(key)
        if entry is None:
            return None
        with self._lock:  # a look that is no use: it leaves the order in which keys go as it was
            cached_log = self._cache.log(key, touch=False)
            cached = self._cache.derived(key, name, touch=False)
        if cached_log is None or cached is None or cached[0] is not cached_log[1]:
            return None
        try:
            return cached[1] if cached_log[0] == file_version(entry.source) else None
        except OSError:
            return None

    def derived(self, key: str, name: str, build: Callable[[SessionLog], T], also: tuple[str, ...] = ()) -> T:
        """`build(log)` computed once per file version of the session (rows, anchors, search text); `also`
        names other sessions `build` reads (a comparison's other side), none of them read on meanwhile."""
        log = self.log(key)
        if log is None:
            raise SessionGone(key)
        return self.derived_of(key, name, log, build, also)

    def derived_of(
        self, key: str, name: str, log: SessionLog, build: Callable[[SessionLog], T], also: tuple[str, ...] = ()
    ) -> T:
        """`build(log)` kept while `log` is the one this registry holds for `key` (a prefix, too)."""
        with self._lock:
            cached = self._cache.derived(key, name)
        if cached is not None and cached[0] is log:
            found: T = cached[1]  # the value `build` made for this name, kept under it
            return found
        with self._reading(key, *also):
            with self._lock:  # built meanwhile by the request this one waited for: not built twice
                cached = self._cache.derived(key, name)
            if cached is not None and cached[0] is log:
                again: T = cached[1]
                return again
            value = build(log)
            weight = approx_bytes(value, apart=[log])
            with self._lock:
                self._cache.keep_derived(key, name, log, value, weight)
        return value

    def reweigh(self, key: str, name: str) -> None:
        """Weigh the derived value `name` again once it grew in place (views kept inside it are made as
        pages ask for them), so that `cache_mb` counts them."""
        with self._lock:
            cached = self._cache.derived(key, name, touch=False)
        if cached is None:
            return
        log, value = cached
        weight = approx_bytes(value, apart=[log])
        with self._lock:
            now = self._cache.derived(key, name, touch=False)
            if now is not None and now[0] is log and now[1] is value:  # not read anew meanwhile
                self._cache.keep_derived(key, name, log, value, weight)


__all__ = ["Entry", "NotASessionLog", "Registry", "url_safe_id"]
