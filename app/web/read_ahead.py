"""Logs the session list reads for it in a bounded pool, waited on with a deadline (issue 33).

A list sorted or filtered by a fact of the read (tokens, turns, a verdict, a title) needs every candidate's
summary, and a summary not read yet means reading the whole log: a client that uploads large logs would make
the next person's list read them all before it answered. The reads go to a few workers instead; the list
waits for them at most `list_wait_ms`, answers with those read and says how many are still being read (its
page reads itself again, and shows them once they are). It waits only for logs small enough to be read in that
time (a client uploading large logs one after another would make every list wait its whole bound). A read
asked for again while under way is waited on, never started twice. The workers run niced
(`sessions/priority.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from functools import partial
from typing import Generic, TypeVar

from ..sessions.priority import lower_this_thread

V = TypeVar("V")

WORKERS = 2  # reads at once, per process


class ReadAhead(Generic[V]):
    def __init__(self, workers: int = WORKERS) -> None:
        self._pool = ThreadPoolExecutor(
            workers, thread_name_prefix="dsh-inspect-read-ahead", initializer=lower_this_thread
        )
        self._large = ThreadPoolExecutor(
            1, thread_name_prefix="dsh-inspect-read-ahead-large", initializer=lower_this_thread
        )
        self._lock = threading.RLock()  # a read that has ended runs its callback where it is added
        self._under_way: dict[str, Future[V]] = {}
        self._ended = 0

    @property
    def ended(self) -> int:
        """Reads ended so far: what was made while some were under way is out of date once it moves."""
        with self._lock:
            return self._ended

    def gather(
        self,
        reads: Mapping[str, Callable[[], V]],
        seconds: float,
        waited: Collection[str],
        large: Collection[str] = (),
    ) -> tuple[dict[str, V], int]:
        """Each read's value by its key, of those done once the `waited` ones are (within `seconds` at most;
        the others go on, and are not waited for); and how many are still under way. The `large` ones are
        read by the large logs' worker."""
        futures: dict[str, Future[V]] = {}
        with self._lock:
            for key, read in reads.items():
                found = self._under_way.get(key)
                if found is None:
                    pool = self._large if key in large else self._pool
                    found = self._under_way[key] = pool.submit(read)
                    found.add_done_callback(partial(self._end, key))
                futures[key] = found
        awaited = [f for key, f in futures.items() if key in waited]
        if awaited:
            wait(awaited, timeout=seconds)
        done = {key: f.result() for key, f in futures.items() if f.done()}
        return done, len(futures) - len(done)

    def _end(self, key: str, future: Future[V]) -> None:
        with self._lock:
            if self._under_way.get(key) is future:
                del self._under_way[key]
            self._ended += 1
