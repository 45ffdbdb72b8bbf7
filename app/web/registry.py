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
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, TypeVar

from app.history.session import SessionLog, load_session
from app.log.dsh_root import encode_segment
from app.log.records import NotASessionLog
from app.log.sources import NotASession, SessionSource, discover, read_source_header

T = TypeVar("T")
_URL_SAFE = re.compile(r"[A-Za-z0-9._-]+")


def url_safe_id(session_id: str) -> str:
    """The id itself when URL-safe, else dsh's injective segment encoding."""
    return session_id if _URL_SAFE.fullmatch(session_id) and session_id not in (".", "..") else encode_segment(session_id)


def path_hash(source: SessionSource) -> str:
    return hashlib.sha256(source.label.encode("utf-8", "surrogatepass")).hexdigest()[:8]


@dataclass(frozen=True, slots=True)
class Entry:
    key: str
    source: SessionSource
    header: dict[str, Any] | None

    @property
    def session_id(self) -> str | None:
        sid = self.header.get("id") if self.header else None
        return sid if isinstance(sid, str) else None


def file_version(source: SessionSource) -> tuple[int, int]:
    st = os.stat(source.path)
    return (st.st_size, st.st_mtime_ns)


class Registry:
    """Sessions found under the configured paths; thread-safe."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = list(paths)
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._refused: list[NotASession] = []
        self._logs: dict[str, tuple[tuple[int, int], SessionLog]] = {}
        self._derived: dict[tuple[str, str], tuple[SessionLog, Any]] = {}
        self.refresh()

    def refresh(self) -> None:
        """Find sessions again: new files appear, vanished ones go."""
        found = discover(self.paths) if self.paths else None
        sources = found.sources if found else []
        headers = [(s, read_source_header(s)) for s in sources]
        ids = Counter(h.get("id") for _, h in headers if h and isinstance(h.get("id"), str))
        entries: dict[str, Entry] = {}
        for source, header in headers:
            sid = header.get("id") if header else None
            if isinstance(sid, str) and sid and ids[sid] == 1:
                key = url_safe_id(sid)
            else:
                base = url_safe_id(sid) if isinstance(sid, str) and sid else "session"
                key = f"{base}~{path_hash(source)}"
            entries[key] = Entry(key, source, header)
        with self._lock:
            self._entries = entries
            self._refused = list(found.refused) if found else []

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
        version = file_version(entry.source)
        with self._lock:
            cached = self._logs.get(key)
        if cached and cached[0] == version:
            return cached[1]
        log = load_session(entry.source)
        with self._lock:
            self._logs[key] = (version, log)
            self._derived = {k: v for k, v in self._derived.items() if k[0] != key}
        return log

    def derived(self, key: str, name: str, build: Callable[[SessionLog], T]) -> T:
        """`build(log)` computed once per file version of the session (rows, anchors, search text)."""
        log = self.log(key)
        assert log is not None
        with self._lock:
            cached = self._derived.get((key, name))
        if cached is not None and cached[0] is log:
            return cached[1]  # type: ignore[no-any-return]
        value = build(log)
        with self._lock:
            self._derived[(key, name)] = (log, value)
        return value


__all__ = ["Entry", "NotASessionLog", "Registry", "url_safe_id"]
