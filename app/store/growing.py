"""Growing copies: the newest state of an upload's version chain as one local file that appends extend in place
(docs/decisions/0024-push.md).

A session pushed turn by turn is a chain of uploads, each its base's bytes and a tail (decision 0018). Its
newest state is read from `<data-dir>/growing/<root digest>`, the chain's bytes up to that state: when the
chain grows, the tails after the state the copy holds are appended to it, so the file keeps its path and
inode, and its readers (the registry, a live page, the search index) read on from where they stopped instead
of reading a new file whole. A copy that holds no state of the chain (a crash mid-append, another branch) is
written again whole, under a new inode, which its readers take as a rewrite.

Processes sharing a data dir take the copy's lock (`flock`) to extend it; `<copy>.at` names the upload whose
bytes it holds, written after them, so a crash between the two is seen as a copy to write again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from .blobs import fanned, valid_digest, write_whole
from .catalog import Upload


class GrowingCopies:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    def path(self, root: str) -> Path:
        return self.folder / fanned(root)

    def bring(self, chain: list[Upload], chunks: Callable[[str], Iterator[bytes]]) -> Path:
        """The copy holding `chain`'s last state (`chain`: its uploads, the one stored whole first), extended by
        the tails after the state it holds, or written whole when it holds none; `chunks(blob)` streams a
        blob's bytes."""
        path = self.path(chain[0].digest)
        path.parent.mkdir(mode=0o700, exist_ok=True)
        with _locked(path.with_name(path.name + ".lock")):
            at = _held_state(path, chain)
            if at == len(chain) - 1:
                return path
            if at is None:
                write_whole(path, (c for u in chain for c in chunks(u.blob)))
            else:
                with open(path, "ab") as f:
                    for upload in chain[at + 1 :]:
                        for chunk in chunks(upload.blob):
                            f.write(chunk)
                    f.flush()
                    os.fsync(f.fileno())
            write_whole(path.with_name(path.name + ".at"), [chain[-1].digest.encode()])
        return path

    def retain(self, roots: Iterable[str]) -> None:
        """Remove the copies of chains no longer read from a growing copy (deleted, or no longer newest)."""
        keep = set(roots)
        for path in self.folder.glob("*/*"):
            if valid_digest(path.name) and path.name not in keep:
                for gone in (path, path.with_name(path.name + ".at"), path.with_name(path.name + ".lock")):
                    gone.unlink(missing_ok=True)


def _held_state(path: Path, chain: list[Upload]) -> int | None:
    """Where in `chain` the state the copy holds is, by its `.at` and its size; None when it holds none."""
    try:
        held = path.with_name(path.name + ".at").read_text().strip()
        size = path.stat().st_size
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    return next((i for i, u in enumerate(chain) if u.digest == held and u.size == size), None)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
