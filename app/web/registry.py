"""The sessions a server knows: found from its paths, keyed for URLs, read on demand.

Keys follow PRODUCT.md Interfaces: the header id (URL-safe) when no other
loaded session shares it, else the id plus `~` and 8 hex digits of a hash of
the source's path. A `SessionLog` is cached per file version (size, mtime),
so a growing log is re-read when it changes and not before.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..history.session import SessionLog, load_session
from ..log.records import NotASessionLog
from ..log.sources import KindCache, NotASession, SessionSource, discover, read_source_header
from ..store import UploadStore

T = TypeVar("T")
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


def path_hash(source: SessionSource) -> str:
    return hashlib.sha256(source.label.encode("utf-8", "surrogatepass")).hexdigest()[:8]


@dataclass(frozen=True, slots=True)
class Entry:
    key: str
    source: SessionSource
    header: dict[str, Any] | None
    upload: str | None = None  # digest of the upload holding this session
    group: str = ""  # the PATH or upload it was found in: sessions of one group link to each other

    @property
    def session_id(self) -> str | None:
        sid = self.header.get("id") if self.header else None
        return sid if isinstance(sid, str) else None


FileVersion = tuple[int, int, int]  # (size, mtime in ns, inode)


def file_version(source: SessionSource) -> FileVersion:
    """(size, mtime, inode): a log that grew in place keeps its inode and gains bytes."""
    st = os.stat(source.path)
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def grew_in_place(old: FileVersion, new: FileVersion) -> bool:
    return new[2] == old[2] and new[0] > old[0]


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

    def __init__(self, paths: list[str], store: UploadStore | None = None) -> None:
        self.paths = list(paths)
        self.store = store
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._refused: list[NotASession] = []
        self._logs: dict[str, tuple[FileVersion, SessionLog]] = {}
        self._derived: dict[tuple[str, str], tuple[SessionLog, Any]] = {}
        self._prefixes: dict[str, tuple[FileVersion, SessionLog]] = {}
        self._reading = threading.RLock()  # one read or extension of a log at a time
        self._headers: HeaderCache = {}
        self._kinds: KindCache = {}  # the carrier of each root artifact, so it is not opened to be sniffed
        self.refresh()

    def refresh(self) -> None:
        """Find sessions again: new files appear, vanished ones go."""
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
        if self.store is not None:
            headers += [(u.source, u.header, u.digest, f"upload:{u.digest}") for u in self.store.sessions()]
        ids = Counter(h.get("id") for _, h, _, _ in headers if h and isinstance(h.get("id"), str))
        entries: dict[str, Entry] = {}
        for source, header, digest, group in headers:
            sid = header.get("id") if header else None
            if isinstance(sid, str) and sid and ids[sid] == 1:
                key = url_safe_id(sid)
            else:
                base = id_slug(sid) if isinstance(sid, str) and sid else "session"
                # an upload is named by its digest (PRODUCT.md Interfaces); two sessions
                # of one upload sharing an id fall back to their member's name
                key = f"{base}~{digest[:8] if digest else path_hash(source)}"
                if key in entries:
                    key = f"{base}~{path_hash(source)}"
            entries[key] = Entry(key, source, header, digest, group)
        with self._lock:
            self._entries = entries
            self._refused = refused
            self._headers = seen  # vanished sources drop out
            paths = {s.path for s in seen}
            self._kinds = {p: k for p, k in self._kinds.items() if p in paths}
            # a key can move to another source (a deleted upload, an id no longer shared)
            self._logs = {k: v for k, v in self._logs.items() if k in entries and v[1].source == entries[k].source}

    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._entries.values())

    def refused(self) -> list[NotASession]:
        with self._lock:
            return list(self._refused)

    def entry(self, key: str) -> Entry | None:
        with self._lock:
            return self._entries.get(key)

    def log(self, key: str) -> SessionLog | None:
        """The session read at its current file version; raises NotASessionLog."""
        entry = self.entry(key)
        if entry is None:
            return None
        with self._reading:
            version = file_version(entry.source)
            with self._lock:
                cached = self._logs.get(key)
            if cached and cached[0] == version:
                return cached[1]
            if cached and grew_in_place(cached[0], version) and cached[1].extend():
                log = cached[1]  # read on from where it stopped: only the new bytes
            else:
                log = load_session(entry.source)
            with self._lock:
                self._logs[key] = (version, log)
                self._prefixes.pop(key, None)
                self._derived = {k: v for k, v in self._derived.items() if k[0] != key}
            return log

    def first_screen(self, key: str, events: int) -> SessionLog | None:
        """The log read at its current version, or, while it has not been read whole, its first
        `events` events (a `partial` log) so a first screen need not wait for a long log."""
        entry = self.entry(key)
        if entry is None:
            return None
        version = file_version(entry.source)
        with self._lock:
            cached = self._logs.get(key)
            prefix = self._prefixes.get(key)
        if cached and cached[0] == version:
            return cached[1]
        if prefix and prefix[0] == version:
            return prefix[1]
        log = load_session(entry.source, events=events)
        with self._lock:
            self._prefixes[key] = (version, log)
        return log

    def peek(self, key: str, name: str) -> Any:
        """A derived value of the current file version if it was built already, else None."""
        entry = self.entry(key)
        if entry is None:
            return None
        with self._lock:
            cached_log = self._logs.get(key)
            cached = self._derived.get((key, name))
        if cached_log is None or cached is None or cached[0] is not cached_log[1]:
            return None
        try:
            return cached[1] if cached_log[0] == file_version(entry.source) else None
        except OSError:
            return None

    def derived(self, key: str, name: str, build: Callable[[SessionLog], T]) -> T:
        """`build(log)` computed once per file version of the session (rows, anchors, search text)."""
        log = self.log(key)
        assert log is not None
        return self.derived_of(key, name, log, build)

    def derived_of(self, key: str, name: str, log: SessionLog, build: Callable[[SessionLog], T]) -> T:
        """`build(log)` kept while `log` is the one this registry holds for `key` (a prefix, too)."""
        with self._lock:
            cached = self._derived.get((key, name))
        if cached is not None and cached[0] is log:
            found: T = cached[1]  # the value `build` made for this name, kept under it
            return found
        with self._reading:
            value = build(log)
        with self._lock:
            self._derived[(key, name)] = (log, value)
        return value


__all__ = ["Entry", "NotASessionLog", "Registry", "url_safe_id"]
