"""A server's access control, made once at start: its tokens, its failed-attempt counts, its audit trail and
what each client may upload."""

from __future__ import annotations

from dataclasses import dataclass

from ..store.access_records import AccessRecords
from .attempts import FailedAttempts
from .audit import Auditor
from .quotas import UploadQuota
from .tokens import Tokens


@dataclass(frozen=True, slots=True)
class AccessControl:
    tokens: Tokens
    attempts: FailedAttempts
    auditor: Auditor
    uploads: UploadQuota

    @classmethod
    def over(
        cls,
        records: AccessRecords,
        *,
        attempts_per_minute: int,
        audit_days: int,
        upload_bytes_per_hour: int,
        largest_upload: int,
    ) -> AccessControl:
        return cls(
            Tokens(records),
            FailedAttempts(attempts_per_minute),
            Auditor(records, audit_days),
            UploadQuota(upload_bytes_per_hour, largest_upload),
        )
