"""Uploaded histories: content-addressed blobs plus a catalog, embedded (SQLite and files in `--data-dir`)
or a team's (PostgreSQL and an S3-compatible object store).

Layering: imports `app.log` and `app.history` only (docs/product.md Architecture).
"""

from .blobs import Received, Receiving, valid_digest
from .catalog import StoredSession, Upload
from .contents import Contents, ContentsReader, NoSessions, Refusal, read_contents
from .limits import MIB, LimitExceeded, LimitName, Limits, mib
from .store import ListedHistory, ListedSession, NotHeld, PrefixMismatch, Stored, UploadStore, clean_name

__all__ = [
    "MIB",
    "Contents",
    "ContentsReader",
    "LimitExceeded",
    "LimitName",
    "Limits",
    "ListedHistory",
    "ListedSession",
    "NoSessions",
    "NotHeld",
    "PrefixMismatch",
    "Received",
    "Receiving",
    "Refusal",
    "Stored",
    "StoredSession",
    "Upload",
    "UploadStore",
    "clean_name",
    "mib",
    "read_contents",
    "valid_digest",
]
