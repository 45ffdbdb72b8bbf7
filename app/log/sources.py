"""Finding session logs in what the user named, and opening each for a scan.

Carriers are told apart by their bytes, never by file name (docs/product.md).
"""

from __future__ import annotations

import os
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any, Literal, Protocol

from cachetools import LRUCache

from .diagnostics import Diagnostic, Location
from .dsh_root import FileVersion, RootArtifact, artifact_root, list_root, resolve_root
from .dsh_root import identity_problem as root_identity_problem
from .jsonl import JsonlScan, Mode, decode_record, parse_json_line, parse_json_lines
from .plaintext import (
    DEFAULT_LIMITS,
    ZSTD_MAGIC,
    BytesPlaintext,
    FilePlaintext,
    Plaintext,
    ReadLimits,
    ZstdPlaintext,
    read_text,
)
from .records import EventRun, Record, RepeatedLines, ScanState
from .sqlite_store import SQLITE_MAGIC, SqliteScan, SqliteStore, StoreRefused

Kind = Literal["jsonl", "jsonl-zstd", "sqlite", "zip"]
ZIP_MAGIC = b"PK\x03\x04"


class UnreadablePath(Exception):
    pass


class RecordChanged(ValueError):
    """A record read again is not the one read there before: its file (or store) changed since."""

    def __init__(self, location: Location, reason: str) -> None:
        super().__init__(f"{location.describe()}: {reason}; the log changed since it was read")
        self.location = location
        self.reason = reason


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
    display: str | None = None  # the name people know the file by (an upload's), shown instead of `path`

    @property
    def label(self) -> str:
        name = self.display or self.path
        if self.member is None:
            return name
        return f"{name}!{self.member}" if self.kind == "zip" else f"{name}#{self.member}"


@dataclass(frozen=True, slots=True)
class NotASession:
    path: str
    reason: str


@dataclass(slots=True)
class Discovery:
    sources: list[SessionSource] = field(default_factory=list)
    refused: list[NotASession] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # the version of each regular-file root artifact, from the lstat that listed it
    versions: dict[str, FileVersion] = field(default_factory=dict)


def _is_candidate(name: str) -> bool:
    if name.endswith(".tmp") or name.startswith("."):
        return False
    return name.endswith((".jsonl", ".jsonl.zstd", ".zip", ".sqlite", ".sqlite3", ".db"))


# The carrier of each root artifact at a file version: a caller that discovers again and
# again (the server's listing) passes one, so an unchanged file is not opened to be sniffed.
KindCache = dict[str, tuple[FileVersion, Kind]]


def discover(
    paths: list[str], *, progress: Callable[[str], None] | None = None, kinds: KindCache | None = None
) -> Discovery:
    """Every session log below `paths` (files, folders, dsh roots), in a stable order."""
    found = Discovery()
    for path in paths:
        if not os.path.exists(path):
            raise UnreadablePath(f"{path}: no such file or folder")
        if os.path.isdir(path):
            _discover_dir(path, found, progress, kinds)
        elif os.access(path, os.R_OK):
            _discover_file(path, found, root=None)
        else:
            raise UnreadablePath(f"{path}: cannot be read")
    return found


def escapes(path: str, top: str) -> bool:
    """True when `path`, once symbolic links are resolved, lies outside the folder `top`."""
    real, base = os.path.realpath(path), os.path.realpath(top)
    return os.path.commonpath([real, base]) != base


def _root_artifact_escapes(artifact: RootArtifact, root_escapes: bool, top: str) -> bool:
    """`escapes(artifact.path, top)` without resolving every path component of every artifact.

    `list_root` takes only real project and session folders (it follows no link to
    them) and says which artifacts are regular files, so only the root and a linked
    artifact can lead elsewhere; resolving each of a thousand paths made a listing
    cost several times the header reads it needs (benchmarks/, listing budget)."""
    return root_escapes if artifact.version is not None else escapes(artifact.path, top)


def _root_artifact_kind(artifact: RootArtifact, kinds: KindCache | None) -> Kind | None:
    """The carrier of a regular file sniffed before at this very version; else sniffed and remembered."""
    if kinds is None or artifact.version is None:
        return None
    cached = kinds.get(artifact.path)
    if cached is not None and cached[0] == artifact.version:
        return cached[1]
    kind = sniff(artifact.path)
    kinds[artifact.path] = (artifact.version, kind)
    return kind


def _discover_dir(
    path: str, found: Discovery, progress: Callable[[str], None] | None, kinds: KindCache | None = None
) -> None:
    root = resolve_root(path)
    if root is not None:
        listing = list_root(root)
        found.diagnostics.extend(listing.diagnostics)
        root_escapes = escapes(root, path)
        for artifact in listing.artifacts:
            if progress:
                progress(artifact.path)
            if _root_artifact_escapes(artifact, root_escapes, path):
                found.refused.append(NotASession(artifact.path, _ESCAPES))
                continue
            if artifact.version is not None:
                found.versions[artifact.path] = artifact.version
            _discover_file(artifact.path, found, root=root, kind=_root_artifact_kind(artifact, kinds))
        return
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not _is_candidate(name):
                continue
            full = os.path.join(dirpath, name)
            if progress:
                progress(full)
            if escapes(full, path):
                found.refused.append(NotASession(full, _ESCAPES))
                continue
            kind = sniff(full)
            if name.endswith((".zip", ".sqlite", ".sqlite3", ".db")) and kind == "jsonl":
                continue  # named like a container but holds something else: not a log candidate
            _discover_file(full, found, root=None, kind=kind)


# A link inside a served folder must not publish a file from elsewhere (docs/product.md Safety).
_ESCAPES = "a symbolic link that leads outside the folder being served: not followed"


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
        except StoreRefused as exc:
            found.refused.append(NotASession(path, f"SQLite database cannot be opened: {exc.reason}"))
            return
        try:
            ids = [header["id"] for header, _ in store.headers()]  # the schema checked first
        except StoreRefused as exc:
            if exc.foreign:
                found.refused.append(NotASession(path, exc.reason))
            else:  # a store dsh would not open, or cannot read: its read says why, and where
                found.sources.append(SessionSource(path, "sqlite", member=None))
            return
        finally:
            store.close()
        found.sources.extend(SessionSource(path, "sqlite", member=str(sid)) for sid in ids)
    else:
        found.sources.append(SessionSource(path, kind, root=root))


# Open archives by file version, the most recent few: a ZIP's central directory is parsed once, not once
# for each member read (an export of 10,000 subagent logs parsed its 10,000 entries 10,000 times over).
Archive = tuple[zipfile.ZipFile, threading.Lock]  # an open archive, and the lock its opens take
ArchiveKey = tuple[str, int, int, int]  # its path, size, mtime and inode: the file version it was opened at
_ARCHIVES_KEPT = 4


class _OpenArchives(LRUCache[ArchiveKey, Archive]):
    """The archives kept open, the least recently used let go first: each one let go is set aside in
    `let_go`, to be closed once `_archives_lock` is released."""

    def __init__(self, kept: int) -> None:
        super().__init__(kept)
        self.let_go: list[Archive] = []

    def popitem(self) -> tuple[ArchiveKey, Archive]:
        key, archive = super().popitem()
        self.let_go.append(archive)
        return key, archive

    def forget(self, path: str, *, but: ArchiveKey | None = None) -> None:
        """Let every version of `path` go, but one."""
        self.let_go += [self.pop(k) for k in [k for k in self if k[0] == path and k != but]]

    def closing(self) -> list[Archive]:
        """The archives let go since the last ask, to be closed."""
        let_go, self.let_go = self.let_go, []
        return let_go


_ARCHIVES = _OpenArchives(_ARCHIVES_KEPT)
_archives_lock = threading.Lock()


def _archive(path: str) -> Archive:
    """The archive at `path` as it is now, opened once for all its members, and the lock its opens take.
    Raises what `zipfile.ZipFile` raises."""
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns, st.st_ino)
    with _archives_lock:
        found = _ARCHIVES.get(key)
    if found is not None:
        return found
    opened = (zipfile.ZipFile(path), threading.Lock())
    with _archives_lock:
        _ARCHIVES.forget(path, but=key)  # its older versions
        found = _ARCHIVES.setdefault(key, opened)  # the least recent others go to make room
        closing = _ARCHIVES.closing()
    if found is not opened:
        closing.append(opened)
    _close(closing)
    return found


def _close(archives: list[Archive]) -> None:
    for zf, lock in archives:
        with lock:  # not while a member is being opened; one already open keeps the file until it is done
            zf.close()


def open_member(path: str, member: str) -> IO[bytes]:
    """One member of the archive at `path`, to read and close. Raises what `zipfile` raises."""
    while True:
        zf, lock = _archive(path)
        with lock:  # opening counts the archive's readers, which is no atomic step
            if zf.fp is not None:  # else closed since: a newer one is opened
                return zf.open(member)


def forget_archive(path: str) -> None:
    """Close the archive at `path` if it is open (it was deleted, or will be)."""
    with _archives_lock:
        _ARCHIVES.forget(path)
        closing = _ARCHIVES.closing()
    _close(closing)


def _zip_session_members(path: str) -> list[str]:
    try:
        names = _archive(path)[0].namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
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

    def runs(self) -> Iterator[Record | EventRun | RepeatedLines]:
        """The records, where the carrier can gather plain event lines into runs and repeated lines (JSONL)."""
        ...

    def reread(self, start: int, length: int, first_seq: int) -> list[dict[str, Any]]: ...


class JsonlSessionScan(JsonlScan):
    def __init__(self, plaintext: Plaintext, *, mode: Mode | None = None) -> None:
        super().__init__(plaintext, mode=mode)
        self.label = plaintext.label

    def reread(self, start: int, length: int, first_seq: int) -> list[dict[str, Any]]:
        """The events of the line read at `start`. Raises RecordChanged when its bytes are no longer all
        there, and RecordError when they do not decode."""
        raw = self.plaintext.read(start, length)
        if len(raw) != length:
            raise RecordChanged(Location(file=self.label, offset=start), f"{length} bytes expected, {len(raw)} left")
        value, _ = parse_json_line(raw)
        return decode_record(value, first_seq, self.mode)

    def reread_copies(self, start: int, length: int, stride: int, count: int, first_seq: int) -> list[dict[str, Any]]:
        """The event of each of `count` lines that are copies of one (`length` bytes from `start`, a line every
        `stride` bytes; each one event, the first's seq `first_seq`): their bytes read and compared at once, and
        the line decoded once, each copy its event with its own seq where the line gives none (§1.5)."""
        span = stride * (count - 1) + length
        data = self.plaintext.read(start, span)
        if len(data) != span or data != (data[:stride] * count)[:span]:
            raise RecordChanged(Location(file=self.label, offset=start), "the copies of a line are no longer alike")
        value, _ = parse_json_line(data[:length])
        synthesized = self.mode == "fixture" and isinstance(value, dict) and "seq" not in value
        events = decode_record(value, first_seq, self.mode)
        if len(events) != 1:
            raise RecordChanged(Location(file=self.label, offset=start), "the record holds other events than were read")
        event = events[0]
        if not synthesized:
            return [dict(event) for _ in range(count)]
        return [{**event, "seq": seq} for seq in range(first_seq, first_seq + count)]

    def reread_lines(
        self, starts: Sequence[int], lengths: Sequence[int], seqs: Sequence[int]
    ) -> list[list[dict[str, Any]]]:
        """`reread` of each line read at `starts[i]` (`lengths[i]` bytes, its first event's seq `seqs[i]`), their
        bytes read in one stretch: the lines of a run of a million like events cost one read, not a million, and
        lines scattered through a stretch (a log's messages) one read too."""
        base = starts[0]
        span = starts[-1] + lengths[-1] - base
        data = self.plaintext.read(base, span)
        if len(data) != span:
            raise RecordChanged(Location(file=self.label, offset=base), f"{span} bytes expected, {len(data)} left")
        lines = [
            data[start - base : start - base + length] + b"\n" for start, length in zip(starts, lengths, strict=True)
        ]
        mode = self.mode
        return [decode_record(value, seq, mode) for seq, value in zip(seqs, parse_json_lines(lines), strict=True)]


class SqliteSessionScan(SqliteScan):
    """One session of a store; the header is its `sessions` row."""

    def __init__(
        self, path: str, session_id: str | None, label: str | None = None, limits: ReadLimits = DEFAULT_LIMITS
    ) -> None:
        store = SqliteStore(path)
        store.check()  # raises StoreRefused for a store dsh would not open
        super().__init__(store, session_id or "", limits)
        if label is not None:
            self.label = label
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

    def runs(self) -> Iterator[Record | EventRun | RepeatedLines]:
        return self.records()  # a store's rows come one by one


def open_scan(source: SessionSource, *, limits: ReadLimits = DEFAULT_LIMITS) -> SessionScan:
    """A fresh scan of one source, reading within `limits`. Raises StoreRefused for an unusable SQLite store."""
    if source.kind == "sqlite":
        return SqliteSessionScan(source.path, source.member, source.label if source.display else None, limits)
    if source.kind == "jsonl-zstd":
        return JsonlSessionScan(ZstdPlaintext(source.path, limits=limits, label=source.label), mode="artifact")
    if source.kind == "zip":
        assert source.member is not None
        return JsonlSessionScan(_member_plaintext(source, limits), mode="artifact")
    # a file where dsh keeps artifacts is one, whatever its lines hold: dsh resumes it as such
    placed = source.root is not None or artifact_root(source.path) is not None
    return JsonlSessionScan(FilePlaintext(source.path, source.label, limits), mode="artifact" if placed else None)


def _member_plaintext(source: SessionSource, limits: ReadLimits) -> BytesPlaintext:
    """A ZIP member's text, decoded once and held (deflate cannot be re-read from the middle), within `limits`."""
    assert source.member is not None
    try:
        with open_member(source.path, source.member) as f:
            data, stop = read_text(f.read, limits)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        raise ValueError(f"the ZIP member {source.member} cannot be read: {exc}") from None
    text = BytesPlaintext(data, source.label, limits)
    if stop is not None:
        text.problems.append(replace(stop, location=stop.location._replace(file=source.label)))
    return text


def read_source_header(source: SessionSource) -> dict[str, Any] | None:
    """Only the header of a source (for listing): None when there is no readable one."""
    from .dsh_root import read_header_line

    try:
        if source.kind == "sqlite":
            store = SqliteStore(source.path)
            try:
                return next((h for h, _ in store.headers() if h["id"] == source.member), None)
            finally:
                store.close()
        if source.kind == "zip":
            assert source.member is not None
            with open_member(source.path, source.member) as f:
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


def identity_problem(source: SessionSource, header: dict[str, Any]) -> str | None:
    """Where dsh would resume this artifact from a persistence root (listed from one, or lying in one's
    layout), its identity check, which refuses a header that does not lead to the file's own place."""
    if source.kind not in ("jsonl", "jsonl-zstd"):
        return None
    root = source.root or artifact_root(source.path)
    return None if root is None else root_identity_problem(root, source.path, header)
