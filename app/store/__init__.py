"""Uploaded histories: content-addressed blobs plus a SQLite catalog in `--data-dir`.

Layering: imports `app.log` and `app.history` only (PRODUCT.md Architecture).
"""

from app.store.blobs import Received, Receiving, valid_digest
from app.store.catalog import StoredSession, Upload
from app.store.contents import NoSessions, Refusal
from app.store.limits import MIB, LimitExceeded, LimitName, Limits, mib
from app.store.store import ListedSession, Stored, UploadStore, clean_name

__all__ = [
    "MIB",
    "LimitExceeded",
    "LimitName",
    "Limits",
    "ListedSession",
    "NoSessions",
    "Received",
    "Receiving",
    "Refusal",
    "Stored",
    "StoredSession",
    "Upload",
    "UploadStore",
    "clean_name",
    "mib",
    "valid_digest",
]
