"""The SQLite session store (FORMAT.md §1.3), opened read-only.

Identity pragmas and the exact schema are checked first; then a session's
rows decode to events (zstd data blobs, varint `sourceEventSeqs`, packed
rows) under dsh's `scanRows` rule for corruption versus a torn tail.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import orjson
import zstandard

from .diagnostics import Diagnostic, Location
from .jsonl import parse_json_line
from .jsonvalues import is_nonneg_safe_int, is_safe_int
from .packed import PACKED_TAGS, PackedRowError, expand_packed
from .records import Record, ScanState

APPLICATION_ID = 1146308688  # "DSHP"
SCHEMA_VERSION = 17
PACKED_DATA_MAX_BYTES = 1 << 20
SQLITE_MAGIC = b"SQLite format 3\x00"

CANONICAL_SCHEMA = (
    """CREATE TABLE persistence_state (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  store_id  TEXT NOT NULL
) STRICT""",
    """CREATE TABLE sessions (
  id               TEXT PRIMARY KEY,
  version          INTEGER NOT NULL,
  created_at       INTEGER NOT NULL,
  cwd              TEXT,
  parent_session   TEXT,
  seed_length      INTEGER,
  origin           TEXT,
  delegation_depth INTEGER,
  agent_preset     TEXT,
  incarnation      TEXT NOT NULL,
  revision         INTEGER NOT NULL
) STRICT""",
    """CREATE TABLE events (
  session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq               INTEGER NOT NULL,
  type              TEXT NOT NULL,
  time              INTEGER NOT NULL,
  data              ANY NOT NULL,
  source_event_seqs ANY,
  surface_op        TEXT,
  ignorable         INTEGER CHECK (ignorable IS NULL OR ignorable IN (0, 1)),
  PRIMARY KEY (session_id, seq)
) STRICT""",
)

_HEADER_COLUMNS = (
    ("version", "version"),
    ("created_at", "createdAt"),
    ("cwd", "cwd"),
    ("parent_session", "parentSession"),
    ("seed_length", "seedLength"),
    ("origin", "origin"),
    ("delegation_depth", "delegationDepth"),
    ("agent_preset", "agentPreset"),
)


def normalize_sql(sql: str) -> str:
    sql = re.sub(r"\s+", " ", sql.strip().rstrip(";"))
    return re.sub(r"\s*([(),])\s*", r"\1", sql)


_CANONICAL = sorted(normalize_sql(s) for s in CANONICAL_SCHEMA)


class StoreRefused(Exception):
    """The file is a SQLite database that dsh would not open as its store."""

    def __init__(self, reason: str, *, unsupported: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unsupported = unsupported


class RowError(ValueError):
    pass


def decode_varint_seqs(blob: bytes) -> list[int]:
    """`source_event_seqs`: LEB128 first seq, then ZigZag-style deltas."""
    out: list[int] = []
    pos = 0
    while pos < len(blob):
        value = 0
        shift = 0
        while True:
            if pos >= len(blob):
                raise RowError("truncated varint in source_event_seqs")
            byte = blob[pos]
            pos += 1
            if shift > 56:
                raise RowError("varint longer than 8 groups in source_event_seqs")
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                if byte == 0 and shift > 0:
                    raise RowError("non-canonical varint in source_event_seqs")
                break
            shift += 7
        if out:
            delta = value // 2 if value % 2 == 0 else -((value + 1) // 2)
            value = out[-1] + delta
        if not is_nonneg_safe_int(value):
            raise RowError("source_event_seqs value outside the safe-integer range")
        out.append(value)
    return out


def encode_varint_seqs(seqs: list[int]) -> bytes:
    """The inverse of `decode_varint_seqs` (used by the tests' writer and the demo store)."""
    out = bytearray()
    prev: int | None = None
    for seq in seqs:
        if prev is None:
            value = seq
        else:
            d = seq - prev
            value = 2 * d if d >= 0 else 2 * -d - 1
        prev = seq
        while True:
            byte = value & 0x7F
            value >>= 7
            if value:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                break
    return bytes(out)


def _decode_data(value: object, *, limit: int | None = None) -> Any:
    if isinstance(value, bytes):
        try:
            reader = zstandard.ZstdDecompressor().stream_reader(value, read_across_frames=False)
            text = reader.read(limit + 1) if limit is not None else reader.readall()
        except zstandard.ZstdError as exc:
            raise RowError(f"data blob does not decompress: {exc}") from exc
        if limit is not None and len(text) > limit:
            raise RowError(f"packed data over {limit} bytes")
        try:
            text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RowError(f"data blob is not UTF-8 (byte {exc.start})") from exc
    elif isinstance(value, str):
        text = value.encode("utf-8")
        if limit is not None and len(text) > limit:
            raise RowError(f"packed data over {limit} bytes")
    else:
        raise RowError(f"data column holds a {type(value).__name__}, expected TEXT or BLOB")
    try:
        return parse_json_line(text)[0]
    except json.JSONDecodeError as exc:
        raise RowError(f"data is not JSON: {exc}") from exc


def decode_row(row: tuple[Any, ...]) -> list[dict[str, Any]]:
    """One physical row → its logical events, or RowError."""
    seq, type_, time, data, seqs, surface_op, ignorable = row
    if ignorable == 0:
        if type_ not in PACKED_TAGS:
            raise RowError(f"packed row (ignorable = 0) has type {type_!r}")
        if seqs is not None or surface_op is not None:
            raise RowError("packed row carries surface_op or source_event_seqs")
        payload = _decode_data(data, limit=PACKED_DATA_MAX_BYTES)
        try:
            return expand_packed(type_, seq, time, payload, min_members=3, max_members=1024)
        except PackedRowError as exc:
            raise RowError(str(exc)) from exc
    if not is_safe_int(seq) or not is_safe_int(time):
        raise RowError("seq or time is not a safe integer")
    event: dict[str, Any] = {"type": type_, "seq": seq, "time": time, "data": _decode_data(data)}
    if seqs is not None:
        if not isinstance(seqs, bytes):
            raise RowError("source_event_seqs is not a BLOB")
        event["sourceEventSeqs"] = decode_varint_seqs(seqs)
    if surface_op is not None:
        try:
            event["surfaceOp"] = orjson.loads(surface_op)
        except (json.JSONDecodeError, TypeError) as exc:
            raise RowError(f"surface_op is not JSON text: {exc}") from exc
    if ignorable == 1:
        event["ignorable"] = True
    elif ignorable is not None:
        raise RowError(f"ignorable is {ignorable!r}")
    return [event]


@contextmanager
def _damage_refused() -> Iterator[None]:
    """A damaged database file is one dsh could not open as its store either."""
    try:
        yield
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # damaged schema text fails to decode
        raise StoreRefused(f"the database cannot be read: {exc}") from None


class SqliteStore:
    """A dsh SQLite store, opened read-only; one file holds many sessions."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn = _open_readonly(path)

    def close(self) -> None:
        self._conn.close()

    def check(self) -> None:
        """Raise StoreRefused unless dsh would open this database as its store."""
        with _damage_refused():
            conn = self._conn
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if app_id != APPLICATION_ID:
                raise StoreRefused(f'application_id is {app_id}, expected {APPLICATION_ID} ("DSHP"): not a dsh store')
            if version != SCHEMA_VERSION:
                newer = version > SCHEMA_VERSION
                raise StoreRefused(
                    f"store schema user_version {version} is not {SCHEMA_VERSION}"
                    + (" (written by a newer dsh; this reader knows schema 17)" if newer else ""),
                    unsupported=newer,
                )
            objects = sorted(
                normalize_sql(sql)
                for (sql,) in conn.execute(
                    "SELECT sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' AND sql IS NOT NULL"
                )
            )
            if objects != _CANONICAL:
                raise StoreRefused("schema objects differ from dsh's canonical schema 17")

    def headers(self) -> list[tuple[dict[str, Any], list[str]]]:
        """Every session row as a JSONL-shaped header, with row-level problems."""
        with _damage_refused():
            cols = ", ".join(c for c, _ in _HEADER_COLUMNS)
            out = []
            for row in self._conn.execute(f"SELECT id, {cols}, incarnation, revision FROM sessions"):
                header: dict[str, Any] = {"type": "session", "id": row[0]}
                for (_, key), value in zip(_HEADER_COLUMNS, row[1:-2], strict=True):
                    if value is not None:
                        header[key] = value
                problems = []
                try:
                    uuid.UUID(str(row[-2]))
                except ValueError:
                    problems.append(f"incarnation {row[-2]!r} is not a UUID")
                if not is_nonneg_safe_int(row[-1]):
                    problems.append(f"revision {row[-1]!r} is not a non-negative integer")
                out.append((header, problems))
            return out

    def rows(self, session_id: str) -> Iterator[tuple[Any, ...]]:
        return self._conn.execute(
            "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable "
            "FROM events WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )

    def row(self, session_id: str, seq: int) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._conn.execute(  # the default row factory makes tuples
            "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable "
            "FROM events WHERE session_id = ? AND seq = ?",
            (session_id, seq),
        ).fetchone()
        return row

    def last_turn_end_row(self, session_id: str) -> int | None:
        """Physical seq of the last row that decodes and holds a turn/end."""
        seq: int  # the events table is STRICT, its seq INTEGER NOT NULL
        for (seq,) in self._conn.execute(
            "SELECT seq FROM events WHERE session_id = ? AND type = 'turn/end' ORDER BY seq DESC",
            (session_id,),
        ):
            row = self.row(session_id, seq)
            try:
                if row is not None and any(e["type"] == "turn/end" for e in decode_row(row)):
                    return seq
            except RowError:
                continue
        return None


class SqliteScan:
    """One session of a store, scanned with dsh's `scanRows` rule."""

    def __init__(self, store: SqliteStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.state = ScanState()
        self.label = f"{store.path}#{session_id}"
        self._at: int | None = None  # the row being read, to locate damage

    def records(self) -> Iterator[Record]:
        """The rows in seq order; a database too damaged to read on is corruption where it stops."""
        try:
            yield from self._records()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            where = "" if self._at is None else f" after row seq {self._at}"
            self.state.corrupt(
                "damaged-store", f"the database cannot be read{where}: {exc}", Location(file=self.label, row=self._at)
            )

    def _records(self) -> Iterator[Record]:
        self._at = None  # set here, not in `records`, which reads it once this generator stops
        committed_through = self.store.last_turn_end_row(self.session_id)
        running = 0
        torn_from: int | None = None
        for row in self.store.rows(self.session_id):
            physical = row[0]
            self._at = physical
            loc = Location(file=self.label, row=physical)
            try:
                events = decode_row(row)
                reason = (
                    None
                    if torn_from is not None or events[0]["seq"] == running
                    else (f"row seq {events[0]['seq']} does not continue the log (expected {running})")
                )
            except RowError as exc:
                events, reason = [], str(exc)
            if torn_from is None and reason is None:
                running += len(events)
                yield Record("events", loc, physical, 0, events)
                continue
            if torn_from is None:
                self.state.diagnostics.append(Diagnostic("defect", "error", reason or "defect", loc))
                if committed_through is not None and physical <= committed_through:
                    self.state.corrupt(
                        "committed-corruption", f"row seq {physical}: {reason}; a later row holds a turn/end", loc
                    )
                else:
                    torn_from = physical
                    self.state.repairs.append(f"dropped the torn tail from row seq {physical} ({reason})")
                yield Record("defect", loc, physical, 0, reason=reason)
                if committed_through is not None and physical <= committed_through:
                    torn_from = physical
                continue
            yield Record("dropped" if events else "defect", loc, physical, 0, events, reason=reason)

    def read(self, physical: int) -> list[dict[str, Any]]:
        row = self.store.row(self.session_id, physical)
        return decode_row(row) if row is not None else []


def _idle_wal(path: str) -> bool:
    """A WAL-mode database with no -wal/-shm beside it: no writer has it open,
    and opening it even read-only would create those files next to it."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return False
    live = os.path.exists(path + "-wal") and os.path.exists(path + "-shm")
    return head.startswith(SQLITE_MAGIC) and head[18:20] == b"\x02\x02" and not live


def _open_readonly(path: str) -> sqlite3.Connection:
    """Read-only, and writing nothing beside the file (PRODUCT.md Safety): an idle
    WAL database holds everything in its main file, so it is opened immutable."""
    uri = f"file:{quote(path)}?" + ("immutable=1" if _idle_wal(path) else "mode=ro")
    try:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        conn.execute("SELECT 1 FROM sqlite_schema LIMIT 1").fetchall()
    except sqlite3.DatabaseError:
        conn = sqlite3.connect(f"file:{quote(path)}?immutable=1", uri=True, check_same_thread=False)
    conn.execute("PRAGMA trusted_schema = OFF")
    return conn
