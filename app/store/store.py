"""The upload store in `--data-dir`: blobs plus catalog, and the rules that keep
them in step (docs/decisions/0003-upload-store.md)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..log.sources import SessionSource
from .blobs import BlobStore, Received, Receiving, valid_digest
from .catalog import Catalog, StoredSession, Upload
from .contents import Refusal, read_contents
from .limits import Limits

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
    def __init__(self, data_dir: str | Path, limits: Limits | None = None) -> None:
        self.root = Path(data_dir)
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.limits = limits or Limits()
        self.blobs = BlobStore(self.root)
        self.catalog = Catalog(self.root / "catalog.sqlite3")
        self._sweep()

    def _sweep(self) -> None:
        """Leftovers of a crash: temp files of dead processes, and blobs whose
        catalog row was removed before the process could unlink them."""
        self.blobs.sweep_temps()
        with self.catalog.connection() as conn, self.catalog.writing(conn):
            known = self.catalog.digests(conn)
            for digest in list(self.blobs.digests()):
                if digest not in known:
                    self.blobs.delete(digest)

    def receive(self) -> Receiving:
        return self.blobs.receive(self.limits.max_upload_bytes)

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
            with self.catalog.connection() as conn, self.catalog.writing(conn):
                current = self.catalog.get(received.digest, conn)
                if current is not None:  # the same bytes, uploaded concurrently, won
                    return Stored(current, False, contents.refused)
                try:
                    self.blobs.publish(received)
                    Catalog.insert(conn, upload)
                except BaseException:
                    self.blobs.delete(received.digest)
                    raise
            return Stored(upload, True, contents.refused)
        finally:
            received.temp.unlink(missing_ok=True)

    def uploads(self) -> list[Upload]:
        return self.catalog.all()

    def upload(self, digest: str) -> Upload | None:
        return self.catalog.get(digest) if valid_digest(digest) else None

    def blob_path(self, digest: str) -> Path:
        return self.blobs.path(digest)

    def source(self, upload: Upload, session: StoredSession) -> SessionSource:
        return SessionSource(str(self.blob_path(upload.digest)), session.kind, session.member, display=upload.name)

    def sessions(self) -> list[ListedSession]:
        """Every stored session, oldest upload first (uploads whose blob is gone are skipped)."""
        out: list[ListedSession] = []
        for upload in self.catalog.all():
            if not self.blob_path(upload.digest).is_file():
                continue
            out.extend(ListedSession(upload.digest, self.source(upload, s), s.header) for s in upload.sessions)
        return out

    def delete(self, digest: str) -> bool:
        """Forget an upload: its row first, then its blob (a crash in between
        leaves an orphan blob, which the next start removes)."""
        if not valid_digest(digest):
            return False
        with self.catalog.connection() as conn:
            with self.catalog.writing(conn):
                removed = Catalog.remove(conn, digest)
            if removed:
                with self.catalog.writing(conn):
                    if self.catalog.get(digest, conn) is None:
                        self.blobs.delete(digest)
        return removed
