"""Content-addressed blobs: `blobs/<2 hex>/<sha-256>`, written atomically.

Bytes arrive in a temp file (`tmp/upload-<pid>-<random>.part`) that is
hashed and counted as it is written, fsynced, then renamed into place and
the folder fsynced. A blob therefore either exists whole under its digest or
not at all; the same bytes always land on the same name.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .limits import LimitExceeded, mib

DIGEST = re.compile(r"[0-9a-f]{64}")
CHUNK = 1 << 20
_TEMP = re.compile(r"upload-(\d+)-[^/]*\.part")


def valid_digest(digest: str) -> bool:
    return DIGEST.fullmatch(digest) is not None


def fanned(digest: str) -> str:
    """Where a blob lies below its store's root (`ab/abcd…`, 256 folders); raises ValueError for a string that
    is no sha-256 digest, so no name from a request reaches a path or a key."""
    if not valid_digest(digest):
        raise ValueError("not a sha-256 digest")
    return f"{digest[:2]}/{digest}"


@dataclass(frozen=True, slots=True)
class Received:
    """An upload written whole to a temp file, not yet published."""

    temp: Path
    digest: str
    size: int
    # the SHA-256 of its bytes, not finished: what an append to it continues (docs/decisions/0024-push.md)
    sha: Any = field(default=None, compare=False)


class Receiving:
    """Bytes being written to a temp file, hashed and counted as they come."""

    def __init__(self, folder: Path, limit: int) -> None:
        fd, name = tempfile.mkstemp(dir=folder, prefix=f"upload-{os.getpid()}-", suffix=".part")
        self.path = Path(name)
        self._file = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256()
        self._limit = limit
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self._limit:
            raise LimitExceeded("max_upload_bytes", f"the upload is larger than {mib(self._limit)}")
        self._hash.update(chunk)
        self._file.write(chunk)

    def finish(self) -> Received:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        return Received(self.path, self._hash.hexdigest(), self.size, self._hash.copy())

    def discard(self) -> None:
        if not self._file.closed:
            self._file.close()
        self.path.unlink(missing_ok=True)


def write_whole(final: Path, chunks: Iterable[bytes]) -> None:
    """`chunks` written to `final` through a temp file beside it, fsynced and renamed: whole or absent.
    Raises what reading `chunks` raises, leaving nothing behind."""
    fd, name = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name[:8]}-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(name, final)
        fsync_dir(final.parent)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileBlobs:
    """The embedded blobs: files in `--data-dir`, which is also where every upload arrives (`tmp/`)."""

    def __init__(self, root: Path) -> None:
        self.blobs = root / "blobs"
        self.blobs.mkdir(mode=0o700, parents=True, exist_ok=True)

    def path(self, digest: str) -> Path:
        return self.blobs / fanned(digest)

    def local_path(self, digest: str) -> Path:
        return self.path(digest)

    def fetch(self, digest: str) -> Path:
        path = self.path(digest)
        if not path.is_file():
            raise FileNotFoundError(f"no blob {digest}")
        return path

    def chunks(self, digest: str) -> Iterator[bytes]:
        with open(self.path(digest), "rb") as f:
            while chunk := f.read(CHUNK):
                yield chunk

    def forget_local(self, digest: str) -> None:
        """Nothing: the folder is the blob store itself, and `delete` removes a blob."""

    def publish(self, received: Received) -> None:
        """Move the temp file to its digest's name (replacing identical bytes is harmless)."""
        final = self.path(received.digest)
        fan = final.parent
        if not fan.is_dir():
            fan.mkdir(mode=0o700, exist_ok=True)
            fsync_dir(self.blobs)
        os.chmod(received.temp, 0o600)
        os.replace(received.temp, final)
        fsync_dir(fan)

    def delete(self, digest: str) -> None:
        path = self.path(digest)
        path.unlink(missing_ok=True)
        fsync_dir(path.parent)

    def ping(self) -> None:
        """The folder is there to read; raises OSError."""
        os.stat(self.blobs)

    def digests(self) -> Iterator[str]:
        for fan in self.blobs.iterdir():
            if fan.is_dir():
                yield from (p.name for p in fan.iterdir() if valid_digest(p.name))


def sweep_temps(folder: Path) -> None:
    """Remove temp files left by processes that are gone (killed mid-upload)."""
    for entry in folder.iterdir():
        match = _TEMP.fullmatch(entry.name)
        if match and not _alive(int(match.group(1))):
            entry.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
