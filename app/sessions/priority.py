"""Background work at a lower CPU priority than the requests it serves (issue 33).

Reading a fresh upload for the list, indexing it for search: work a request never waits on for long, done by a
few worker threads (or processes) of each server process. On a busy machine it competed with every request on
equal terms, so one client uploading large logs without pause slowed everyone's pages several times over. Its
threads run niced instead: the kernel gives the requests the processors first, and the background whatever
is left, which on a machine not saturated is all it needs.

Linux schedules threads, so a thread's niceness is its own (`setpriority` on its thread id); elsewhere this
does nothing.
"""

from __future__ import annotations

import os
import sys
import threading

BACKGROUND_NICENESS = 10  # added to the process's own: 0 → 10, a weight of about a tenth of a request thread's


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
