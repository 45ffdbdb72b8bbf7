"""How much one upload may hold. The web layer exposes these as documented
settings; the store only enforces them and says which one was exceeded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..log.plaintext import DEFAULT_LIMITS, MIB, ReadLimits

LimitName = Literal["max_upload_bytes", "max_decompressed_bytes", "max_sessions_per_upload"]
# What a team store keeps of its blobs on each machine's disk (its read cache), by default: a bound on disk,
# not on what one upload may hold, so no LimitName
READ_CACHE_MB = 10_240


@dataclass(frozen=True, slots=True)
class Limits:
    max_upload_bytes: int = 256 * MIB
    # Everything a reader may decode from one upload: zstd frames, the ZIP
    # members it reads, the zstd data blobs of a SQLite store, plain text
    # (and what each session's own reading holds to).
    max_decompressed_bytes: int = DEFAULT_LIMITS.max_session_bytes
    max_sessions_per_upload: int = 1000
    # the longest line (or SQLite row data) a reader decodes: a longer one is a finding, not read
    max_line_bytes: int = DEFAULT_LIMITS.max_line_bytes

    def read_limits(self) -> ReadLimits:
        """What each session of an upload is read within."""
        return ReadLimits(self.max_line_bytes, self.max_decompressed_bytes)

    @property
    def max_zip_entries(self) -> int:
        """A ZIP's central directory is parsed whole, so its length is bounded too:
        room for every allowed session plus its images."""
        return 10 * self.max_sessions_per_upload


class LimitExceeded(Exception):
    """An upload refused by a limit; `limit` names the one, `message` says by how much."""

    def __init__(self, limit: LimitName, message: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.message = message

    def __reduce__(self) -> tuple[type[LimitExceeded], tuple[LimitName, str]]:
        return type(self), (self.limit, self.message)  # raised in the process for heavy reads, told here


def mib(n: int) -> str:
    return f"{n / MIB:g} MiB"


__all__ = ["MIB", "LimitExceeded", "LimitName", "Limits", "mib"]  # MIB: the readers' unit, the store's too
