"""Background work at a lower CPU priority than the requests it serves (issue 33).

Reading a fresh upload for the list, indexing it for search: work a request never waits on for long, done by a
few worker threads (or processes) of each server process. On a busy machine it competed with every request on
equal terms, so one client uploading large logs without pause slowed everyone's pages several times over. Its
threads run niced instead: the kernel gives the requests the processors first, and the background whatever
is left, which on a machine not saturated is all it needs.

Linux schedules threads, so a thread's niceness is its own (`setpriority` on its thread id); elsewhere this
does nothing.

A niced thread is not enough for a large log, though: reading a 32 MiB log and summing it up for the list
takes seconds of processor time, all of it holding the interpreter's lock, and every request of the process
waits its turn at that lock whatever the thread's niceness (worse, the kernel may leave the niced thread
unscheduled while it holds the lock and the requests wait). A load test's abuser uploading such logs without
pause made everyone's pages five times slower. So the reads of logs of `ELSEWHERE_BYTES` or more (and a
comparison's costly word diffs) go to a process of their own (`Elsewhere`), niced: the thread that asked
waits for the answer without the lock, and the kernel gives the requests the processors first
(docs/decisions/0043-heavy-reads-elsewhere.md).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import ParamSpec, TypeVar

BACKGROUND_NICENESS = 10  # added to the process's own: 0 → 10, a weight of about a tenth of a request thread's
# Logs at least this large are read by `Elsewhere` (about a second of processor time to read and sum up);
# smaller ones in the process, where a round trip to another would cost more than the read.
ELSEWHERE_BYTES = 4 << 20

FOLLOW_SECONDS = 1.0  # how often a background process looks whether its server is still there

P = ParamSpec("P")
T = TypeVar("T")


def lower_this_thread() -> None:
    """Lower the calling thread's priority by BACKGROUND_NICENESS (an executor's `initializer`)."""
    if sys.platform != "linux":
        return
    thread = threading.get_native_id()
    try:
        now = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, now + BACKGROUND_NICENESS))
    except OSError:  # a sandbox that forbids it: the work runs as it did
        pass


def background_process(server: int) -> None:
    """A background process's start (an executor's `initializer`): niced, and gone once the server process
    `server` is. A server that exits without shutting its pool down (killed, or out of time to stop) would
    leave the process waiting on its queue for ever, its fork server with it, and both holding the server's
    standard output open."""
    lower_this_thread()
    threading.Thread(target=_end_with, args=(server,), name="dsh-inspect-follow", daemon=True).start()


def _end_with(server: int) -> None:
    while True:
        time.sleep(FOLLOW_SECONDS)
        try:
            os.kill(server, 0)
        except (ProcessLookupError, PermissionError):  # gone (or another user's process has its number now)
            os._exit(0)


# A fork server starts the processes (a fork of a server's threads could inherit a lock some thread held);
# where there is none (Windows), the work is done in the process that asks.
FORK_SERVER = "forkserver" in multiprocessing.get_all_start_methods()


class Elsewhere:
    """One niced process that does a server process's heavy work (large reads, costly diffs), started when asked
    (`preload`: the modules the fork server imports once, so the process starts with them loaded). Work whose
    process died (killed, out of memory) is done here instead, and the next is given a new process."""

    def __init__(self, preload: Sequence[str] = ()) -> None:
        self._preload = list(preload)
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def run(self, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`work(*args, **kwargs)` in the process (its arguments and answer pickled), waited for."""
        if not FORK_SERVER:
            return work(*args, **kwargs)
        pool = self._started()
        try:
            return pool.submit(work, *args, **kwargs).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            return work(*args, **kwargs)

    def _started(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(self._preload)
                self._pool = ProcessPoolExecutor(
                    1, mp_context=context, initializer=background_process, initargs=(os.getpid(),)
                )
            return self._pool
