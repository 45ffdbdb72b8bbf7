"""SQLite files that attack a reader: a `sessions` view that never ends, schemas that are not dsh's,
damaged pages, and stores long enough that reading one takes a while. Each is a real file, made with
SQLite itself and then, for damage, by overwriting the bytes of chosen pages."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from dsh_inspect.log.sqlite_store import APPLICATION_ID, CANONICAL_SCHEMA, SCHEMA_VERSION

from tests.support.builders import LogBuilder, header
from tests.support.writers import batches_of, new_store, write_sqlite_session

# `sessions` as a view that recurses without end: any query of it (a listing, a count) never returns
RECURSIVE_SESSIONS = """CREATE VIEW sessions AS
WITH RECURSIVE r(id, version, created_at, cwd, parent_session, seed_length, origin, delegation_depth,
                 agent_preset, incarnation, revision) AS (
  SELECT 'a', 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, '00000000-0000-4000-8000-000000000000', 1
  UNION ALL SELECT id || 'a', 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, incarnation, 1 FROM r
)
SELECT * FROM r WHERE length(id) < 0"""

# B-tree page types (the SQLite file format, section 1.6)
INTERIOR_INDEX, INTERIOR_TABLE, LEAF_INDEX, LEAF_TABLE = 0x02, 0x05, 0x0A, 0x0D


def finish(conn: sqlite3.Connection) -> None:
    """Everything in the main file (no -wal beside it), as a store someone copied looks."""
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = delete")
    conn.close()


def dsh_store(path: Path, sessions: tuple[str, ...] = ("s1",), turns: int = 2, prompt: str = "Read a.txt") -> Path:
    conn = new_store(path)
    for n, sid in enumerate(sessions):
        log = LogBuilder(n)
        for turn in range(1, turns + 1):
            log.turn(turn, prompt)
        write_sqlite_session(conn, header(sid), batches_of(log.events, 9))
    finish(conn)
    return path


def store_with_schema(path: Path, statements: list[str]) -> Path:
    """dsh's identity pragmas over the schema `statements` (dsh's own, changed or not)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")  # one transaction: a schema of thousands of objects is written in a second
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    for statement in statements:
        conn.execute(statement)
    conn.execute("COMMIT")
    finish(conn)
    return path


def canonical(table: str) -> str:
    return next(s for s in CANONICAL_SCHEMA if s.split()[2] == table)


def recursive_view_store(path: Path) -> Path:
    """A store as dsh's but for `sessions`, a view whose query never ends."""
    return store_with_schema(path, [canonical("persistence_state"), RECURSIVE_SESSIONS, canonical("events")])


def long_store(path: Path, turns: int, session_id: str = "long") -> Path:
    """One session of `turns` short turns, written row by row in one transaction (quick to make, slow to read)."""
    conn = new_store(path)
    write_sqlite_session(conn, header(session_id), [])
    rows = []
    for turn in range(1, turns + 1):
        for kind, data in (
            ("turn/start", f'{{"turn":{turn}}}'),
            ("step/start", f'{{"turn":{turn},"step":1}}'),
            ("step/end", f'{{"turn":{turn},"step":1}}'),
            ("turn/end", f'{{"turn":{turn},"reason":{{"kind":"completed"}}}}'),
        ):
            rows.append((session_id, len(rows), kind, len(rows), data))
    conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, NULL, NULL, NULL)", rows)
    finish(conn)
    return path


def page_size(data: bytes) -> int:
    size = int.from_bytes(data[16:18], "big")
    return 65536 if size == 1 else size


def root_page(path: Path, name: str) -> int:
    with sqlite3.connect(path) as conn:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = ?", (name,)).fetchone()
    return int(root)


def btree_pages(data: bytes, root: int) -> list[tuple[int, int]]:
    """(page number, page type) of every page of the b-tree at `root`, parents before children."""
    size = page_size(data)
    out = []
    todo = [root]
    while todo:
        number = todo.pop(0)
        base = (number - 1) * size
        head = base + (100 if number == 1 else 0)
        kind = data[head]
        out.append((number, kind))
        if kind in (INTERIOR_INDEX, INTERIOR_TABLE):
            cells = int.from_bytes(data[head + 3 : head + 5], "big")
            pointers = [int.from_bytes(data[head + 12 + 2 * i : head + 14 + 2 * i], "big") for i in range(cells)]
            todo += [int.from_bytes(data[base + p : base + p + 4], "big") for p in pointers]
            todo.append(int.from_bytes(data[head + 8 : head + 12], "big"))
    return out


def overwrite_page(path: Path, number: int, content: bytes | None = None) -> None:
    """Page `number` overwritten whole: with `content` (repeated to fill it), or zeros."""
    data = bytearray(path.read_bytes())
    size = page_size(data)
    filler = (content or b"\0") * (size // len(content or b"\0") + 1)
    data[(number - 1) * size : number * size] = filler[:size]
    path.write_bytes(bytes(data))


def shift_dividers(path: Path, number: int) -> None:
    """Each divider of the interior page `number` made smaller by half the gap to the one before: a table
    page's rowid keys, an index page's `seq` (its second column). The tree still links every leaf, so a
    walk from leaf to leaf meets every row, but a lookup from the root is sent to the leaf before for the
    rows between a divider's new value and its old one (a lookup by seq through the index, by rowid
    through the table)."""
    data = bytearray(path.read_bytes())
    size = page_size(data)
    base = (number - 1) * size
    kind = data[base]
    assert kind in (INTERIOR_TABLE, INTERIOR_INDEX)
    cells = int.from_bytes(data[base + 3 : base + 5], "big")
    previous = 0
    for i in range(cells):
        at = base + int.from_bytes(data[base + 12 + 2 * i : base + 14 + 2 * i], "big") + 4
        if kind == INTERIOR_TABLE:
            key, length = _varint(data, at)
            data[at : at + length] = _padded_varint(_between(previous, key), length)
        else:  # the record (session_id TEXT, seq INTEGER, rowid): its seq, as wide as it is
            _, length = _varint(data, at)
            record = at + length
            head_size, length = _varint(data, record)
            sid_type, length_sid = _varint(data, record + length)
            seq_type, _ = _varint(data, record + length + length_sid)
            width = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}.get(seq_type)
            if width is None:  # seq 0 or 1, stored as a constant: nothing to shift
                continue
            value_at = record + head_size + (sid_type - 13) // 2
            key = int.from_bytes(data[value_at : value_at + width], "big", signed=True)
            data[value_at : value_at + width] = _between(previous, key).to_bytes(width, "big", signed=True)
        previous = key
    path.write_bytes(bytes(data))


def _between(previous: int, key: int) -> int:
    return max(previous + 1, key - (key - previous) // 2)


def _padded_varint(value: int, length: int) -> bytes:
    """`value` as a varint of exactly `length` bytes (leading empty groups, which SQLite reads as zeros)."""
    groups = [(value >> (7 * (length - 1 - i))) & 0x7F for i in range(length)]
    return bytes([*(0x80 | g for g in groups[:-1]), groups[-1]])


def _varint(data: bytearray, at: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, i + 1
    raise AssertionError("not a varint")
