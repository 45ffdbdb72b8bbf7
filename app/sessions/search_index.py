"""Search across every loaded session: a SQLite FTS5 index of the words each row shows.

Each row is indexed with what in-session search reads of it (`session_search.shown`: its words, a
context row's form) and the facets its facts give (kind, tool, `reports_error`), so a row is found
across sessions exactly when the session page would find it. The trigram tokenizer matches any substring of three
characters or more in any script (Chinese has no spaces to split words at); shorter queries scan
the same table with `LIKE` (docs/decisions/0008-cross-session-search.md).

The index is kept per file version: a source whose file is as it was is not read; a log that only
grew is read again, but only its rows that changed are written (each row is kept under its key with
a signature of what it draws on, and a row that drew on nothing past the events stored then is
settled); a rewritten log is indexed afresh. `CorpusIndex` is the whole interface a store of hits
needs (`stale`, `update`, `forget`, `query`), so another backend can stand in for SQLite.
"""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing
import os
import re
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from markupsafe import Markup, escape

from ..history.prompts import first_prompt
from ..history.row_facts import wall_clock
from ..history.session import load_session
from ..history.transcript import KIND_FAMILIES, Row
from ..log.plaintext import DEFAULT_LIMITS, ReadLimits
from ..log.records import NotASessionLog
from ..log.sources import RecordChanged, SessionSource
from .priority import ELSEWHERE_BYTES, FORK_SERVER, Elsewhere, background_process
from .registry import APPEND_ONLY, Entry, FileVersion, Mark, appended, file_version, mark_at
from .session_search import row_shown
from .transcript import Transcript, build_transcript

# 2: fingerprints of the whole prefix read, long message ids anchored by handle; 3: tool asks; 4: where a row is
# (its step and time) and each session's first prompt, which every hit names; 5: no FTS5 column sizes
SCHEMA_VERSION = "5"
INDEX_FILE = "search-index.sqlite3"  # in the data dir, beside the uploads
TRIGRAM = 3  # the shortest query the trigram index answers; shorter ones scan (`LIKE`)
SNIPPET_CHARS = 160  # about two lines of context around the first match
BATCH = 100  # sessions indexed per commit: what a crash can cost, and how long a query may wait
WRITE_WAIT_SECONDS = (
    60.0  # the writer (the index worker, nobody waits on it) waits this long for another process's pass
)
# Stale sessions that make reading them on every core worth a process pool's start (tens of ms, more for the
# first pool of a process, which starts the fork server): a first search, not the few a live log touches.
FAN_OUT_FROM = 64
# A log up to this long keeps its events as its read parsed them while it is indexed: its rows and their words
# ask for each event again, and a reread of each would parse it twice (a longer log is read again instead).
KEEP_BYTES = 4 << 20
FAN_OUT_CHUNK = 8  # sessions a reading process is handed at a time: fewer round trips, still an even spread
AHEAD_BYTES = 32 << 20  # file bytes the pool may read ahead of the writing, past two chunks per process
WRITE_ROWS = 4096  # rows written to the index at a time (their words worked out for them alone)
HITS = 200  # hits a query returns at most (each counted in `total` all the same)
# Matching rows a query counts at most, the first in the index's own order; the hits are the first `HITS` of
# those in session and row order. Counting and sorting every match cost a common word's search what its number
# of matches made it, and so whatever others had uploaded (docs/decisions/0047-a-search-counts-to-a-bound.md).
COUNTED = 1000
# What one search may cost (issue 33): its phrase at most this long, its query at most this long on either
# index, past which it stops and says so; a search cannot hold an index for others.
MAX_QUERY = 1000
QUERY_SECONDS = 5.0
# control characters a phrase never matches (row text keeps tabs and line ends); PostgreSQL refuses a NUL
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class SearchTooCostly(Exception):
    """A search stopped at `QUERY_SECONDS`: the answer says so, and how to narrow it."""

    def __init__(self) -> None:
        super().__init__(
            f"the search took longer than {QUERY_SECONDS:g} s and was stopped: ask for a longer phrase, a kind "
            "of row or a tool"
        )


AUTOMERGE = 16  # FTS5 segments of one level merged at once (its default is 4; `crisismerge` stays 16)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
    id INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,  -- the file (absolute path) and its member, if any
    upload TEXT,                    -- the digest of the upload holding it
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,
    fingerprint BLOB NOT NULL,      -- of the bytes read (registry.fingerprint): an append keeps it, a rewrite not
    events INTEGER NOT NULL,        -- the events stored when it was indexed
    title TEXT,
    first_prompt TEXT               -- on one line (history/prompts.py)
);
CREATE TABLE IF NOT EXISTS rows(
    id INTEGER PRIMARY KEY,         -- the rowid of its text in row_text
    source INTEGER NOT NULL REFERENCES sources(id),
    key TEXT NOT NULL,              -- the row's key in its transcript
    signature BLOB NOT NULL,        -- what the row draws on: kind, events, anchor
    settled INTEGER NOT NULL,       -- drew on nothing past the events stored: an append leaves it as it is
    anchor TEXT NOT NULL, kind TEXT NOT NULL, form TEXT, tool TEXT, error INTEGER NOT NULL, seq INTEGER NOT NULL,
    step TEXT,                      -- the step it happened in (`turn.step`), None outside any
    at INTEGER                      -- its event's time (epoch ms), None when the log carries none
);
CREATE INDEX IF NOT EXISTS rows_by_source ON rows(source, seq);
-- no column sizes (`columnsize = 0`): only bm25 ranking reads them, and hits come in session and row order; not
-- writing one per row took a tenth off writing W1's index
CREATE VIRTUAL TABLE IF NOT EXISTS row_text USING fts5(text, tokenize = 'trigram', columnsize = 0);
-- merge segments 16 at a time, not 4: a first index of W1 leaves a dozen, and merging them as they came cost a
-- fifth of writing it, for no query faster (a query reads them all in the same ~2 ms)
INSERT INTO row_text(row_text, rank) VALUES ('automerge', {AUTOMERGE});
INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA_VERSION}');
"""


@functools.lru_cache(maxsize=1 << 16)  # asked for every loaded session on every search
def identity(source: SessionSource) -> str:
    """What names a source in the index across servers and runs: its file's absolute path, and its member."""
    path = os.path.abspath(source.path)
    return path if source.member is None else f"{path}\0{source.member}"


@dataclass(frozen=True, slots=True)
class IndexUpdate:
    """What one update wrote: rows whose text was extracted and written, rows kept as they were, rows removed."""

    written: int
    kept: int
    removed: int
    whole: bool  # indexed afresh (new or rewritten), not read on from an append


@dataclass(frozen=True, slots=True)
class Snippet:
    """A stretch of a row's text around its matches, whitespace runs shown as one space; `marks` are
    the matches' [start, end) offsets in `text`, in characters."""

    text: str
    marks: tuple[tuple[int, int], ...]

    def html(self) -> Markup:
        """The snippet escaped, each match in `<mark>`: the text is the log's, so untrusted."""
        out, at = [], 0
        for start, end in self.marks:
            out += [escape(self.text[at:start]), Markup("<mark>"), escape(self.text[start:end]), Markup("</mark>")]
            at = end
        out.append(escape(self.text[at:]))
        return Markup("").join(out)

    def bracketed(self, before: str, after: str) -> str:
        """The snippet with each match between `before` and `after`, control characters shown as `\\xNN`
        (for a terminal: a log's escape sequences are never written out as they are)."""
        out, at = [], 0
        for start, end in self.marks:
            out += [visible(self.text[at:start]), before, visible(self.text[start:end]), after]
            at = end
        out.append(visible(self.text[at:]))
        return "".join(out)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"\s+")


def visible(text: str) -> str:
    """`text` with its control characters shown as `\\xNN`: what a log holds never drives a terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def snippet(text: str, needle: str, width: int = SNIPPET_CHARS) -> Snippet:
    """`text` around the first case-insensitive match of `needle`, every match in it marked; the text's
    start when `needle` is empty or not found as Python folds case."""
    found = [m.span() for m in re.finditer(re.escape(needle), text, re.IGNORECASE)] if needle else []
    first, last = found[0] if found else (0, 0)
    start = max(0, min(first - width // 3, len(text) - width))  # a short text shows whole
    if start > 0:  # begin at a word when one starts near
        space = text.find(" ", start, first)
        start = space + 1 if space != -1 else start
    end = min(len(text), max(start + width, last))
    pieces: list[str] = ["…"] if start > 0 else []
    marks: list[tuple[int, int]] = []
    length, at = len(pieces), start
    for s, e in (span for span in found if span[1] <= end):
        gap, match = _SPACES.sub(" ", text[at:s]), _SPACES.sub(" ", text[s:e])
        marks.append((length + len(gap), length + len(gap) + len(match)))
        pieces += [gap, match]
        length += len(gap) + len(match)
        at = e
    pieces.append(_SPACES.sub(" ", text[at:end]) + ("…" if end < len(text) else ""))
    return Snippet("".join(pieces), tuple(marks))


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching row of an indexed session, and where it is: its session's title and first prompt, its step
    and its time."""

    identity: str
    title: str | None
    first_prompt: str | None
    anchor: str
    kind: str
    seq: int
    step: str | None
    at: int | None
    form: str | None
    tool: str | None
    error: bool
    snippet: Snippet


@dataclass(frozen=True, slots=True)
class Found:
    """A query's hits in session and row order, the first `HITS` of `total`, over `sessions` sessions; when
    counting stopped at `COUNTED` (`counted_all` false), `total` and `sessions` are at least these, and the hits
    are the first of the rows counted."""

    hits: list[Hit]
    total: int
    sessions: int
    counted_all: bool = True


def counted_found(hits: list[Hit], sessions: Sequence[object]) -> Found:
    """A query's answer from its hits and the session of each match it took (the first `COUNTED` + 1 in its index's
    order, as both indexes take them): one more than `COUNTED` means counting stopped there."""
    kept = sessions[:COUNTED]
    return Found(hits, len(kept), len(set(kept)), len(sessions) <= COUNTED)


@dataclass(frozen=True, slots=True)
class Query:
    """What a search asks for: a text (a literal phrase, matched as a substring, any case) and facets."""

    q: str = ""
    kind: str = ""
    form: str = ""
    tool: str = ""
    errors: bool = False

    @property
    def needle(self) -> str:
        """The phrase looked for: control characters no row shows (a NUL, say) dropped, ends trimmed."""
        return _CONTROL.sub("", self.q).strip()

    @property
    def empty(self) -> bool:
        return not (self.needle or self.kind or self.form or self.tool or self.errors)

    def facet_clauses(self, mark: str) -> tuple[list[str], list[object]]:
        """The WHERE clauses of the facets asked for, on a table of rows `r`, and their arguments, each in
        placeholder `mark` (`?` for SQLite, `%s` for PostgreSQL): both indexes filter alike."""
        where: list[str] = []
        args: list[object] = []
        if self.kind:
            kinds = sorted(KIND_FAMILIES.get(self.kind, frozenset({self.kind})))
            where.append(f"r.kind IN ({', '.join([mark] * len(kinds))})")
            args += kinds
        if self.form:
            where.append(f"r.form = {mark}")
            args.append(self.form)
        if self.tool:
            where.append(f"r.tool = {mark}")
            args.append(self.tool)
        if self.errors:
            where.append("r.error")
        return where, args


def fts_phrase(text: str) -> str:
    """`text` as one FTS5 phrase: quotes doubled, so no operator, column filter or `*` in it is obeyed."""
    return '"' + text.replace('"', '""') + '"'


def like_pattern(text: str) -> str:
    """`text` as a LIKE pattern matching it anywhere, its `%`, `_` and `\\` taken literally (ESCAPE '\\')."""
    return "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"


def _signature(row: Row, anchor: str) -> bytes:
    """What a row's text is made of: the same signature over the same stored events means the same text."""
    finding = (row.diagnostic.code, row.diagnostic.message) if row.diagnostic is not None else None
    parts = (row.kind, row.seq, row.links, anchor, row.outside, finding)
    return hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=12).digest()


def _settled(row: Row, stored: int) -> bool:
    """Whether nothing that may come later can change the row: it draws only on events stored now
    (crash closers, records after a defect and findings about the tail may all go when the log grows)."""
    return row.diagnostic is None and row.outside is None and max((row.last, *row.related)) < stored


def _row_keys(rows: Sequence[Row]) -> list[str]:
    """Each row's key, made unique in its transcript by its occurrence should two rows share one."""
    seen: dict[str, int] = {}
    keys = []
    for row in rows:
        n = seen.get(row.key, 0)
        seen[row.key] = n + 1
        keys.append(row.key if n == 0 else f"{row.key}#{n}")
    return keys


# a row's form, tool and error mark, its time (epoch ms, None for none), and the words it shows
Words = tuple[str | None, str | None, bool, int | None, str]


class _RowWords(Sequence[Words]):
    """The words of a transcript's rows, each worked out when asked: a log that grew needs only its new rows'."""

    def __init__(self, t: Transcript) -> None:
        self._t = t

    def __len__(self) -> int:
        return len(self._t.rows)

    @overload
    def __getitem__(self, i: int) -> Words: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Words]: ...
    def __getitem__(self, i: int | slice) -> Words | Sequence[Words]:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        return row_words(self._t, self._t.rows[i])


@dataclass(frozen=True, slots=True)
class SessionRows:
    """What the index keeps of one read of a session, column by column (row i is the i-th of each): plain values
    a reading process can send back (`FanOut`)."""

    title: str | None
    first_prompt: str | None
    stored: int  # the events stored, 0 for a file that reads as no session log
    keys: list[str]
    signatures: list[bytes]
    settled: list[bool]
    anchors: list[str]
    kinds: list[str]
    seqs: list[int]
    steps: list[str | None]
    words: Sequence[Words]


def _steps(rows: Sequence[Row]) -> list[str | None]:
    """The step each row happened in (`turn.step`), which a hit names: a row's own (a step, a call, an answer),
    else that of the step it follows in its turn (a context or a tool's result); None before a turn's first."""
    out: list[str | None] = []
    at: str | None = None
    for row in rows:
        at = row.step or (None if row.kind == "turn" else at)
        out.append(at)
    return out


def session_rows(t: Transcript | None, *, words_now: bool = False) -> SessionRows:
    """The index's rows of transcript `t` (none for a file that reads as no session log); their words worked out
    as the index asks for them, or all at once (`words_now`, for a reading process)."""
    if t is None:
        return SessionRows(None, None, 0, [], [], [], [], [], [], [], [])
    stored = t.log.stored_count if t.log.header else 0
    words: Sequence[Words] = _RowWords(t)
    return SessionRows(
        t.log.title,
        first_prompt(t.log),
        stored,
        _row_keys(t.rows),
        [_signature(row, anchor) for row, anchor in zip(t.rows, t.anchors, strict=True)],
        [_settled(row, stored) for row in t.rows],
        t.anchors,
        [row.kind for row in t.rows],
        [row.seq for row in t.rows],
        _steps(t.rows),
        list(words) if words_now else words,
    )


class CorpusIndex:
    """The search index of every loaded session, in one SQLite file (or in memory); thread-safe."""

    def __init__(self, path: str | Path | None) -> None:
        """`path` is the index file, made when missing; None keeps it in memory. An index of another
        schema version, or one SQLite cannot read, is dropped and made anew (it is derived data)."""
        self.path = str(path) if path is not None else ":memory:"
        self._lock = threading.Lock()
        self._batching = False  # inside `batch`: updates join its transaction
        # one writer at a time, a batch or an update (queries go on meanwhile): two searches that found the same
        # stale session must not both insert it
        self._indexing = threading.RLock()
        # one process pool at a time (`bring_up_to_date`): two first searches must not both read every session
        self.fanning = threading.Lock()
        self._db = self._open()
        # searches read through connections of their own, one a thread, so they run side by side and beside a
        # pass that writes (WAL: each sees the index as last committed); an index in memory has one connection
        self._readers = threading.local()
        self._opened: list[sqlite3.Connection] = []
        # the indexed versions as last committed, and what told they were current (`versions`): one connection
        # of its own, since SQLite's data_version counts commits per connection
        self._held_lock = threading.Lock()
        self._watch: sqlite3.Connection | None = None
        self._held: tuple[object, dict[str, FileVersion]] | None = None

    def _open(self) -> sqlite3.Connection:
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=WRITE_WAIT_SECONDS, check_same_thread=False, isolation_level=None)
        try:
            version = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        except sqlite3.DatabaseError:
            version = None
        if (version is not None and version[0] != SCHEMA_VERSION) or self._unreadable(db):
            db.close()
            for suffix in ("", "-wal", "-shm"):
                Path(self.path + suffix).unlink(missing_ok=True)
            db = sqlite3.connect(self.path, timeout=WRITE_WAIT_SECONDS, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")  # derived data: a crash costs a reindex, never a wrong answer
        db.executescript(_SCHEMA)
        return db

    @staticmethod
    def _unreadable(db: sqlite3.Connection) -> bool:
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return False
        except sqlite3.DatabaseError:
            return True

    def close(self) -> None:
        with self._lock:
            self._db.close()
            for reader in self._opened:
                reader.close()
        with self._held_lock:
            if self._watch is not None:
                self._watch.close()

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """A connection to read the index as last committed, for this thread alone; the one connection,
        locked, for an index in memory."""
        if self.path == ":memory:":
            with self._lock:
                yield self._db
            return
        reader: sqlite3.Connection | None = getattr(self._readers, "db", None)
        if reader is None:
            reader = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            self._readers.db = reader
            self._opened.append(reader)  # (list.append is atomic: no lock a writer may hold)
        yield reader

    # -- keeping it up to date ------------------------------------------------------------

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Updates in one transaction: an FTS5 commit flushes and merges its segments, which, paid once per
        session, was a sixth of the cost of indexing a thousand small ones."""
        with self._indexing:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")  # the write lock first: processes sharing the file wait, not fail
                self._batching = True
            try:
                yield
            except BaseException:
                with self._lock:
                    self._batching = False
                    self._db.rollback()
                raise
            with self._lock:
                self._batching = False
                self._db.commit()

    @contextmanager
    def _writing(self, *, undone: bool = False) -> Iterator[sqlite3.Connection]:
        """The connection, locked, in a transaction: the batch's, or one of its own. `undone`: inside a batch, in a
        savepoint that an error rolls back (an FTS5 savepoint flushes its pending terms, so only where needed)."""
        with self._lock:
            if self._batching and not undone:
                yield self._db
                return
            if self._batching:
                self._db.execute("SAVEPOINT one")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK TO one")
                    raise
                finally:
                    self._db.execute("RELEASE one")
                return
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")  # the write lock first: processes sharing the file wait, not fail
                yield self._db

    def stale(self, source: SessionSource, version: FileVersion) -> bool:
        """Whether `source` at `version` needs indexing: never indexed, or its file changed since."""
        with self._lock:
            found = self._db.execute(
                "SELECT size, mtime_ns, inode FROM sources WHERE identity = ?", (identity(source),)
            ).fetchone()
        return found is None or tuple(found) != version

    def versions(self) -> dict[str, FileVersion]:
        """The file version each indexed source was indexed at, by identity, as last committed (what a search
        reads). Kept until the index changes (a commit by any connection or process), so a search's count of
        pending sessions does not read a thousand rows again, each a wait for the GIL on a busy server."""
        with self._held_lock:
            if self.path == ":memory:":  # one connection: its own changes, none while a batch is open
                with self._lock:
                    mark: object = None if self._batching else self._db.total_changes
                    if self._held is not None and mark is not None and self._held[0] == mark:
                        return self._held[1]
                    held = _versions_in(self._db)
            else:
                if self._watch is None:
                    self._watch = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
                mark = self._watch.execute("PRAGMA data_version").fetchone()[0]  # read before: a commit
                if self._held is not None and self._held[0] == mark:  # meanwhile is read again next time
                    return self._held[1]
                held = _versions_in(self._watch)
            self._held = (mark, held) if mark is not None else None
        return held

    def pending(self, entries: Iterable[Entry], versions: Versions | None = None) -> list[Entry]:
        """Those of `entries` a pass has yet to index: never indexed, or changed since, as a search reads the
        index (the last committed pass)."""
        return [entry for entry, _ in changed(self.versions(), entries, versions or LOOKED_AT)]

    def update(self, entry: Entry, t: Transcript | None, mark: Mark) -> IndexUpdate:
        """Index `entry`'s transcript `t`, read at `mark` (taken before the read): only the rows that changed
        when the file only grew since it was last indexed; every row when it is new or was rewritten. `t` is
        None for a file that reads as no session log: it is held with no rows, not read again till it changes."""
        return self.write(entry, session_rows(t), mark)

    def write(self, entry: Entry, read: SessionRows, mark: Mark) -> IndexUpdate:
        """`update`, from the rows of a transcript (`session_rows`), which another process may have read."""
        with self._indexing:
            return self._update(entry, read, mark)

    def _update(self, entry: Entry, read: SessionRows, mark: Mark) -> IndexUpdate:
        source = entry.source
        name = identity(source)
        keys, signatures = read.keys, read.signatures
        with self._lock:
            known = self._db.execute(
                "SELECT id, size, mtime_ns, inode, fingerprint FROM sources WHERE identity = ?", (name,)
            ).fetchone()
            grown = known is not None and source.kind in APPEND_ONLY and self._grew(source, known, mark.version)
            before = (
                self._db.execute(
                    "SELECT key, id, signature, settled FROM rows WHERE source = ?", (known[0],)
                ).fetchall()
                if known is not None
                else []
            )
        settled = {key: (rid, sig) for key, rid, sig, done in before if done} if grown else {}
        kept = {
            key: settled[key][0]
            for key, sig in zip(keys, signatures, strict=True)
            if key in settled and settled[key][1] == sig
        }
        written = [i for i, key in enumerate(keys) if key not in kept]
        keep = set(kept.values())
        gone = [(rid,) for _, rid, _, _ in before if rid not in keep]
        # A short log's words are worked out before any row is written, so a file that changed meanwhile leaves
        # the index as it was; a long log's a few thousand rows at a time (all at once would hold its text twice
        # over), in a savepoint that undoes them if its file changed.
        short = len(written) <= WRITE_ROWS
        words = [read.words[i] for i in written] if short else None
        with self._writing(undone=not short) as db:
            if known is None:
                source_id = db.execute(
                    "INSERT INTO sources(identity, upload, size, mtime_ns, inode, fingerprint, events, title, "
                    "first_prompt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (name, entry.upload, *mark.version, mark.fingerprint, read.stored, read.title, read.first_prompt),
                ).lastrowid
            else:
                source_id = known[0]
                db.execute(
                    "UPDATE sources SET upload = ?, size = ?, mtime_ns = ?, inode = ?, fingerprint = ?, events = ?, "
                    "title = ?, first_prompt = ? WHERE id = ?",
                    (
                        entry.upload,
                        *mark.version,
                        mark.fingerprint,
                        read.stored,
                        read.title,
                        read.first_prompt,
                        source_id,
                    ),
                )
            db.executemany("DELETE FROM row_text WHERE rowid = ?", gone)
            db.executemany("DELETE FROM rows WHERE id = ?", gone)
            # a bare max() is read off the rowid b-tree's last page; wrapped in an expression it scans the table
            first = (db.execute("SELECT max(id) FROM rows").fetchone()[0] or 0) + 1
            for start in range(0, len(written), WRITE_ROWS):
                chunk = written[start : start + WRITE_ROWS]
                said = words if words is not None else [read.words[i] for i in chunk]  # (a short log: one chunk)
                rows = [(first + start + n, i, w) for n, (i, w) in enumerate(zip(chunk, said, strict=True))]
                db.executemany(
                    "INSERT INTO rows(id, source, key, signature, settled, anchor, kind, seq, step, form, tool, error, "
                    "at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            rid,
                            source_id,
                            keys[i],
                            signatures[i],
                            read.settled[i],
                            read.anchors[i],
                            read.kinds[i],
                            read.seqs[i],
                            read.steps[i],
                            *w[:-1],
                        )
                        for rid, i, w in rows
                    ],
                )
                db.executemany("INSERT INTO row_text(rowid, text) VALUES (?, ?)", [(rid, w[-1]) for rid, _, w in rows])
        return IndexUpdate(len(written), len(kept), len(gone), not grown)

    @staticmethod
    def _grew(source: SessionSource, known: tuple[int, int, int, int, bytes], now: FileVersion) -> bool:
        try:
            return appended(source, Mark((known[1], known[2], known[3]), known[4]), now)
        except OSError:
            return False

    def forget(self, sources: Iterable[SessionSource]) -> int:
        """Remove these sources and every row of theirs (a deleted upload, a vanished file); how many were held."""
        names = [(identity(s),) for s in sources]
        # after any update under way: one that read the source before it went must not write it back after
        with self._indexing, self._writing() as db:
            ids = [
                (found[0],)
                for (name,) in names
                if (found := db.execute("SELECT id FROM sources WHERE identity = ?", (name,)).fetchone())
            ]
            for (source_id,) in ids:
                db.execute("DELETE FROM row_text WHERE rowid IN (SELECT id FROM rows WHERE source = ?)", (source_id,))
            db.executemany("DELETE FROM rows WHERE source = ?", ids)
            db.executemany("DELETE FROM sources WHERE id = ?", ids)
        return len(ids)

    def counts(self, source: SessionSource) -> tuple[int, int] | None:
        """The events and rows indexed of `source`, None when it is not indexed."""
        with self._lock:
            found = self._db.execute(
                "SELECT events, (SELECT count(*) FROM rows WHERE source = sources.id) FROM sources WHERE identity = ?",
                (identity(source),),
            ).fetchone()
        return None if found is None else (found[0], found[1])

    # -- asking it --------------------------------------------------------------------------

    @contextmanager
    def _deadline(self, db: sqlite3.Connection) -> Iterator[None]:
        """A query on `db` stopped at `QUERY_SECONDS` (SQLite's progress handler, asked every few thousand
        steps); raises SearchTooCostly then."""
        stop = time.monotonic() + QUERY_SECONDS
        db.set_progress_handler(lambda: int(time.monotonic() > stop), 10_000)
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "interrupt" in str(exc):
                raise SearchTooCostly() from None
            raise
        finally:
            db.set_progress_handler(None, 0)

    def query(self, query: Query, sources: Iterable[SessionSource], limit: int = HITS) -> Found:
        """The rows of `sources` matching `query`, counted up to `COUNTED` in the index's order, the first `limit`
        of those in session then row order."""
        if query.empty:
            return Found([], 0, 0)
        asked = [identity(s) for s in sources]
        where = ["s.identity IN (SELECT value FROM json_each(?))"]
        args: list[object] = [json.dumps(asked)]
        needle = query.needle
        # A phrase's rows come from FTS5 in rowid order, so the first COUNTED are found with no sort of every match.
        # A scan (a short phrase, facets alone) goes the same way, in rowid order, where most sessions are asked
        # for: it stops at the COUNTED-th match (SQLite would start from the sessions asked for, and sort every
        # match). For a few sessions of many (a reader of one project), their rows alone are read.
        if needle and len(needle) >= TRIGRAM:
            where.append("t.text MATCH ?")
            args.append(fts_phrase(needle))
        elif needle:
            where.append("t.text LIKE ? ESCAPE '\\'")
            args.append(like_pattern(needle))
        facets, facet_args = query.facet_clauses("?")
        where += facets
        args += facet_args
        order = "t.rowid" if needle else "r.id"
        with self._reading() as db, _snapshot(db), self._deadline(db):
            held = db.execute("SELECT count(*) FROM sources").fetchone()[0]
            join = "CROSS JOIN" if len(asked) * 2 >= held else "JOIN"
            matched = f"FROM row_text t {join} rows r ON r.id = t.rowid" if needle else "FROM rows r"
            counted = db.execute(
                f"SELECT r.id, s.identity, r.seq {matched} {join} sources s ON s.id = r.source "
                f"WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ?",
                [*args, COUNTED + 1],
            ).fetchall()
            first = sorted(counted[:COUNTED], key=lambda c: (c[1], c[2], c[0]))[:limit]
            found = db.execute(
                "SELECT r.id, s.identity, s.title, s.first_prompt, r.anchor, r.kind, r.seq, r.step, r.at, r.form, "
                "r.tool, r.error, t.text FROM rows r JOIN row_text t ON t.rowid = r.id JOIN sources s ON s.id = "
                "r.source WHERE r.id IN (SELECT value FROM json_each(?))",
                [json.dumps([c[0] for c in first])],
            ).fetchall()
        place = {c[0]: n for n, c in enumerate(first)}
        found.sort(key=lambda f: place[f[0]])
        hits = [
            Hit(name, title, prompt, anchor, kind, seq, step, at, form, tool, bool(error), snippet(text, needle))
            for _, name, title, prompt, anchor, kind, seq, step, at, form, tool, error, text in found
        ]
        return counted_found(hits, [c[1] for c in counted])


@contextmanager
def _snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """The index as committed when the first statement inside reads it, for every statement inside: a search's
    count and its hits' text agree though a pass writes meanwhile (a session indexed anew takes its rows' ids
    again). Inside a transaction already open (an index in memory, whose one connection a batch writes on),
    that transaction's view."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN")
    try:
        yield
    finally:
        db.execute("COMMIT")


def row_words(t: Transcript, row: Row) -> Words:
    """A row's facets (form, tool, error), its time and the words it shows, read as in-session search reads them
    (`session_search.shown`). Not through `session_search.searchable`, which also lower-cases the text and
    dumps raw event JSON, work that doubled the cost of indexing."""
    seen = row_shown(t.readable, row, words_only=True)  # a run row: its rows' words
    at = t.readable.event(row.seq).time if row.seq < t.readable.event_count else 0
    return seen.form, seen.tool, seen.error, wall_clock(at), seen.text


Reader = Callable[[Entry], tuple[Transcript | None, Mark] | None]


@dataclass(frozen=True, slots=True)
class FanOut:
    """Read many stale sessions at once on `workers` processes, afresh with `limits`, while this one writes
    what they read into the index. Taken only for `FAN_OUT_FROM` sessions or more, where a pool pays for
    its start; fewer are read here, by the reader given, but for logs of `ELSEWHERE_BYTES` or more, which
    `elsewhere` reads (when given): seconds of a process's time that its requests would wait behind."""

    workers: int
    limits: ReadLimits = DEFAULT_LIMITS
    elsewhere: Elsewhere | None = None


def bring_up_to_date(
    index: CorpusIndex,
    entries: Sequence[Entry],
    read: Reader,
    progress: Callable[[int, int, Entry], None] | None = None,
    fan_out: FanOut | None = None,
    versions: Versions | None = None,
) -> int:
    """Index every entry whose file changed since it was indexed (`read` gives its transcript, and the mark
    taken before reading it; None when it cannot be read); how many were indexed. `versions` tells the
    entries' file versions (by default, a look at each file)."""
    told = versions or LOOKED_AT
    stale = left = changed(index.versions(), entries, told)
    if fan_out is not None and fan_out.workers > 1 and len(stale) >= FAN_OUT_FROM and FORK_SERVER:
        with index.fanning:  # one pool at a time: a second search waits for it, then finds these indexed
            left = changed(index.versions(), entries, told)
            if len(left) >= FAN_OUT_FROM:
                try:
                    _index_on_every_core(index, left, fan_out, progress)
                    return len(stale)
                except BrokenProcessPool:  # a reading process died (killed, out of memory): read the rest here
                    left = changed(index.versions(), entries, told)
    elsewhere = fan_out.elsewhere if fan_out is not None else None
    limits = fan_out.limits if fan_out is not None else DEFAULT_LIMITS
    for start in range(0, len(left), BATCH):
        chunk = list(enumerate(left[start : start + BATCH], start + 1))
        if elsewhere is not None:
            # A large log is read elsewhere for seconds, then written in a transaction of its own: read inside the
            # batch's, it held the index's write lock all that time, and every other writer waited (the other
            # process's worker, a deleted upload's rows going), and so did every search waiting for them.
            large = [(n, (entry, version)) for n, (entry, version) in chunk if version[0] >= ELSEWHERE_BYTES]
            chunk = [(n, item) for n, item in chunk if item[1][0] < ELSEWHERE_BYTES]
            for n, (entry, version) in large:
                if progress is not None:
                    progress(n, len(left), entry)
                rows = elsewhere.run(read_rows, entry, limits) if index.stale(entry.source, version) else None
                if rows is not None:
                    index.write(entry, *rows)
        with index.batch():
            for n, (entry, version) in chunk:
                if progress is not None:
                    progress(n, len(left), entry)
                if not index.stale(entry.source, version):
                    continue  # another search indexed it while this one waited for the batch
                read_now = read(entry)
                if read_now is None:
                    continue
                try:
                    index.update(entry, *read_now)
                except RecordChanged:
                    continue  # its file changed while its words were read: read again on the next search
    return len(stale)


@dataclass(frozen=True, slots=True)
class Versions:
    """How entries' file versions are told: `known` as their caller keeps them (the registry keeps an upload's),
    `now` by a look at the file. A known version that differs from the indexed one is looked at again before
    the entry is taken as changed, so one kept from before a file grew costs a look, never a wrong count."""

    known: Callable[[Entry], FileVersion]
    now: Callable[[Entry], FileVersion]


def _looked_at(entry: Entry) -> FileVersion:
    return file_version(entry.source)


LOOKED_AT = Versions(_looked_at, _looked_at)  # nothing kept: a look at every file


def changed(
    indexed: dict[str, FileVersion], entries: Iterable[Entry], versions: Versions
) -> list[tuple[Entry, FileVersion]]:
    """The entries whose file changed since they were indexed (or were never), with their file's version."""
    stale = []
    for entry in entries:
        held = indexed.get(identity(entry.source))
        try:
            version = versions.known(entry)
            if version != held and versions.now is not versions.known:
                version = versions.now(entry)
        except OSError:
            continue  # gone: the registry forgets it when it looks again
        if version != held:
            stale.append((entry, version))
    return stale


def _versions_in(db: sqlite3.Connection) -> dict[str, FileVersion]:
    found = db.execute("SELECT identity, size, mtime_ns, inode FROM sources").fetchall()
    return {name: (size, mtime, inode) for name, size, mtime, inode in found}


def _index_on_every_core(
    index: CorpusIndex,
    stale: list[tuple[Entry, FileVersion]],
    fan_out: FanOut,
    progress: Callable[[int, int, Entry], None] | None,
) -> None:
    """`bring_up_to_date`'s loop with the reading done by a pool, chunk by chunk in entry order, ahead of the
    writing by a bounded number of file bytes (what is read and not yet written waits in this process's memory).
    The fork server imports this module once, so a pool's processes start with it loaded."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    chunks = [stale[i : i + FAN_OUT_CHUNK] for i in range(0, len(stale), FAN_OUT_CHUNK)]
    workers = min(fan_out.workers, len(chunks))
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=background_process, initargs=(os.getpid(),))
    try:
        ahead: deque[Future[list[tuple[SessionRows, Mark] | None]]] = deque()
        asked = iter(chunks)
        waiting = 0  # bytes of the files asked for and not yet written

        def ask() -> None:
            """Two chunks per process ahead of the writing, and more while their files are small (one process
            reading a long log must not leave the other idle), up to AHEAD_BYTES of them."""
            nonlocal waiting
            while len(ahead) < 2 * workers or waiting < AHEAD_BYTES:
                chunk = next(asked, None)
                if chunk is None:
                    return
                ahead.append(pool.submit(read_chunk, [entry for entry, _ in chunk], fan_out.limits))
                waiting += sum(version[0] for _, version in chunk)

        ask()
        n = 0
        per_batch = max(1, BATCH // FAN_OUT_CHUNK)  # a commit per BATCH sessions, as the serial loop makes
        for start in range(0, len(chunks), per_batch):
            with index.batch():
                for chunk in chunks[start : start + per_batch]:
                    found = ahead.popleft().result()
                    waiting -= sum(version[0] for _, version in chunk)
                    ask()
                    for (entry, version), read_now in zip(chunk, found, strict=True):
                        n += 1
                        if progress is not None:
                            progress(n, len(stale), entry)
                        if read_now is not None and index.stale(entry.source, version):
                            index.write(entry, *read_now)
    finally:
        pool.shutdown(cancel_futures=True)  # a failed write leaves no reads running on


def read_chunk(entries: list[Entry], limits: ReadLimits) -> list[tuple[SessionRows, Mark] | None]:
    """`read_rows` of each entry: what a reading process is handed, and sends back."""
    return [read_rows(entry, limits) for entry in entries]


def read_rows(entry: Entry, limits: ReadLimits = DEFAULT_LIMITS) -> tuple[SessionRows, Mark] | None:
    """`read_afresh`, as the index's rows with every row's words (None, like a file gone, for one that changed
    while its words were read: it is read again on the next search)."""
    found = read_afresh(entry, limits)
    if found is None:
        return None
    try:
        return session_rows(found[0], words_now=True), found[1]
    except RecordChanged:
        return None


def read_afresh(entry: Entry, limits: ReadLimits = DEFAULT_LIMITS) -> tuple[Transcript | None, Mark] | None:
    """`entry`'s transcript read from its file now, and the mark taken before; no transcript for a file that
    reads as no session log, None for one gone or unreadable now (tried again on the next search)."""
    try:
        mark = read_mark(entry.source)
    except OSError:
        return None
    try:
        return build_transcript(load_session(entry.source, limits=limits, keep_bytes=KEEP_BYTES)), mark
    except NotASessionLog:
        return None, mark
    except OSError:
        return None


def read_mark(source: SessionSource) -> Mark:
    """The mark of `source` as it is now, taken before reading it: a change during the read shows next time."""
    return mark_at(source, file_version(source))
