"""Hostile SQLite files through `check` and `render` (issue 15): a `sessions` view that never ends,
schemas that are not dsh's, damaged pages, a file cut short. Each answers in seconds with a located
refusal or finding, never a traceback, and what can be read still shows."""

from __future__ import annotations

import io
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from dsh_inspect.cli import run_check
from dsh_inspect.history.session import load_session
from dsh_inspect.history.transcript import transcript_rows
from dsh_inspect.log import sqlite_store
from dsh_inspect.log.sources import discover
from dsh_inspect.web.render import render_path

from tests.support.hostile_sqlite import (
    INTERIOR_INDEX,
    INTERIOR_TABLE,
    LEAF_TABLE,
    btree_pages,
    canonical,
    dsh_store,
    overwrite_page,
    page_size,
    recursive_view_store,
    root_page,
    shift_dividers,
    store_with_schema,
)

PROJECT = Path(__file__).resolve().parents[2]


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -m dsh_inspect ARGS` as a user runs it. A store that made it read forever (a recursive view)
    fails the test at `timeout` instead of holding it: the time it takes is not asserted, since a busy machine
    stretches it (the reading's own bounds are proved in process, with a tiny time limit)."""
    return subprocess.run(
        [sys.executable, "-m", "dsh_inspect", *args],
        check=False,
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def check_json(path: Path) -> dict:  # type: ignore[type-arg]
    out = io.StringIO()
    run_check([str(path)], as_json=True, out=out, err=io.StringIO())
    return orjson.loads(out.getvalue())  # type: ignore[no-any-return]


def test_the_recursive_view_fixture_never_ends_in_plain_sqlite(tmp_path: Path) -> None:
    """What the reader is up against: the listing query dsh runs does not come back."""
    path = recursive_view_store(tmp_path / "view.sqlite")
    conn = sqlite3.connect(path)
    deadline = time.monotonic() + 1
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        conn.execute("SELECT count(*) FROM sessions").fetchone()
    conn.close()


@pytest.mark.slow  # a `check` process
def test_check_refuses_a_recursive_sessions_view_at_once_naming_it(tmp_path: Path) -> None:
    path = recursive_view_store(tmp_path / "view.sqlite")
    done = cli("check", "--json", str(path))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (session,) = orjson.loads(done.stdout)["sessions"]
    verdict = session["verdict"]
    assert verdict["category"] == "refused"
    assert "the store's schema is not dsh's schema 17" in verdict["reason"]
    assert "sessions is a view, not a table" in verdict["reason"]


@pytest.mark.slow  # a `render` process
def test_render_of_a_recursive_sessions_view_writes_the_refusal(tmp_path: Path) -> None:
    path = recursive_view_store(tmp_path / "view.sqlite")
    done = cli("render", str(path), "-o", str(tmp_path / "out.html"))
    assert done.returncode == 0, done.stderr
    assert "sessions is a view, not a table" in (tmp_path / "out.html").read_text()


def _events_without(column: str) -> str:
    lines = canonical("events").splitlines()
    return "\n".join(line for line in lines if not line.strip().startswith(column + " "))


@pytest.mark.parametrize(
    ("statements", "said"),
    [
        pytest.param(
            [canonical("persistence_state"), canonical("sessions"), _events_without("surface_op")],
            "table events: no column surface_op",
            id="missing column",
        ),
        pytest.param(
            [
                canonical("persistence_state"),
                canonical("sessions").replace("revision         INTEGER NOT NULL", "revision INTEGER NOT NULL, x TEXT"),
                canonical("events"),
            ],
            "table sessions: an extra column 'x'",
            id="extra column",
        ),
        pytest.param(
            [
                canonical("persistence_state"),
                canonical("sessions"),
                canonical("events").replace("data              ANY NOT NULL", "data TEXT NOT NULL"),
            ],
            "column data declared TEXT NOT NULL, where dsh declares ANY NOT NULL",
            id="column type",
        ),
        pytest.param(
            [canonical("persistence_state"), canonical("sessions"), canonical("events").replace(" STRICT", "")],
            "table events: dsh's columns, but a constraint or table option that is not dsh's",
            id="not strict",
        ),
        pytest.param(
            [canonical("sessions"), canonical("events")],
            "no table persistence_state",
            id="missing table",
        ),
        pytest.param(
            [
                canonical("persistence_state"),
                canonical("sessions"),
                canonical("events"),
                "CREATE TRIGGER t AFTER INSERT ON events BEGIN DELETE FROM sessions; END",
            ],
            "an extra trigger 't' on 'events'",
            id="trigger",
        ),
        pytest.param(
            [
                canonical("persistence_state"),
                canonical("sessions"),
                canonical("events"),
                "CREATE VIEW v AS SELECT * FROM events",
            ],
            "an extra view 'v'",
            id="view",
        ),
        pytest.param(
            [
                canonical("persistence_state"),
                "CREATE VIEW sessions AS SELECT * FROM persistence_state",
                canonical("events"),
            ],
            "sessions is a view, not a table",
            id="sessions a view",
        ),
    ],
)
def test_a_schema_that_is_not_dshs_is_refused_saying_what_differs(
    tmp_path: Path, statements: list[str], said: str
) -> None:
    path = store_with_schema(tmp_path / "store.sqlite", statements)
    (session,) = check_json(path)["sessions"]
    verdict = session["verdict"]
    assert verdict["category"] == "refused"
    assert verdict["reason"].startswith("the store's schema is not dsh's schema 17")
    assert said in verdict["reason"]


def test_a_schema_of_many_objects_names_a_few_and_counts_the_rest(tmp_path: Path) -> None:
    extra = [f"CREATE VIEW v{n} AS SELECT 1" for n in range(30)]
    path = store_with_schema(
        tmp_path / "store.sqlite", [canonical("persistence_state"), canonical("sessions"), canonical("events"), *extra]
    )
    (session,) = check_json(path)["sessions"]
    assert "an extra view 'v0'; an extra view 'v1'" in session["verdict"]["reason"]
    assert session["verdict"]["reason"].endswith("; and 26 more")


def test_a_read_past_the_time_limit_is_refused_saying_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema too large to parse within the limit (here made 2 ms; SQLite takes some 20 ms over these
    3,000 views) is refused when the file is opened."""
    views = [f"CREATE VIEW v{n} AS SELECT {n} AS a, 'x' AS b" for n in range(3000)]
    path = store_with_schema(tmp_path / "store.sqlite", [canonical("persistence_state"), *views])
    monkeypatch.setattr(sqlite_store, "READ_SECONDS", 0.002)
    doc = check_json(path)
    assert doc["sessions"] == []
    (refused,) = doc["refused"]
    assert "the store took longer than 0.002 s to read (opening it)" in refused["reason"]


# -- damaged pages --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two sessions of 60 turns, their rows on two-level trees, one turn's prompt on overflow pages."""
    path = tmp_path_factory.mktemp("store") / "store.sqlite"
    return dsh_store(path, ("s1", "s2"), turns=60, prompt="Read a.txt " * 60)


def _pages(path: Path, name: str, kind: int) -> list[int]:
    return [n for n, k in btree_pages(path.read_bytes(), root_page(path, name)) if k == kind]


def _damaged(store: Path, tmp_path: Path, how: str) -> Path:
    path = tmp_path / f"{how}.sqlite"
    shutil.copy(store, path)
    leaves = _pages(path, "events", LEAF_TABLE)
    middle = leaves[len(leaves) // 2]
    if how == "events leaf zeroed":
        overwrite_page(path, middle)
    elif how == "events leaf garbage":
        overwrite_page(path, middle, b"\xde\xad\xbe\xef")
    elif how == "events leaf header":
        data = bytearray(path.read_bytes())
        at = (middle - 1) * page_size(data)
        data[at : at + 8] = b"\x0d\xff\xff\xff\xff\xff\xff\xff"  # a cell count and offsets past the page
        path.write_bytes(bytes(data))
    elif how == "table dividers shifted":
        (interior,) = _pages(path, "events", INTERIOR_TABLE)
        shift_dividers(path, interior)
    elif how == "index dividers shifted":  # issue 15's IndexError: a lookup by seq misses rows a walk found
        (interior,) = _pages(path, "sqlite_autoindex_events_1", INTERIOR_INDEX)
        shift_dividers(path, interior)
    elif how == "index root zeroed":
        overwrite_page(path, root_page(path, "sqlite_autoindex_events_1"))
    elif how == "schema page garbage":
        data = bytearray(path.read_bytes())
        data[100 : page_size(data)] = b"\x01" * (page_size(data) - 100)
        path.write_bytes(bytes(data))
    elif how == "cut at half":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "cut mid-page":
        path.write_bytes(path.read_bytes()[: (middle - 1) * page_size(path.read_bytes()) + 1000])
    else:
        raise AssertionError(how)
    return path


DAMAGE = [
    "events leaf zeroed",
    "events leaf garbage",
    "events leaf header",
    "table dividers shifted",
    "index dividers shifted",
    "index root zeroed",
    "schema page garbage",
    "cut at half",
    "cut mid-page",
]


@pytest.mark.slow  # a `check` process for each damage
@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_store_is_checked_without_a_traceback(store: Path, tmp_path: Path, how: str) -> None:
    path = _damaged(store, tmp_path, how)
    done = cli("check", "--json", str(path))
    assert "Traceback" not in done.stderr, done.stderr
    doc = orjson.loads(done.stdout)
    assert doc["sessions"] or doc["refused"]
    for session in doc["sessions"]:
        if not session["verdict"]["accepted"]:
            assert session["verdict"]["reason"] and session["verdict"]["location"], session  # located
    for refused in doc["refused"]:
        assert refused["reason"]


@pytest.mark.parametrize("how", DAMAGE)
def test_every_event_of_a_damaged_store_reads_again_as_its_scan_read_it(store: Path, tmp_path: Path, how: str) -> None:
    """Rows, events, message bodies and the rendered file: a view rereads events long after the scan,
    and damage must not make a reread fail where the scan read (the IndexError of issue 15)."""
    path = _damaged(store, tmp_path, how)
    found = discover([str(path)])
    assert found.sources or (found.refused and all(r.reason for r in found.refused)), "read, or refused with a reason"
    for source in found.sources:
        log = load_session(source)
        events = list(log.events())
        assert [e.seq for e in events] == list(range(log.event_count))
        assert [log.event(seq) for seq in reversed(range(log.event_count))][::-1] == events, "read again, backwards"
        _, rows = transcript_rows(log)
        assert sum(row.seq < log.event_count and row.outside is None for row in rows) >= min(1, log.event_count)
        if source.member is not None:
            assert "</html>" in render_path(str(path), session=source.member)


def test_a_damaged_leaf_refuses_at_the_row_before_and_shows_the_rows_before_it(store: Path, tmp_path: Path) -> None:
    path = _damaged(store, tmp_path, "events leaf garbage")
    logs = [load_session(s) for s in discover([str(path)]).sources]
    damaged = [log for log in logs if log.verdict.category == "refused"]
    assert damaged, [log.verdict for log in logs]
    for log in damaged:
        assert "the database cannot be read" in log.verdict.reason
        assert "database disk image is malformed" in log.verdict.reason
        assert log.verdict.location is not None and log.verdict.location.file == log.source.label
        assert log.event_count > 0  # the rows before the damaged page still show
    assert any(log.verdict.location is not None and log.verdict.location.row is not None for log in damaged)


def test_a_lookup_sent_astray_still_rereads_what_the_walk_read(tmp_path: Path) -> None:
    """Shifted dividers of the events table of one session: the walk in seq order goes from leaf to leaf
    and meets every row (dsh would load the session), while half of them cannot be found by rowid from
    the root, as a reread of one event looks."""
    intact = dsh_store(tmp_path / "intact.sqlite", turns=60)
    path = tmp_path / "shifted.sqlite"
    shutil.copy(intact, path)
    (interior,) = _pages(path, "events", INTERIOR_TABLE)
    shift_dividers(path, interior)
    conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    rowids = [r for (r,) in conn.execute("SELECT rowid FROM events ORDER BY seq")]
    lost = [r for r in rowids if conn.execute("SELECT 1 FROM events WHERE rowid = ?", (r,)).fetchone() is None]
    conn.close()
    assert lost, "the damage must send some lookups astray"
    (source,) = discover([str(path)]).sources
    log = load_session(source)
    assert log.verdict.category == "accepted"
    (whole,) = discover([str(intact)]).sources
    assert [e.raw for e in log.events()] == [e.raw for e in load_session(whole).events()]
