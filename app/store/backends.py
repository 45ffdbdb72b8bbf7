"""What the upload store needs of its two halves, whichever engines hold them (docs/decisions/0009-team-store.md).

A catalog names every published upload and the sessions it holds; blobs keep the uploaded bytes under their
SHA-256. Two pairs exist: *embedded* (a SQLite file and a folder, `--data-dir`) and *team* (PostgreSQL and an
S3-compatible object store), chosen at start by `--store` and `--blobs`.

The rule both keep: a catalog row is written only after its blob is whole, and a blob is removed only after
its row, each under the digest's lock, so no process ever lists an upload whose bytes are missing.

An engine that does not answer raises `unavailable.Unavailable` naming its role, never an OSError or its
driver's error, and every call to it is bounded in time (docs/decisions/0022-failing-dependencies.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Protocol

from .blobs import Received
from .catalog import Upload, UploadPage


class Catalog(Protocol):
    def heard(self) -> int | None:
        """A count that moves when another process changed the catalog, where processes tell each other (None
        where they do not: ask `version`)."""
        ...

    def version(self) -> int:
        """A number raised by every add and delete, in any process: unchanged means nothing to read again."""
        ...

    def get(self, digest: str) -> Upload | None:
        """The upload, hidden or not."""
        ...

    def all(self) -> list[Upload]:
        """Every upload, oldest first, hidden ones too (an extension's bytes start with theirs)."""
        ...

    def stored_bytes(self) -> int:
        """The sizes of every upload catalogued, hidden ones too: what the store holds, at most."""
        ...

    def holding(self, session_id: str) -> list[Upload]:
        """Every upload holding a session of this id, oldest first, hidden ones too: where an extension's
        base is looked for."""
        ...

    def newest(self, limit: int) -> list[Upload]:
        """The `limit` newest uploads a user sees (not hidden), newest first: read through an index, whatever the
        catalog holds."""
        ...

    def page(self, limit: int, before: tuple[int, str] | None = None) -> UploadPage:
        """Up to `limit` uploads, newest first, older than `before` (an upload's `(uploaded_at, digest)`: the
        last of the page before) or the newest; with how many there are and where the page lies among them."""
        ...

    def publish(self, upload: Upload, store_blob: Callable[[], None], drop_blob: Callable[[], None]) -> Upload | None:
        """Under the digest's lock: `store_blob()` (the upload's `blob`), then the rows. None when published (or
        a hidden upload of these bytes shown again, nothing stored); the upload already catalogued when the same
        bytes won (nothing stored then). A failure after `store_blob` drops the blob; raises BaseGone when the
        upload's base was deleted meanwhile."""
        ...

    def remove(self, digest: str, drop_blob: Callable[[str], None]) -> bool:
        """What a user's delete does (docs/decisions/0018-session-versions.md): an upload another extends is
        hidden; any other goes, row first, then its blob when no row needs it (`drop_blob(blob)`, under the
        blob's lock), then each hidden base no upload extends any more. False when there was no such upload."""
        ...

    def sweep(self, blobs: Iterable[str], drop_blob: Callable[[str], None]) -> None:
        """Drop each of `blobs` that no row needs (a crash between a row's removal and its blob's)."""
        ...

    def ping(self) -> None:
        """One round trip, for readiness; raises Unavailable (or the embedded engine's error)."""
        ...


class Blobs(Protocol):
    def publish(self, received: Received) -> None:
        """Keep the temp file's bytes under its digest, whole or not at all."""
        ...

    def delete(self, digest: str) -> None: ...

    def digests(self) -> Iterator[str]:
        """Every digest held, for the sweep."""
        ...

    def local_path(self, digest: str) -> Path:
        """Where a reader finds the bytes on this machine (for the team store: its read cache)."""
        ...

    def fetch(self, digest: str) -> Path:
        """`local_path(digest)`, holding the blob's bytes once this returns (streamed from the store when
        absent); raises OSError when the blob cannot be read, Unavailable when its store does not answer (never
        an OSError then: readers take that for a session gone)."""
        ...

    def chunks(self, digest: str) -> Iterator[bytes]:
        """The blob's bytes, streamed."""
        ...

    def forget_local(self, digest: str) -> None:
        """Drop this machine's copy of a blob no longer catalogued (nothing for the embedded store)."""
        ...

    def ping(self) -> None:
        """One round trip, for readiness; raises Unavailable (or OSError for a folder)."""
        ...
