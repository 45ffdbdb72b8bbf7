"""The SQLite session store (docs/format.md §1.3), opened read-only.

Identity pragmas and the exact schema are checked first, from `sqlite_schema`
alone, before any row is read; then a session's rows decode to events (zstd
data blobs, varint `sourceEventSeqs`, packed rows) under dsh's `scanRows` rule
for corruption versus a torn tail. Every statement runs under a clock, so a
hostile or damaged file is refused in seconds, saying where reading stopped.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sqlite3
import threading
import time
import uuid
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import zstandard

from .diagnostics import Diagnostic, Location
from .jsonl import parse_json_line
from .jsonvalues import is_nonneg_safe_int, is_safe_int
from .packed import PACKED_TAGS, PackedRowError, expand_packed
from .plaintext import DEFAULT_LIMITS, ReadLimits
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


class StoreRefused(Exception):
    """The file is a SQLite database that dsh would not open as its store."""

    def __init__(self, reason: str, *, unsupported: bool = False, foreign: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unsupported = unsupported
        self.foreign = foreign  # another program's database (its application_id says so), not a dsh store


class RowError(ValueError):
    pass


class DataTooLarge(RowError):
    """A row's data over the line limit: not decoded further than shows it (a 47 KB blob can hold gigabytes)."""


class SessionTooLarge(RowError):
    """The session's decoded data past the session limit: the row that crosses it is not parsed."""


class DecodedBudget:
    """What one session's rows may decode in all (`max_session_bytes`): each row's data, counted as it is
    decompressed and before it is parsed, so many small blobs cannot add up to gigabytes either."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def spend(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise SessionTooLarge


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


def _decode_data(
    value: object,
    *,
    limit: int | None = None,
    max_data: int = DEFAULT_LIMITS.max_line_bytes,
    budget: DecodedBudget | None = None,
) -> Any:
    if isinstance(value, bytes):
        try:
            reader = zstandard.ZstdDecompressor().stream_reader(value, read_across_frames=False)
            text = reader.read((limit if limit is not None else max_data) + 1)
        except zstandard.ZstdError as exc:
            raise RowError(f"data blob does not decompress: {exc}") from exc
        if limit is not None and len(text) > limit:
            raise RowError(f"packed data over {limit} bytes")
        if len(text) > max_data:
            raise DataTooLarge
        try:
            text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RowError(f"data blob is not UTF-8 (byte {exc.start})") from exc
    elif isinstance(value, str):
        text = value.encode("utf-8")
        if limit is not None and len(text) > limit:
            raise RowError(f"packed data over {limit} bytes")
        if len(text) > max_data:
            raise DataTooLarge
    else:
        raise RowError(f"data column holds a {type(value).__name__}, expected TEXT or BLOB")
    if budget is not None:
        budget.spend(len(text))
    try:
        return parse_json_line(text)[0]
    except json.JSONDecodeError as exc:
        raise RowError(f"data is not JSON: {exc}") from exc


def decode_row(
    row: tuple[Any, ...], max_data: int = DEFAULT_LIMITS.max_line_bytes, budget: DecodedBudget | None = None
) -> list[dict[str, Any]]:
    """One physical row → its logical events, or RowError (DataTooLarge for data over `max_data` bytes,
    SessionTooLarge once the rows decoded with `budget` pass it)."""
    seq, type_, time, data, seqs, surface_op, ignorable = row
    if ignorable == 0:
        if type_ not in PACKED_TAGS:
            raise RowError(f"packed row (ignorable = 0) has type {type_!r}")
        if seqs is not None or surface_op is not None:
            raise RowError("packed row carries surface_op or source_event_seqs")
        payload = _decode_data(data, limit=PACKED_DATA_MAX_BYTES, budget=budget)
        try:
            return expand_packed(type_, seq, time, payload, min_members=3, max_members=1024)
        except PackedRowError as exc:
            raise RowError(str(exc)) from exc
    if not is_safe_int(seq) or not is_safe_int(time):
        raise RowError("seq or time is not a safe integer")
    event: dict[str, Any] = {
        "type": type_,
        "seq": seq,
        "time": time,
        "data": _decode_data(data, max_data=max_data, budget=budget),
    }
    if seqs is not None:
        if not isinstance(seqs, bytes):
            raise RowError("source_event_seqs is not a BLOB")
        event["sourceEventSeqs"] = decode_varint_seqs(seqs)
    if surface_op is not None:
        try:
            event["surfaceOp"] = parse_json_line(surface_op.encode())[0]
        except (json.JSONDecodeError, TypeError) as exc:
            raise RowError(f"surface_op is not JSON text: {exc}") from exc
    if ignorable == 1:
        event["ignorable"] = True
    elif ignorable is not None:
        raise RowError(f"ignorable is {ignorable!r}")
    return [event]


# How long one step of a read may run: opening the file, a pragma, its schema, or one row of a listing or
# of a session. dsh's stores answer each in milliseconds whatever their size; a hostile file (a view that
# recurses forever, damage SQLite walks round in circles) would hold a thread, and a server's shutdown,
# for good. Past it the store is refused, saying so.
READ_SECONDS = 10.0
_PROGRESS_OPS = 1000  # SQLite virtual-machine steps between two looks at the clock: microseconds apart

_stopping = threading.Event()


def stop_reads() -> None:
    """Stop every SQLite read now running, and each later one, at its next step: the process is
    shutting down, and no read may keep it alive."""
    _stopping.set()


class ReadStopped(StoreRefused):
    """A read stopped before it ended: past READ_SECONDS, or by `stop_reads`."""


class _Clock(threading.local):
    """The deadline of the statement one thread steps on a connection, and why the statement was stopped."""

    deadline = math.inf
    stopped: str | None = None


# dsh's tables by name, each with its statement as `normalize_sql` makes it
_TABLE_SQL = {statement.split()[2]: normalize_sql(statement) for statement in CANONICAL_SCHEMA}
_LISTED_PROBLEMS = 4  # a hostile schema may hold thousands of objects: the first few say enough
_COLUMNS_SQL = "SELECT * FROM pragma_table_xinfo(?)"  # on the schema only: no row of the table is read


def _columns_of(rows: Iterator[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """(name, type, notnull, default, pk, hidden) of each column, from `pragma_table_xinfo` rows."""
    return [tuple(row[1:]) for row in rows]


@functools.cache
def _canonical_columns() -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(":memory:")
    try:
        for statement in CANONICAL_SCHEMA:
            conn.execute(statement)
        return {name: _columns_of(conn.execute(_COLUMNS_SQL, (name,))) for name in _TABLE_SQL}
    finally:
        conn.close()


def _shown(name: object) -> str:
    text = str(name)
    return repr(text if len(text) <= 80 else text[:80] + "…")


def _declared(column: tuple[Any, ...]) -> str:
    _, type_, notnull, default, pk, _ = column
    return " ".join(
        part
        for part in (type_ or "untyped", "NOT NULL" if notnull else "", f"DEFAULT {default}" if default else "")
        if part
    ) + (" (in the primary key)" if pk else "")


def _table_problem(name: str, have: list[tuple[Any, ...]]) -> str:
    """How dsh's table `name`, declared otherwise than dsh declares it, differs, by its columns."""
    want = _canonical_columns()[name]
    have_names, want_names = [c[0] for c in have], [c[0] for c in want]
    parts = []
    missing = [n for n in want_names if n not in have_names]
    extra = [str(n) for n in have_names if n not in want_names]
    if missing:
        parts.append("no column " + ", ".join(missing))
    if extra:
        parts.append("an extra column " + ", ".join(_shown(n) for n in extra[:_LISTED_PROBLEMS]))
    if not parts and have_names != want_names:
        parts.append("dsh's columns in another order")
    if not parts:
        parts += [
            f"column {h[0]} declared {_declared(h)}, where dsh declares {_declared(w)}"
            for h, w in zip(have, want, strict=True)
            if h != w
        ]
    return f"table {name}: " + (", ".join(parts) or "dsh's columns, but a constraint or table option that is not dsh's")


class SqliteStore:
    """A dsh SQLite store, opened read-only; one file holds many sessions.

    No row of it is read before `check` has found dsh's schema (a view or a trigger where dsh has a
    table could run anything, or forever, when queried), and every statement steps under a clock:
    damage, a step past READ_SECONDS, or a shutdown is a StoreRefused that says what was being read."""

    def __init__(self, path: str) -> None:
        """Raises StoreRefused when the file cannot be opened at all."""
        self.path = path
        self._clock = _Clock()
        self._checked = False
        self._refusal: StoreRefused | None = None
        self._damaged = False  # a step met damage: the next statement opens the file afresh
        self._conn = self._open()

    def close(self) -> None:
        self._conn.close()

    def _open(self) -> sqlite3.Connection:
        """Read-only, and writing nothing beside the file (docs/product.md Safety): an idle WAL database holds
        everything in its main file, so it is opened immutable; so is one whose live WAL cannot be
        opened read-only from here (its -shm cannot be made), as its main file stands."""
        modes = ["immutable=1"] if _idle_wal(self.path) else ["mode=ro", "immutable=1"]
        for mode in modes:
            try:
                conn = sqlite3.connect(f"file:{quote(self.path)}?{mode}", uri=True, check_same_thread=False)
            except sqlite3.Error as exc:
                raise self._failure("opening it", exc) from None
            conn.set_progress_handler(self._progress, _PROGRESS_OPS)
            self._arm()
            try:
                # the schema may name no function to run; pages are read, never mapped (a mapped file cut
                # short under the reader kills the process with SIGBUS)
                conn.execute("PRAGMA trusted_schema = OFF")
                conn.execute("PRAGMA mmap_size = 0")
                if mode != modes[-1]:  # on the last, damage the file holds is for `check` to say
                    conn.execute("SELECT 1 FROM sqlite_schema LIMIT 1").fetchall()
                return conn
            except sqlite3.DatabaseError as exc:
                conn.close()
                if _interrupted(exc) or mode == modes[-1]:
                    raise self._failure("opening it", exc) from None
        raise AssertionError("the last mode returns or raises")

    # -- every statement steps under the clock --------------------------------
    def _progress(self) -> int:
        clock = self._clock
        if _stopping.is_set():
            clock.stopped = "shutdown"
        elif time.monotonic() > clock.deadline:
            clock.stopped = "time"
        else:
            return 0
        return 1

    def _arm(self) -> None:
        self._clock.deadline = time.monotonic() + READ_SECONDS
        self._clock.stopped = None

    def _failure(self, what: str, exc: Exception) -> StoreRefused:
        """The refusal a failed step makes. Raises KeyboardInterrupt for a Ctrl-C that landed in the
        progress handler (sqlite3 reports it as an interrupted statement, and nothing more)."""
        if not _interrupted(exc):
            self._damaged = True
            return StoreRefused(f"the database cannot be read ({what}): {exc}")
        if self._clock.stopped == "time":
            return ReadStopped(
                f"the store took longer than {READ_SECONDS:g} s to read ({what}): "
                "a dsh store answers in milliseconds, so this file is not read on"
            )
        if self._clock.stopped == "shutdown":
            return ReadStopped(f"the read was stopped ({what}): dsh-inspect is shutting down")
        raise KeyboardInterrupt

    def _connection(self) -> sqlite3.Connection:
        """The connection, opened afresh after damage: once SQLite has met a damaged page, the same
        connection can miss rows a fresh one finds (a row the scan read, then not found by its rowid).
        One still in use elsewhere is closed when it is dropped."""
        if self._damaged:
            self._damaged = False
            self._conn = self._open()
        return self._conn

    def _one(self, what: str, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        conn = self._connection()
        self._arm()
        try:
            row: tuple[Any, ...] | None = conn.execute(sql, args).fetchone()  # the default factory's tuples
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # damaged text fails to decode
            raise self._failure(what, exc) from None
        return row

    def _each(self, sql: str, args: tuple[Any, ...], what: Callable[[Any], str]) -> Iterator[tuple[Any, ...]]:
        """The rows of one statement, each step under the clock; `what(last)` says what was being read when a
        step fails, `last` being the first column of the row before (None before the first)."""
        last: Any = None
        conn = self._connection()
        self._arm()
        try:
            cursor = conn.execute(sql, args)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise self._failure(what(last), exc) from None
        while True:
            self._arm()
            try:
                row: tuple[Any, ...] | None = cursor.fetchone()
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                raise self._failure(what(last), exc) from None
            if row is None:
                return
            last = row[0]
            yield row

    # -- what dsh would open ---------------------------------------------------
    def check(self) -> None:
        """Raise StoreRefused unless dsh would open this database as its store (once: then as it said)."""
        if not self._checked:
            try:
                self._check()
            except StoreRefused as exc:
                self._refusal = exc
            self._checked = True
        if self._refusal is not None:
            raise self._refusal

    def _check(self) -> None:
        (app_id,) = self._one("its application_id", "PRAGMA application_id") or (None,)
        (version,) = self._one("its user_version", "PRAGMA user_version") or (None,)
        if app_id != APPLICATION_ID:
            raise StoreRefused(
                f'application_id is {app_id}, expected {APPLICATION_ID} ("DSHP"): not a dsh store', foreign=True
            )
        if version != SCHEMA_VERSION:
            newer = isinstance(version, int) and version > SCHEMA_VERSION
            raise StoreRefused(
                f"store schema user_version {version} is not {SCHEMA_VERSION}"
                + (" (written by a newer dsh; this reader knows schema 17)" if newer else ""),
                unsupported=newer,
            )
        problems = self._schema_problems()
        if problems:
            more = len(problems) - _LISTED_PROBLEMS
            raise StoreRefused(
                f"the store's schema is not dsh's schema {SCHEMA_VERSION} (dsh compares it exactly): "
                + "; ".join(problems[:_LISTED_PROBLEMS])
                + (f"; and {more} more" if more > 0 else "")
            )

    def _schema_problems(self) -> list[str]:
        """How the schema objects differ from dsh's canonical set (docs/format.md §1.3), read from `sqlite_schema`
        alone: a view, a trigger, an index, a virtual table is named, never queried."""
        objects = list(
            self._each(
                "SELECT name, type, tbl_name, sql FROM sqlite_schema "
                "WHERE name NOT LIKE 'sqlite_%' AND sql IS NOT NULL",
                (),
                lambda last: "its schema" if last is None else f"its schema, after {_shown(last)}",
            )
        )
        problems = []
        tables = set()
        for name, type_, table, sql in objects:
            if type_ == "table" and name in _TABLE_SQL:
                tables.add(name)
                if normalize_sql(sql) == _TABLE_SQL[name]:
                    continue
                if not re.match(r"(?i)\s*CREATE\s+TABLE", sql):
                    problems.append(f"{name} is a virtual table, where dsh has a table")
                    continue
                problems.append(_table_problem(name, self._columns(name)))
            elif name in _TABLE_SQL:
                problems.append(f"{name} is a {type_}, not a table")
            elif type_ in ("index", "trigger"):
                problems.append(f"an extra {type_} {_shown(name)} on {_shown(table)}")
            else:
                problems.append(f"an extra {type_} {_shown(name)}")
        named = {name for name, *_ in objects}
        problems += [f"no table {name}" for name in _TABLE_SQL if name not in named]
        return problems

    def _columns(self, table: str) -> list[tuple[Any, ...]]:
        return _columns_of(self._each(_COLUMNS_SQL, (table,), lambda _: f"the columns of {table}"))

    # -- content, once checked -------------------------------------------------
    def headers(self) -> list[tuple[dict[str, Any], list[str]]]:
        """Every session row as a JSONL-shaped header, with row-level problems."""
        self.check()
        cols = ", ".join(c for c, _ in _HEADER_COLUMNS)
        out = []
        for row in self._each(
            f"SELECT id, {cols}, incarnation, revision FROM sessions",
            (),
            lambda last: "its sessions" if last is None else f"its sessions, after {_shown(last)}",
        ):
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

    def session_count(self) -> int:
        """How many sessions the store holds, none of them read."""
        self.check()
        (count,) = self._one("counting its sessions", "SELECT count(*) FROM sessions") or (0,)
        return int(count)

    def data_blobs(self) -> Iterator[tuple[str, int, bytes]]:
        """(session id, row seq, data) of every row whose data is a BLOB (zstd, docs/format.md §1.3)."""
        self.check()
        for seq, session_id, blob in self._each(
            "SELECT seq, CAST(session_id AS BLOB), data FROM events WHERE typeof(data) = 'blob'",
            (),
            lambda last: "its data blobs" if last is None else f"its data blobs, after one of row seq {last}",
        ):
            yield session_id.decode("utf-8", "replace"), seq, blob  # a damaged id must not stop the count

    def rows(self, session_id: str) -> Iterator[tuple[Any, ...]]:
        """The session's rows in seq order: its columns as `decode_row` takes them, then the rowid."""
        self.check()
        return self._each(
            "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable, rowid "
            "FROM events WHERE session_id = ? ORDER BY seq",
            (session_id,),
            lambda last: (
                f"the rows of session {_shown(session_id)}" + ("" if last is None else f", after row seq {last}")
            ),
        )

    def row_at(self, rowid: int) -> tuple[Any, ...] | None:
        """The row at `rowid`, its columns as `decode_row` takes them but `seq`."""
        self.check()
        return self._one(
            f"the row at rowid {rowid}",
            "SELECT type, time, data, source_event_seqs, surface_op, ignorable FROM events WHERE rowid = ?",
            (rowid,),
        )

    def last_turn_end_row(self, session_id: str, max_data: int = DEFAULT_LIMITS.max_line_bytes) -> int | None:
        """Physical seq of the last row that decodes (its data within `max_data`) and holds a turn/end."""
        self.check()
        for row in self._each(
            "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable "
            "FROM events WHERE session_id = ? AND type = 'turn/end' ORDER BY seq DESC",
            (session_id,),
            lambda last: (
                f"the last turn/end of session {_shown(session_id)}"
                + ("" if last is None else f", before row seq {last}")
            ),
        ):
            try:
                if any(e["type"] == "turn/end" for e in decode_row(row, max_data)):
                    seq: int = row[0]  # the events table is STRICT, its seq INTEGER NOT NULL
                    return seq
            except RowError:
                continue
        return None


class SqliteScan:
    """One session of a store, scanned with dsh's `scanRows` rule."""

    def __init__(self, store: SqliteStore, session_id: str, limits: ReadLimits = DEFAULT_LIMITS) -> None:
        self.store = store
        self.session_id = session_id
        self.limits = limits
        self.state = ScanState()
        self.label = f"{store.path}#{session_id}"
        self._at: int | None = None  # the row being read, to locate damage
        # the rowid of each row read, by physical seq (ascending as the scan reads them; a damaged index
        # may hand one out of order, kept apart), so a reread reaches a row as the scan did
        self._seqs = array("q")
        self._rowids = array("q")
        self._strays: dict[int, int] = {}
        self._lost: dict[int, tuple[Any, ...]] | None = None  # see `_astray`

    def records(self) -> Iterator[Record]:
        """The rows in seq order; a database too damaged (or too slow) to read on is corruption where it stops."""
        try:
            yield from self._records()
        except StoreRefused as exc:
            code = "read-stopped" if isinstance(exc, ReadStopped) else "damaged-store"
            self.state.corrupt(code, exc.reason, Location(file=self.label, row=self._at))

    def _records(self) -> Iterator[Record]:
        self._at = None  # set here, not in `records`, which reads it once this generator stops
        try:
            committed_through = self.store.last_turn_end_row(self.session_id, self.limits.max_line_bytes)
            unread: StoreRefused | None = None
        except StoreRefused as exc:
            # dsh reads the rows in seq order and searches them in memory: the damage this search met
            # is told where that walk meets it, or, if the walk passes it, only where the search's answer
            # counts (a defect to tell committed from torn); the rows before it still show
            committed_through, unread = None, exc
        running = 0
        torn_from: int | None = None
        budget = DecodedBudget(self.limits.max_session_bytes)
        for stored in self.store.rows(self.session_id):
            row, rowid = stored[:7], stored[7]
            physical = row[0]
            if type(physical) is not int:  # STRICT, NOT NULL and the primary key: only damage makes it so
                raise StoreRefused(f"the database is damaged: a row after row seq {self._at} holds seq {physical!r}")
            self._at = physical
            self._remember(physical, rowid)
            loc = Location(file=self.label, row=physical)
            try:
                events = decode_row(row, self.limits.max_line_bytes, budget)
                reason = (
                    None
                    if torn_from is not None or events[0]["seq"] == running
                    else (f"row seq {events[0]['seq']} does not continue the log (expected {running})")
                )
            except SessionTooLarge:
                self.state.corrupt("too-large", self.limits.session_too_large(), loc)
                return
            except DataTooLarge:
                if torn_from is None:  # else it lies in a tail dsh drops, as any row there would
                    self.state.corrupt("line-too-long", self.limits.too_long(f"row seq {physical}'s data"), loc)
                    return
                events, reason = [], self.limits.too_long("its data")
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
        if unread is not None and torn_from is not None:
            self._at = None
            raise unread

    def _remember(self, physical: int, rowid: int) -> None:
        if not self._seqs or physical > self._seqs[-1]:
            self._seqs.append(physical)
            self._rowids.append(rowid)
        else:
            self._strays[physical] = rowid

    def read(self, physical: int) -> list[dict[str, Any]]:
        """The events of the row the scan read at `physical`, read again by its rowid (a damaged index can
        lose, to a lookup by seq, a row its walk in seq order found; and the seq the scan read is the
        index's, whatever the row holds). Raises ValueError when that row cannot be read again."""
        i = bisect_left(self._seqs, physical)
        found = i < len(self._seqs) and self._seqs[i] == physical
        rowid = self._rowids[i] if found else self._strays.get(physical)
        if rowid is None:
            raise ValueError(f"{self.label}: no row seq {physical} was read from this store")
        try:
            row = self.store.row_at(rowid)
        except StoreRefused:
            row = None
        if row is None:
            row = self._astray().get(physical)
        if row is None:
            raise ValueError(f"{self.label}: row seq {physical} can no longer be read (the store changed)")
        return decode_row((physical, *row), self.limits.max_line_bytes)

    def _astray(self) -> dict[int, tuple[Any, ...]]:
        """The rows a walk in seq order reads but a lookup by rowid misses, by physical seq, found once by
        walking again: damage to an interior page sends a lookup from the root astray, where a walk goes on
        from leaf to leaf. Only a damaged store has any, and these few are held."""
        if self._lost is None:
            lost: dict[int, tuple[Any, ...]] = {}
            try:
                for stored in self.store.rows(self.session_id):
                    try:
                        again = self.store.row_at(stored[7])
                    except StoreRefused:
                        again = None
                    if again is None:
                        lost[stored[0]] = stored[1:7]
            except StoreRefused:
                pass  # the walk stops at the damage, as the scan's did
            self._lost = lost
        return self._lost


def _interrupted(exc: Exception) -> bool:
    """A statement the progress handler stopped (sqlite3 names the error code on some errors only)."""
    return isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted"


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
