"""What a server keeps of the sessions it has read, bounded in bytes (the `cache_mb` setting).

Each key keeps its log, its first-screen prefix and the values derived from either (rows, search
text, model views), weighed together by an estimate of their bytes; once the total passes the
limit, the least recently used keys go, whole, and are read again when next asked for. The key in
use always stays, however large. Nothing here locks: the registry calls it under its own lock.
"""

from __future__ import annotations

import gc
import sys
import threading
import types
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..history.session import SessionLog
from ..log.sources import SessionSource

C = TypeVar("C")  # what the registry keeps of a read log (its version and fingerprint besides)
CACHE_MB = 256  # the `cache_mb` setting's default

# Objects an estimate visits below one value: enough to see how large its containers are and what their
# items hold (they are sampled evenly and scaled), few enough to cost milliseconds on a 500,000-row session.
VISITS = 4096
_LEAVES = (str, bytes, bytearray, memoryview, int, float, complex, bool, type(None), array, range)
_SHARED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def approx_bytes(value: object, *, apart: Iterable[object] = ()) -> int:
    """An estimate of the bytes `value` holds, not counting what it shares with the objects `apart`:
    `sys.getsizeof` over the objects it refers to, large containers sampled and scaled."""
    return round(_size(value, VISITS, {id(x) for x in apart}))


def _size(obj: object, budget: int, seen: set[int]) -> float:
    if id(obj) in seen:
        return 0.0
    seen.add(id(obj))
    size = float(sys.getsizeof(obj))
    if budget <= 1 or isinstance(obj, _LEAVES):
        return size
    children = gc.get_referents(obj)
    n = len(children)
    sample = children if n <= budget else children[:: n // budget][:budget]
    picked = [c for c in sample if not isinstance(c, _SHARED)]
    if not picked:
        return size
    each = max(1, (budget - len(picked)) // len(picked))
    return size + sum(_size(c, each, seen) for c in picked) * n / len(sample)


@dataclass(slots=True)
class _Kept(Generic[C]):
    """Everything kept of one key, and what each part weighs."""

    source: SessionSource
    log: C | None = None
    log_bytes: int = 0
    prefix: tuple[Any, SessionLog] | None = None  # (file version, the log of its first events)
    prefix_bytes: int = 0
    derived: dict[str, tuple[SessionLog, Any, int]] = field(default_factory=dict)  # name → (log, value, bytes)

    @property
    def size(self) -> int:
        return self.log_bytes + self.prefix_bytes + sum(b for _, _, b in self.derived.values())


class SessionCache(Generic[C]):
    """Per key: one read log (`C`), one prefix, derived values by name; least recently used keys go first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, _Kept[C]] = OrderedDict()
        self.size = 0  # the estimated bytes of everything kept

    def log(self, key: str, *, touch: bool = True) -> C | None:
        kept = self._get(key, touch)
        return kept.log if kept else None

    def prefix(self, key: str) -> tuple[Any, SessionLog] | None:
        kept = self._get(key, True)
        return kept.prefix if kept else None

    def derived(self, key: str, name: str, *, touch: bool = True) -> tuple[SessionLog, Any] | None:
        kept = self._get(key, touch)
        found = kept.derived.get(name) if kept else None
        return (found[0], found[1]) if found else None

    def keep_log(self, key: str, source: SessionSource, log: C, weight: int) -> None:
        """The key's log, read anew or read on: its prefix and everything derived before go."""
        self._drop(key)
        self._kept[key] = _Kept(source, log, weight)
        self._settle(key, weight)

    def keep_prefix(self, key: str, prefix: tuple[Any, SessionLog], weight: int) -> None:
        kept = self._for(key, prefix[1].source)
        change = weight - kept.prefix_bytes
        kept.prefix, kept.prefix_bytes = prefix, weight
        self._settle(key, change)

    def keep_derived(self, key: str, name: str, log: SessionLog, value: Any, weight: int) -> None:
        kept = self._for(key, log.source)
        before = kept.derived.get(name)
        kept.derived[name] = (log, value, weight)
        self._settle(key, weight - (before[2] if before else 0))

    def retain(self, keep: Callable[[str, SessionSource], bool]) -> None:
        """Drop every key (and all it keeps) for which `keep(key, source)` is false."""
        for key in [k for k, kept in self._kept.items() if not keep(k, kept.source)]:
            self._drop(key)

    def _get(self, key: str, touch: bool) -> _Kept[C] | None:
        kept = self._kept.get(key)
        if kept is not None and touch:
            self._kept.move_to_end(key)
        return kept

    def _for(self, key: str, source: SessionSource) -> _Kept[C]:
        kept = self._kept.get(key)
        if kept is None or kept.source != source:
            self._drop(key)
            kept = self._kept[key] = _Kept(source)
        return kept

    def _drop(self, key: str) -> None:
        gone = self._kept.pop(key, None)
        if gone is not None:
            self.size -= gone.size

    def _settle(self, key: str, change: int) -> None:
        """`key` most recently used; the least recently used others go while the total is over the limit."""
        self.size += change
        self._kept.move_to_end(key)
        while self.size > self.limit and len(self._kept) > 1:
            _, gone = self._kept.popitem(last=False)
            self.size -= gone.size


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Latest(Generic[K, V]):
    """The latest few values by key, each made once while kept; safe to share between threads."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The value under `key`, made by `build` when not kept (outside the lock: others need not wait)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = build()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._kept:
                self._items.popitem(last=False)
        return value
