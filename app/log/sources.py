"""Finding session logs in what the user named, and opening each for a scan.

Carriers are told apart by their bytes, never by file name (PRODUCT.md).
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from app.log.diagnostics import Diagnostic, Location
from app.log.dsh_root import identity_problem, list_root, resolve_root
from app.log.jsonl import JsonlScan, Mode, decode_record, parse_json_line
from app.log.plaintext import ZSTD_MAGIC, BytesPlaintext, FilePlaintext, Plaintext, ZstdPlaintext
from app.log.records import Record, ScanState
from app.log.sqlite_store import SQLITE_MAGIC, SqliteScan, SqliteStore, StoreRefused

Kind = Literal["jsonl", "jsonl-zstd", "sqlite", "zip"]
ZIP_MAGIC = b"PK\x03\x04"
DEFAULT_MAX_PLAINTEXT = 1 << 34  # decoded bytes one log may expand to


class UnreadablePath(Exception):
    pass


def sniff(path: str) -> Kind:
    with open(path, "rb") as f:
        head = f.read(16)
    if head.startswith(ZSTD_MAGIC):
        return "jsonl-zstd"
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(ZIP_MAGIC):
        return "zip"
    return "jsonl"


@dataclass(frozen=True, slots=True)
class SessionSource:
    """One session log: a file, a ZIP member, or one session of a SQLite store."""

    path: str
    kind: Kind
    member: str | None = None  # ZIP member name, or SQLite session id
    root: str | None = None  # the dsh root this artifact was listed from

    @property
    def label(self) -> str:
        if self.member is None:
            return self.path
        return f"{self.path}!{self.member}" if self.kind == "zip" else f"{self.path}#{self.member}"


@dataclass(frozen=True, slots=True)
class NotASession:
    path: str
    reason: str


@dataclass(slots=True)
class Discovery:
    sources: list[SessionSource] = field(default_factory=list)
    refused: list[NotASession] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _is_candidate(name: str) -> bool:
    if name.endswith(".tmp") or name.startswith("."):
        return False
    return name.endswith((".jsonl", ".jsonl.zstd", ".zip", ".sqlite", ".sqlite3", ".db"))


def discover(paths: list[str], *, progress: Callable[[str], None] | None = None) -> Discovery:
    """Every session log below `paths` (files, folders, dsh roots), in a stable order."""
    found = Discovery()
    for path in paths:
        if not os.path.exists(path):
            raise UnreadablePath(f"{path}: no such file or folder")
        if os.path.isdir(path):
            _discover_dir(path, found, progress)
        elif os.access(path, os.R_OK):
            _discover_file(path, found, root=None)
        else:
            raise UnreadablePath(f"{path}: cannot be read")
    return found


def _discover_dir(path: str, found: Discovery, progress: Callable[[str], None] | None) -> None:
    root = resolve_root(path)
    if root is not None:
        listing = list_root(root)
        found.diagnostics.extend(listing.diagnostics)
        for artifact in listing.artifacts:
            if progress:
                progress(artifact.path)
            _discover_file(artifact.path, found, root=root)
        return
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not _is_candidate(name):
                continue
            full = os.path.join(dirpath, name)
            if progress:
                progress(full)
            kind = sniff(full)
            if name.endswith((".zip", ".sqlite", ".sqlite3", ".db")) and kind == "jsonl":
                continue  # named like a container but holds something else: not a log candidate
            _discover_file(full, found, root=None, kind=kind)


def _discover_file(path: str, found: Discovery, *, root: str | None, kind: Kind | None = None) -> None:
    kind = kind or sniff(path)
    if kind == "zip":
        members = _zip_session_members(path)
        if not members:
            found.refused.append(NotASession(path, "a ZIP archive with no session.jsonl: not a dsh session export"))
        found.sources.extend(SessionSource(path, "zip", member=m) for m in members)
    elif kind == "sqlite":
        try:
            store = SqliteStore(path)
        except Exception as exc:  # sqlite3 raises many kinds for a damaged file
            found.refused.append(NotASession(path, f"SQLite database cannot be opened: {exc}"))
            return
        try:
            store.check()
        except StoreRefused as exc:
            if "application_id" in exc.reason:
                found.refused.append(NotASession(path, exc.reason))
            else:
                found.sources.append(SessionSource(path, "sqlite", member=None))
            return
        finally:
            store.close()
        store = SqliteStore(path)
        try:
            ids = [header["id"] for header, _ in store.headers()]
        finally:
            store.close()
        found.sources.extend(SessionSource(path, "sqlite", member=str(sid)) for sid in ids)
    else:
        found.sources.append(SessionSource(path, kind, root=root))


def _zip_session_members(path: str) -> list[str]:
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except zipfile.BadZipFile:
        return []
    main = [n for n in names if n == "session.jsonl"]
    children = sorted(n for n in names if n.startswith("subagents/") and n.endswith("/session.jsonl"))
    return main + children


class SessionScan(Protocol):
    """A one-pass reader of a session's storage records (any carrier)."""

    label: str
    state: ScanState

    @property
    def mode(self) -> Mode: ...

    def read_header(self) -> dict[str, Any]: ...

    def records(self) -> Iterator[Record]: ...

    def reread(self, start: int, length: int, first_seq: int) -> list[dict[str, Any]]: ...


class JsonlSessionScan(JsonlScan):
    def __init__(self, plaintext: Plaintext, *, mode: Mode | None = None) -> None:
        super().__init__(plaintext, mode=mode)
        self.label = plaintext.label

    def reread(self, start: int, length: int, first_seq: int) -> list[dict[str, Any]]:
        value, _ = parse_json_line(self.plaintext.read(start, length))
        return decode_record(value, first_seq, self.mode)


class SqliteSessionScan(SqliteScan):
    """One session of a store; the header is its `sessions` row."""

    def __init__(self, path: str, session_id: str | None) -> None:
        self._path = path
        store = SqliteStore(path)
        store.check()  # raises StoreRefused for a store dsh would not open
        super().__init__(store, session_id or "")
        self.header_location = Location(file=self.label)
        self.header_problems: list[str] = []

    @property
    def mode(self) -> Mode:
        return "artifact"

    def read_header(self) -> dict[str, Any]:
        for header, problems in self.store.headers():
            if header["id"] == self.session_id:
                self.header_problems = problems
                return header
        raise StoreRefused(f"no session {self.session_id!r} in this store")

    def reread(self, start: int, length: int, first_seq: int) -> list[dict[str, Any]]:
        return self.read(start)


def open_scan(source: SessionSource, *, max_plaintext: int = DEFAULT_MAX_PLAINTEXT) -> SessionScan:
    """A fresh scan of one source. Raises StoreRefused for an unusable SQLite store."""
    if source.kind == "sqlite":
        return SqliteSessionScan(source.path, source.member)
    if source.kind == "jsonl-zstd":
        return JsonlSessionScan(ZstdPlaintext(source.path, limit=max_plaintext), mode="artifact")
    if source.kind == "zip":
        assert source.member is not None
        return JsonlSessionScan(BytesPlaintext(_read_member(source.path, source.member, max_plaintext), source.label),
                                mode="artifact")
    return JsonlSessionScan(FilePlaintext(source.path))


def _read_member(path: str, member: str, limit: int) -> bytes:
    with zipfile.ZipFile(path) as zf, zf.open(member) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}!{member} expands past {limit} bytes")
    return data


def read_source_header(source: SessionSource) -> dict[str, Any] | None:
    """Only the header of a source (for listing): None when there is no readable one."""
    from app.log.dsh_root import read_header_line

    try:
        if source.kind == "sqlite":
            store = SqliteStore(source.path)
            try:
                return next((h for h, _ in store.headers() if h["id"] == source.member), None)
            finally:
                store.close()
        if source.kind == "zip":
            assert source.member is not None
            with zipfile.ZipFile(source.path) as zf, zf.open(source.member) as f:
                line = f.readline(1 << 20)
        elif source.kind == "jsonl-zstd":
            line = read_header_line(source.path) or b""
        else:
            with open(source.path, "rb") as f:
                line = b""
                while not line.strip():
                    line = f.readline(1 << 20)
                    if not line:
                        return None
        value, _ = parse_json_line(line.strip())
    except Exception:  # a listing never fails on one bad file; the full read reports it
        return None
    return value if isinstance(value, dict) and value.get("type") == "session" else None


def root_identity_warning(source: SessionSource, header: dict[str, Any]) -> Diagnostic | None:
    if source.root is None:
        return None
    problem = identity_problem(source.root, source.path, header)
    if problem is None:
        return None
    return Diagnostic("root-identity", "warning", f"dsh's identity check fails: {problem}", Location(file=source.path))
