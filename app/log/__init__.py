"""Storage: bytes in, a header and located records out; every defect a `Diagnostic` with its file, line or row
and byte offset. Carriers are told apart by content (docs/format.md §1). It knows dsh's layouts and nothing of
what events mean.

The public API below is what the layers above use; the modules hold the rest."""

from .diagnostics import FINDINGS_LISTED, Diagnostic, Findings, Location, Severity
from .dsh_root import encode_segment, project_key
from .generations import Generation, generation_number, session_generations
from .jsonl import JsonlScan
from .jsonvalues import (
    MAX_SAFE_INTEGER,
    as_int,
    is_nonempty_str,
    is_nonneg_safe_int,
    is_number,
    is_safe_int,
    js_number,
    js_string,
    nests_deeper,
    parse_json,
)
from .plaintext import DEFAULT_LIMITS, MIB, OVER_LIMIT, FilePlaintext, LineTooLong, ReadLimits, scan_frames
from .records import EventRun, HeaderlessLog, NotASessionLog, Record, RepeatedLines
from .sources import (
    Discovery,
    JsonlSessionScan,
    Kind,
    KindCache,
    NotASession,
    RecordChanged,
    SessionScan,
    SessionSource,
    UnreadablePath,
    discover,
    escapes,
    forget_archive,
    identity_problem,
    open_scan,
    read_source_header,
    sniff,
)
from .sqlite_store import SqliteStore, StoreRefused, stop_reads
from .writer import Compression, append_batch, write_artifact

__all__ = [
    "DEFAULT_LIMITS",
    "FINDINGS_LISTED",
    "MAX_SAFE_INTEGER",
    "MIB",
    "OVER_LIMIT",
    "Compression",
    "Diagnostic",
    "Discovery",
    "EventRun",
    "FilePlaintext",
    "Findings",
    "Generation",
    "HeaderlessLog",
    "JsonlScan",
    "JsonlSessionScan",
    "Kind",
    "KindCache",
    "LineTooLong",
    "Location",
    "NotASession",
    "NotASessionLog",
    "ReadLimits",
    "Record",
    "RecordChanged",
    "RepeatedLines",
    "SessionScan",
    "SessionSource",
    "Severity",
    "SqliteStore",
    "StoreRefused",
    "UnreadablePath",
    "append_batch",
    "as_int",
    "discover",
    "encode_segment",
    "escapes",
    "forget_archive",
    "generation_number",
    "identity_problem",
    "is_nonempty_str",
    "is_nonneg_safe_int",
    "is_number",
    "is_safe_int",
    "js_number",
    "js_string",
    "nests_deeper",
    "open_scan",
    "parse_json",
    "project_key",
    "read_source_header",
    "scan_frames",
    "session_generations",
    "sniff",
    "stop_reads",
    "write_artifact",
]
