"""What a server keeps of the sessions it has read, bounded in bytes (the `cache_mb` setting).

Each key keeps its log, its first-screen prefix and the values derived from either (rows, search
text, model views), weighed together by an estimate of their bytes; once the total passes the
limit, the least recently used keys go, whole, and are read again when next asked for (cachetools'
`LRUCache`, bounded by their weight). The key in use always stays, however large. Nothing here locks:
the registry calls it under its own lock.

What goes is freed at once, but glibc's allocator keeps freed pages of its heap for later: a
`Trimmer` hands them back to the OS (`malloc_trim`) off the request path, so that `cache_mb`
bounds resident memory, not only the live objects.
"""

from __future__ import annotations

import ctypes
import gc
import math
import sys
import threading
import time
import types
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import msgspec
from cachetools import Cache, LRUCache
from msgspec.structs import astuple

from ..history.session import SessionLog
from ..log.sources import SessionSource

C = TypeVar("C")  # what the registry keeps of a read log (its version and fingerprint besides)
CACHE_MB = 256  # the `cache_mb` setting's default

# Objects an estimate visits below one value: enough to see how large its containers are and what their
# items hold (a few are sampled and scaled), few enough to cost milliseconds on a 500,000-row session.
# Against tracemalloc on W3 (100 MB of small events), its read log weighs 1.2× what it holds and its last
# step's model view (70,849 messages) within 5 %; sampling every item shallowly had read that view 10× light.
VISITS = 4096
WHOLE = 32  # a container of at most this many items is looked at whole
MOST_VISITS = 4 * VISITS  # a hard stop, should records nest deep
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
    if budget <= 1 or isinstance(obj, _LEAVES) or len(seen) > MOST_VISITS:
        return size
    # a Struct's fields, which the collector does not see of one it does not track (`gc=False`: the values of
    # model/ and history/compare.py)
    children = list(astuple(obj)) if isinstance(obj, msgspec.Struct) else gc.get_referents(obj)
    n = len(children)
    if n <= WHOLE:  # a record's fields are not alike: each is looked into, as deeply
        sample, each = children, budget
    else:  # a few items of a large container, each looked into deeply, scaled to all
        k = max(1, math.isqrt(budget))
        stride = n // k
        # evenly spread, each pick moved inside its stretch: a log's repeating patterns do not line up with it
        sample = children if stride <= 1 else [children[i * stride + (i * 2654435761) % stride] for i in range(k)]
        each = max(1, budget // len(sample))
    found = sum(_size(c, each, seen) for c in sample if not isinstance(c, _SHARED))
    return size + found * n / len(sample) if sample else size


def _malloc_trim() -> Callable[[], None] | None:
    """glibc's `malloc_trim(0)`, None where the C library has none (musl, macOS)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


class Trimmer:
    """Gives the heap's freed pages back to the OS after a cache let values go: in a thread of its own,
    `pause` seconds after the first ask (the asks meanwhile are one trim), so no request waits on it."""

    def __init__(self, pause: float = 0.5) -> None:
        self._trim = _malloc_trim()
        self._pause = pause
        self._asked = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def ask(self) -> None:
        if self._trim is None:
            return
        self._asked.set()
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="malloc-trim", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        assert self._trim is not None
        while True:
            self._asked.wait()
            time.sleep(self._pause)  # what the asker let go is freed when its frames return
            self._asked.clear()
            self._trim()


TRIMMER = Trimmer()  # one heap per process: one trimmer


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


class _ByRecency(LRUCache[str, _Kept[C]]):
    """What each key keeps, the least recently used going first; each that goes asks the trimmer to hand
    its pages back."""

    def popitem(self) -> tuple[str, _Kept[C]]:
        gone = super().popitem()
        TRIMMER.ask()
        return gone

    def peek(self, key: str) -> _Kept[C] | None:
        """What `key` keeps, if anything, leaving it as recently used as it was (`LRUCache`'s reads touch)."""
        return Cache.__getitem__(self, key) if key in self else None

    def untouched(self) -> Iterator[tuple[str, _Kept[C]]]:
        """Every key and what it keeps, none made more recently used."""
        return ((key, Cache.__getitem__(self, key)) for key in list(self))


class SessionCache(Generic[C]):
    """Per key: one read log (`C`), one prefix, derived values by name; least recently used keys go first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        # Weighed at most the room: cachetools refuses a value larger than all of it, and the key in use stays
        # however large (the others go to make room for it). A limit below one byte keeps that key only too.
        room = max(limit, 1)
        self._kept: _ByRecency[C] = _ByRecency(room, getsizeof=lambda kept: min(kept.size, room))

    @property
    def size(self) -> int:
        """The estimated bytes of everything kept (the key in use counted whole, however large)."""
        return sum(kept.size for _, kept in self._kept.untouched())

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
        self._settle(key, _Kept(source, log, weight))

    def keep_prefix(self, key: str, prefix: tuple[Any, SessionLog], weight: int) -> None:
        kept = self._for(key, prefix[1].source)
        kept.prefix, kept.prefix_bytes = prefix, weight
        self._settle(key, kept)

    def keep_derived(self, key: str, name: str, log: SessionLog, value: Any, weight: int) -> None:
        kept = self._for(key, log.source)
        kept.derived[name] = (log, value, weight)
        self._settle(key, kept)

    def retain(self, keep: Callable[[str, SessionSource], bool]) -> None:
        """Drop every key (and all it keeps) for which `keep(key, source)` is false."""
        for key, kept in self._kept.untouched():
            if not keep(key, kept.source):
                self._drop(key)

    def _get(self, key: str, touch: bool) -> _Kept[C] | None:
        return self._kept.get(key) if touch else self._kept.peek(key)

    def _for(self, key: str, source: SessionSource) -> _Kept[C]:
        kept = self._kept.peek(key)
        if kept is None or kept.source != source:
            self._drop(key)
            kept = _Kept(source)
        return kept

    def _drop(self, key: str) -> None:
        if self._kept.pop(key, None) is not None:
            TRIMMER.ask()

    def _settle(self, key: str, kept: _Kept[C]) -> None:
        """`key` most recently used, weighed anew; the least recently used others go while the total is over
        the limit. Taken out first: making room never lets it go (and asks for a trim) on its own account."""
        self._kept.pop(key, None)
        self._kept[key] = kept


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Latest(Generic[K, V]):
    """The latest few values by key, each made once while kept; safe to share between threads."""

    def __init__(self, kept: int) -> None:
        self._items: LRUCache[K, V] = LRUCache(kept)
        self._lock = threading.Lock()
        self._stored = 0

    @property
    def stored(self) -> int:
        """How many values were kept so far: it moves whenever what is kept may have (one dropped for room too)."""
        return self._stored

    def peek(self, key: K) -> V | None:
        """The value under `key` when kept, else None; made by nothing."""
        with self._lock:
            return self._items.get(key)

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The value under `key`, made by `build` when not kept (outside the lock: others need not wait)."""
        with self._lock:
            if key in self._items:
                return self._items[key]
        value = build()
        with self._lock:
            self._items[key] = value
            self._stored += 1
        return value
