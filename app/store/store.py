"""The upload store: blobs plus catalog, and the rules that keep them in step
(docs/decisions/0003-upload-store.md, 0009-team-store.md)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from ..log.sources import SessionSource
from .backends import Blobs, Catalog
from .blobs import FileBlobs, Received, Receiving, sweep_temps, valid_digest
from .catalog import SqliteCatalog, StoredSession, Upload
from .contents import Refusal, read_contents
from .limits import MIB, READ_CACHE_MB, Limits

_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f]")


def clean_name(name: str | None) -> str:
    """An upload's name as shown and offered for download: its last path part,
    without control characters, at most 200 characters."""
    base = re.split(r"[/\\]", name or "")[-1]
    base = _UNSAFE_NAME.sub("", base).strip()[:200]
    return base if base not in ("", ".", "..") else "upload"


@dataclass(frozen=True, slots=True)
class Stored:
    upload: Upload
    created: bool  # False when the same bytes were already stored
    refused: tuple[Refusal, ...]  # parts of the upload that are not session logs


@dataclass(frozen=True, slots=True)
class ListedSession:
    digest: str
    source: SessionSource
    header: dict[str, Any] | None


class UploadStore:
    """Uploads kept in a catalog and blobs (backends.py): embedded in `data_dir` unless `catalog_url` and
    `blobs_url` name others. `data_dir` always holds uploads while they arrive (`tmp/`), and for the team
    store this machine's read cache of blobs (`cache/`)."""

    def __init__(
        self,
        data_dir: str | Path,
        limits: Limits | None = None,
        *,
        catalog_url: str | None = None,
        blobs_url: str | None = None,
        read_cache_bytes: int = READ_CACHE_MB * MIB,
    ) -> None:
        self.root = Path(data_dir)
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.limits = limits or Limits()
        self.tmp = self.root / "tmp"
        self.tmp.mkdir(mode=0o700, exist_ok=True)
        self.catalog: Catalog = open_catalog(catalog_url, self.root)
        self.blobs: Blobs = open_blobs(blobs_url, self.root, read_cache_bytes)
        self.shared = blobs_url is not None  # the blobs are not this machine's files: no process may assume so
        self._lock = threading.Lock()
        self._listed: tuple[int, list[ListedSession]] | None = None  # the catalog version it was read at
        self._sweep()

    def _sweep(self) -> None:
        """Leftovers of a crash: temp files of dead processes, and blobs whose
        catalog row was removed before the process could unlink them."""
        sweep_temps(self.tmp)
        self.catalog.sweep(self.blobs.digests(), self.blobs.delete)

    def receive(self) -> Receiving:
        return Receiving(self.tmp, self.limits.max_upload_bytes)

    def ingest(self, received: Received, name: str | None) -> Stored:
        """Read, then publish and catalogue an upload; raises LimitExceeded or NoSessions.

        The temp file is gone afterwards whatever happens."""
        shown = clean_name(name)
        try:
            existing = self.catalog.get(received.digest)
            if existing is not None:
                return Stored(existing, False, ())
            contents = read_contents(str(received.temp), shown, self.limits)
            sessions = tuple(
                StoredSession(
                    received.digest,
                    i,
                    s.kind,
                    s.member,
                    s.session_id,
                    orjson.dumps(s.header).decode() if s.header is not None else None,
                    s.verdict,
                )
                for i, s in enumerate(contents.sessions)
            )
            upload = Upload(
                received.digest,
                shown,
                received.size,
                contents.carrier,
                contents.media,
                time.time_ns() // 1_000_000,
                sessions,
            )
            current = self.catalog.publish(
                upload, lambda: self.blobs.publish(received), lambda: self.blobs.delete(received.digest)
            )
            if current is not None:  # the same bytes, uploaded concurrently, won
                return Stored(current, False, contents.refused)
            return Stored(upload, True, contents.refused)
        finally:
            received.temp.unlink(missing_ok=True)

    def uploads(self) -> list[Upload]:
        return self.catalog.all()

    def newest(self, limit: int) -> list[Upload]:
        """The first page of uploads, newest first, read through the catalog's index."""
        return self.catalog.newest(limit)

    def upload(self, digest: str) -> Upload | None:
        return self.catalog.get(digest) if valid_digest(digest) else None

    def blob_path(self, digest: str) -> Path:
        """Where this machine reads the blob (for the team store, once `fetch` brought it)."""
        return self.blobs.local_path(digest)

    def fetch(self, digest: str) -> Path:
        """The blob as a local file, streamed from the object store first when this machine has no copy."""
        return self.blobs.fetch(digest)

    def chunks(self, digest: str) -> Iterator[bytes]:
        return self.blobs.chunks(digest)

    def source(self, upload: Upload, session: StoredSession) -> SessionSource:
        return SessionSource(str(self.blob_path(upload.digest)), session.kind, session.member, display=upload.name)

    def changed(self) -> bool:
        """Whether an upload was added or deleted, by any process, since `sessions` last read the catalog."""
        with self._lock:
            listed = self._listed
        return listed is None or listed[0] != self.catalog.version()

    def listed_version(self) -> int | None:
        """The catalog version `sessions` last read at (None before it first did)."""
        with self._lock:
            return self._listed[0] if self._listed is not None else None

    def sessions(self) -> list[ListedSession]:
        """Every stored session, oldest upload first; read again only when the catalog's version moved
        (embedded: uploads whose blob is gone are skipped)."""
        version = self.catalog.version()  # before the read: a change during it shows as a new version next time
        with self._lock:
            listed = self._listed
        if listed is not None and listed[0] == version:
            return list(listed[1])
        uploads = self.catalog.all()
        out: list[ListedSession] = []
        for upload in uploads:
            if not self.shared and not self.blob_path(upload.digest).is_file():
                continue
            out.extend(ListedSession(upload.digest, self.source(upload, s), s.header) for s in upload.sessions)
        with self._lock:
            before = {s.digest for s in self._listed[1]} if self._listed is not None else set()
            self._listed = (version, out)
        for digest in before - {u.digest for u in uploads}:
            self.blobs.forget_local(digest)  # deleted by another process: this machine's copy goes too
        return list(out)

    def delete(self, digest: str) -> bool:
        """Forget an upload: its row first, then its blob (a crash in between
        leaves an orphan blob, which the next start removes)."""
        if not valid_digest(digest):
            return False
        return self.catalog.remove(digest, lambda: self.blobs.delete(digest))


def open_catalog(url: str | None, data_dir: Path) -> Catalog:
    """The catalog a URL names: None or `sqlite:///PATH` embedded, `postgresql://…` the team's."""
    if url is None:
        return SqliteCatalog(data_dir / "catalog.sqlite3")
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        return SqliteCatalog(Path(urlsplit(url).path))
    if scheme in ("postgresql", "postgres"):
        from .pg_catalog import PostgresCatalog

        return PostgresCatalog(url)
    raise ValueError(f"store URL {url!r}: use postgresql://user@host:port/db, or leave it out for SQLite")


def open_blobs(url: str | None, data_dir: Path, read_cache_bytes: int) -> Blobs:
    """The blobs a URL names: None the `blobs/` folder of `data_dir`, `s3://bucket/prefix` an object store."""
    if url is None:
        return FileBlobs(data_dir)
    if urlsplit(url).scheme == "s3":
        from .s3_blobs import S3Blobs

        return S3Blobs(url, data_dir / "cache", read_cache_bytes)
    raise ValueError(f"blobs URL {url!r}: use s3://bucket/prefix, or leave it out for files in --data-dir")
