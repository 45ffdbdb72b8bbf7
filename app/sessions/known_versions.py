"""Uploaded sessions' file versions, looked at once per upload rather than once per request (issue 33).

A list, a search's pending count and a pass of the index each want every session's file version; a look at
each file (a `stat`) is cheap alone, but a thousand of them on a busy server is a thousand waits for the GIL
again, one after each call, which made the searches the slowest requests under load
(docs/decisions/0025-fair-shares.md). A file on the server's disk is looked at by each refresh anyway (the
registry keeps what it saw); an upload's file holding exactly the upload's bytes is never changed in place
(the store writes a blob once; a growing copy holding more is another upload's), so its version is kept here
by upload. A file holding other than its upload's size (a growing copy not brought up to it yet) is looked at
each time, until it does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection

from ..log.dsh_root import FileVersion
from ..log.sources import SessionSource

Uploaded = tuple[SessionSource, str]  # a source, and the digest of the upload it is read for


class KnownVersions:
    """The version of each uploaded session's file, by source and upload, once it held the upload's size."""

    def __init__(self, look: Callable[[SessionSource], FileVersion], size_of: Callable[[str], int | None]) -> None:
        self._look = look  # a file's version now (a stat)
        self._size_of = size_of  # an upload's size as catalogued, by digest
        self._lock = threading.Lock()
        self._kept: dict[Uploaded, FileVersion] = {}

    def of(self, source: SessionSource, digest: str) -> FileVersion:
        """The file's version, kept or looked at now. Raises OSError (a file not on this machine)."""
        with self._lock:
            kept = self._kept.get((source, digest))
        return kept if kept is not None else self.look_again(source, digest)

    def look_again(self, source: SessionSource, digest: str) -> FileVersion:
        """The file's version as it is now, kept when the file holds the upload's bytes. Raises OSError."""
        version = self._look(source)
        if version[0] == self._size_of(digest):
            with self._lock:
                self._kept[(source, digest)] = version
        return version

    def retain(self, listed: Collection[Uploaded]) -> None:
        """Forget the uploads no longer listed (deleted, or no longer a session's newest)."""
        with self._lock:
            self._kept = {k: v for k, v in self._kept.items() if k in listed}
