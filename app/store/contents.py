"""What an uploaded file holds: its carrier (told by content), its sessions,
and the parts that are not session logs, each with a located reason."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..history.session import load_session
from ..log.records import NotASessionLog
from ..log.sources import Kind, discover, read_source_header, sniff
from ..log.sqlite_store import SqliteStore, StoreRefused
from .expansion import decoded_size
from .limits import LimitExceeded, Limits


@dataclass(frozen=True, slots=True)
class FoundSession:
    kind: Kind
    member: str | None  # ZIP member or SQLite session id
    session_id: str | None
    header: dict[str, Any] | None  # the header as listed, for the catalog
    verdict: str
    events: int  # as stored: never the closers dsh would add


@dataclass(frozen=True, slots=True)
class Refusal:
    part: str  # the upload's name, or name!member
    reason: str  # located: what it is and where reading stopped


@dataclass(frozen=True, slots=True)
class Contents:
    carrier: Kind
    media: int  # an export ZIP's images, kept in the stored archive
    sessions: tuple[FoundSession, ...]
    refused: tuple[Refusal, ...]


class NoSessions(Exception):
    """The upload holds no session log at all."""

    def __init__(self, message: str, refused: tuple[Refusal, ...]) -> None:
        super().__init__(message)
        self.message = message
        self.refused = refused

    def __reduce__(self) -> tuple[type[NoSessions], tuple[str, tuple[Refusal, ...]]]:
        return type(self), (self.message, self.refused)  # raised in the process for heavy reads, told here


# what reads an upload's contents (`read_contents`, or the same in the process for heavy reads): path, name, limits
ContentsReader = Callable[[str, str, Limits], Contents]


def read_contents(path: str, name: str, limits: Limits) -> Contents:
    """Check limits first (cheap, bounded), then read every session fully once.

    Raises LimitExceeded or NoSessions; a session that is merely broken is
    returned with its verdict, since showing broken logs is the point.
    """
    kind = sniff(path)
    decoded_size(path, kind, limits)  # refuses a bomb before any of it is read
    count = _session_count(path, kind)
    if count > limits.max_sessions_per_upload:
        raise LimitExceeded(
            "max_sessions_per_upload",
            f"the upload holds {count} sessions; at most {limits.max_sessions_per_upload} are read from one upload",
        )
    found = discover([path])
    sessions: list[FoundSession] = []
    refused = [Refusal(name, r.reason) for r in found.refused]
    for source in found.sources:
        shown = replace(source, display=name)
        try:
            log = load_session(shown, limits=limits.read_limits())
        except NotASessionLog as exc:
            refused.append(Refusal(shown.label, f"{exc.reason} ({exc.location.describe()})"))
            continue
        header = read_source_header(source)
        sid = header.get("id") if header else None
        sessions.append(
            FoundSession(
                source.kind,
                source.member,
                sid if isinstance(sid, str) else None,
                header,
                log.verdict.category,
                log.stored_count,
            )
        )
    if not sessions:
        reasons = "; ".join(r.reason if r.part == name else f"{r.part}: {r.reason}" for r in refused)
        raise NoSessions(f"{name} is not a dsh session log: {reasons or 'it holds no sessions'}", tuple(refused))
    return Contents(kind, _media_count(path, kind), tuple(sessions), tuple(refused))


def _media_count(path: str, kind: Kind) -> int:
    if kind != "zip":
        return 0
    with zipfile.ZipFile(path) as zf:
        return sum(1 for n in zf.namelist() if n.startswith("media/") and not n.endswith("/"))


def _session_count(path: str, kind: Kind) -> int:
    """Sessions an upload claims, counted without reading any of them."""
    if kind == "sqlite":
        try:
            store = SqliteStore(path)
        except StoreRefused:
            return 1
        try:
            return store.session_count()  # only from dsh's schema: a `sessions` view could run forever
        except StoreRefused:  # not dsh's store, or a damaged one: the read says how
            return 1
        finally:
            store.close()
    if kind == "zip":
        try:
            with zipfile.ZipFile(path) as zf:
                return sum(
                    1
                    for n in zf.namelist()
                    if n == "session.jsonl" or (n.startswith("subagents/") and n.endswith("/session.jsonl"))
                )
        except (zipfile.BadZipFile, OSError):
            return 0
    return 1
