"""`dsh-inspect push --watch`: push each change within a second of dsh writing it, until stopped.

Changes come from the file system's notifications where there are any (inotify on Linux, through watchfiles'
Rust watcher), else from polling; each changed session file is pushed (a log up to its last whole line, so a
line dsh is writing waits for its end). A push the server did not answer is tried again every few seconds:
the watch outlives the server going away and coming back. Memory is what is remembered per file.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from typing import TextIO

import watchfiles

from ..log.sources import UnreadablePath
from .push import Pusher, Unreachable, files_under

RETRY_SECONDS = 3.0
_SQLITE_SIDES = ("-wal", "-shm", "-journal")


def watch_and_push(paths: Sequence[str], pusher: Pusher, *, out: TextIO, err: TextIO) -> int:
    stop = pusher.stop
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # a service manager's stop: end after this push
    pending: set[str] = set()
    retry_at = 0.0

    def push(changed: set[str]) -> None:
        nonlocal retry_at
        away = False  # the server did not answer this round: the rest wait for the next try, unasked
        for path in sorted(changed):
            if stop.is_set():
                return
            if path.endswith(".tmp"):  # a file dsh writes before it links it into place under its name
                continue
            try:
                files = files_under([path]) if os.path.exists(path) else []
            except UnreadablePath:
                files = []
            for file, kind, header in files:
                if away:
                    pending.add(file)
                    continue
                before = (pusher.tally.sent, len(pusher.tally.refused))
                try:
                    pusher.push(file, kind, header, finished_only=True)
                except Unreachable as exc:
                    if file not in pending:
                        err.write(f"dsh-inspect push: {exc}; trying again every {RETRY_SECONDS:g} s\n")
                    pending.add(file)
                    retry_at = time.monotonic() + RETRY_SECONDS
                    away = True
                    continue
                pending.discard(file)
                if pusher.tally.sent > before[0]:
                    out.write(f"pushed {file}\n")
                for refused in pusher.tally.refused[before[1] :]:
                    err.write(f"refused: {refused['path']}: {refused['reason']}\n")
                out.flush()
                pusher.state.save()

    push({os.path.abspath(p) for p in paths})
    for changes in watchfiles.watch(
        *paths, stop_event=stop, debounce=200, step=50, rust_timeout=int(RETRY_SECONDS * 1000), yield_on_timeout=True
    ):
        changed = {_main_file(p) for _, p in changes}
        if pending and time.monotonic() >= retry_at:
            changed |= pending
        push(changed)
    return 0


def _main_file(path: str) -> str:
    """A SQLite store's side file stands for the store."""
    for side in _SQLITE_SIDES:
        if path.endswith(side):
            return path.removesuffix(side)
    return path
