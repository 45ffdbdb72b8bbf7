"""What the session list keeps of one registry version: each recent choice's sessions in order, its filters' values.

Sorting and counting every loaded session costs ~5 µs a session, so a list of 10,000 paid ~50 ms a request
for a page of 50. Kept per `Registry.version` (which moves on any session added, deleted or changed), a warm
request only slices its page; the first request after a change pays the sort once.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from .registry import Registry

T = TypeVar("T")
KEPT_CHOICES = 32  # choices (search, filters, sort) kept of one version; the least recently asked go first


class VersionCache:
    """Values made from one registry version, each under its key; all of them go once the version moves."""

    def __init__(self, size: int = KEPT_CHOICES) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._version: int | None = None
        self._values: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, version: int, key: Hashable, build: Callable[[], T]) -> T:
        """The value kept under `key` for `version`, else `build()`, kept. Built outside the lock: a slow build
        (one that reads every log) holds no other request up; two alike may build it twice."""
        with self._lock:
            if version == self._version and key in self._values:
                self._values.move_to_end(key)
                found: T = self._values[key]
                return found
        value = build()
        with self._lock:
            if version != self._version:
                if self._version is not None and version < self._version:
                    return value  # made from a version already gone: kept no more
                self._version = version
                self._values.clear()
            self._values[key] = value
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value


# one cache per registry, gone with it (each test's server has its own registry)
_CACHES: weakref.WeakKeyDictionary[Registry, VersionCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def cache_of(registry: Registry) -> VersionCache:
    with _CACHES_LOCK:
        found = _CACHES.get(registry)
        if found is None:
            found = _CACHES[registry] = VersionCache()
        return found
