"""A folder of files named by a digest whose bytes never change, bounded in bytes, least recently read first out.

Readers need a file (a SQLite store, a ZIP, `pread` windows): the team store streams a blob into one of these
once (`<data-dir>/cache/`), and an upload stored as parts (docs/decisions/0018-session-versions.md) is
assembled into one (`<data-dir>/assembled/`). Bytes under a digest never change, so a copy never goes stale;
deleting one is always safe. A reader that still has a file open keeps its bytes (POSIX).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from .blobs import fanned, valid_digest, write_whole


class ReadCache:
    def __init__(self, folder: Path, bound: int) -> None:
        self.folder = folder
        self.bound = bound
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._read_at = 0  # the last read's mark, in ns: see `_mark_read`
        self._marking = threading.Lock()

    def path(self, digest: str) -> Path:
        return self.folder / fanned(digest)

    def get(self, digest: str) -> Path | None:
        """The copy of `digest`, marked read now; None when there is none."""
        final = self.path(digest)
        try:
            self._mark_read(final)
        except FileNotFoundError:
            return None
        return final

    def fill(self, digest: str, chunks: Iterable[bytes]) -> Path:
        """Write `chunks` as the copy of `digest` (to a temp name, then renamed: whole or absent) and trim.
        Raises what reading `chunks` raises, leaving nothing behind."""
        final = self.path(digest)
        final.parent.mkdir(mode=0o700, exist_ok=True)
        write_whole(final, chunks)
        self._mark_read(final)
        self._trim(keep=final)
        return final

    def keep(self, digest: str, temp: Path) -> None:
        """Move a file already holding `digest`'s bytes in as its copy (the upload's own temp file): the first
        read here copies nothing. A failure is a miss later, nothing worse."""
        final = self.path(digest)
        try:
            final.parent.mkdir(mode=0o700, exist_ok=True)
            os.replace(temp, final)
        except OSError:
            return
        with contextlib.suppress(OSError):
            self._mark_read(final)
            self._trim(keep=final)

    def forget(self, digest: str) -> None:
        self.path(digest).unlink(missing_ok=True)

    def _mark_read(self, path: Path) -> None:
        """Stamp `path` read now, later than any copy this process read before: the file system's clock ticks
        coarsely (milliseconds), and two reads in one tick would otherwise tie when the cache is trimmed."""
        with self._marking:
            self._read_at = max(time.time_ns(), self._read_at + 1)
            os.utime(path, ns=(self._read_at, self._read_at))

    def _trim(self, keep: Path) -> None:
        """Remove the least recently read copies until the cache holds at most `bound` bytes (`keep` stays)."""
        copies = []
        for path in self.folder.glob("*/*"):
            if valid_digest(path.name):
                with contextlib.suppress(FileNotFoundError):  # another thread trims too
                    st = path.stat()
                    copies.append((st.st_mtime_ns, st.st_size, path))
        total = sum(size for _, size, _ in copies)
        for _, size, path in sorted(copies):
            if total <= self.bound:
                break
            if path != keep:
                path.unlink(missing_ok=True)
                total -= size
