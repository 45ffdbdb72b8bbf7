"""`dsh-inspect push` as a user runs it (docs/decisions/0024-push.md): a real CLI process against a real server
with an embedded store. A log pushed after each turn sends only its new bytes and the server's copy is the file,
byte for byte; a rewritten log is a new version beside the old; every session under a dsh root or a folder goes
once, a SQLite store and an export ZIP whole; what is held is not sent again, whatever the state file says.
(Exit statuses and tokens: test_push_exits.py; cut-off pushes: test_push_resume.py; --watch: test_push_watch.py.)"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from hashlib import sha256
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from dsh_inspect.log.dsh_root import encode_segment, project_key

from tests.support.builders import T0, LogBuilder, header
from tests.support.process import PROJECT
from tests.support.server import live_server
from tests.support.upload_model import log_bytes, phrase
from tests.support.uploads import events, export_zip_bytes, jsonl_bytes, sqlite_bytes
from tests.support.writers import batches_of, header_line, jsonl_batch, new_store, write_sqlite_session, zstd_frame

pytestmark = pytest.mark.slow  # each test runs `dsh-inspect push` processes against a server

MIB = 1 << 20

# -- helpers the other push tests share (test_push_exits.py, test_push_resume.py, test_push_watch.py) -------


def push_env(home: Path, token: str | None = None) -> dict[str, str]:
    """The CLI's environment: its cache folder (where the push state file lives) private to the test."""
    env = {k: v for k, v in os.environ.items() if k != "DSH_INSPECT_TOKEN"}
    env.update({"HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")})
    if token is not None:
        env["DSH_INSPECT_TOKEN"] = token
    return env


def push_args(paths: list[Path], url: str, *more: str) -> list[str]:
    return [sys.executable, "-m", "dsh_inspect", "push", *map(str, paths), "--to", url, *more]


def push(
    paths: list[Path], url: str, home: Path, *more: str, token: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`dsh-inspect push PATHS --to URL MORE…`, run to its end."""
    return subprocess.run(
        push_args(paths, url, *more),
        cwd=PROJECT,
        env=push_env(home, token),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def pushed(paths: list[Path], url: str, home: Path, *more: str, token: str | None = None) -> dict[str, Any]:
    """The `--json` object of a push that must exit 0."""
    done = push(paths, url, home, "--json", *more, token=token)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    tally: dict[str, Any] = orjson.loads(done.stdout)
    return tally


def json_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    tally: dict[str, Any] = orjson.loads(done.stdout)
    return tally


def state_files(home: Path) -> list[Path]:
    return sorted((home / "cache" / "dsh-inspect" / "push").glob("*.json"))


def raw(url: str, sid: str, headers: Mapping[str, str] | None = None) -> bytes | None:
    """The server's copy of session `sid` (its download), None when it holds none."""
    answer = httpx.get(f"{url}/sessions/{sid}/raw", headers=headers, timeout=120)
    return answer.content if answer.status_code == 200 else None


def twin(url: str, sid: str, headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    answer = httpx.get(f"{url}/api/sessions/{sid}", headers=headers, timeout=120)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def versions(url: str, sid: str, headers: Mapping[str, str] | None = None) -> list[list[str]]:
    """Each version of the session, oldest first, as its uploads' digests along the chain."""
    return [[u["digest"] for u in v["uploads"]] for v in twin(url, sid, headers)["versions"]]


def listed_ids(url: str, headers: Mapping[str, str] | None = None) -> set[str | None]:
    """The ids of the sessions the server lists (None for one whose log names none)."""
    return {s["id"] for s in httpx.get(f"{url}/api/sessions", headers=headers, timeout=60).json()["sessions"]}


def summary_of(url: str, sid: str) -> dict[str, Any]:
    """The facts the session list shows in the session's row, once it read the log."""
    listed = httpx.get(f"{url}/api/sessions", params={"summaries": "true"}, timeout=120).json()["sessions"]
    [row] = [s for s in listed if s["id"] == sid]
    assert row["summary"] is not None, row
    found: dict[str, Any] = row["summary"]
    return found


def digest(data: bytes) -> str:
    return sha256(data).hexdigest()


def artifact(root: Path, sid: str, data: bytes, cwd: str = "/work/project", name: str = "session.jsonl") -> Path:
    """A log where dsh puts it: `<root>/<projectKey(cwd)>/<encodeSegment(id)>/session.jsonl`."""
    path: Path = root / project_key(cwd) / encode_segment(sid) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def big_log(sid: str, turns: int, prompt_bytes: int) -> bytes:
    """A log of `turns` turns whose first is small and each later one carries a prompt of `prompt_bytes`."""
    b = LogBuilder(7)
    filler = "lorem ipsum dolor " * (prompt_bytes // 18)
    for n in range(1, turns + 1):
        b.turn(n, f"turn {n} {filler}" if n > 1 else "first")
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(sid, createdAt=T0), *b.events])


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# -- tests ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server([], data_dir=str(tmp_path_factory.mktemp("data"))) as url:
        yield url


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_a_log_pushed_after_each_turn_sends_only_its_new_bytes(server: str, home: Path, tmp_path: Path) -> None:
    log = tmp_path / "logs" / "session.jsonl"
    log.parent.mkdir()
    sent_before = b""
    for turns in range(1, 6):
        data = log_bytes("turn-by-turn", turns, 0)
        assert data.startswith(sent_before)
        with open(log, "ab") as f:  # dsh appends: the same file grows
            f.write(data[len(sent_before) :])
        tally = pushed([log], server, home)
        assert tally == {"sessions": 1, "sent": 1, "bytes": len(data) - len(sent_before), "skipped": 0, "refused": []}
        assert raw(server, "turn-by-turn") == log.read_bytes(), f"after turn {turns}"
        assert twin(server, "turn-by-turn")["turns"] == turns
        assert summary_of(server, "turn-by-turn")["turns"] == turns, "the list row reads on"
        found = httpx.get(f"{server}/api/search", params={"q": phrase("turn-by-turn", 0, turns)}, timeout=60).json()
        assert (found["sessions"], len(found["hits"])) == (1, 1), "search finds the new turn's words, once"
        sent_before = data
    assert versions(server, "turn-by-turn") == [[digest(log_bytes("turn-by-turn", n, 0)) for n in range(1, 6)]]
    again = pushed([log], server, home)
    assert again == {"sessions": 1, "sent": 0, "bytes": 0, "skipped": 1, "refused": []}
    assert len(versions(server, "turn-by-turn")[0]) == 5, "nothing new on the server"


def test_a_zstd_log_grown_by_frames_sends_only_its_new_frames(server: str, home: Path, tmp_path: Path) -> None:
    head = header("framed")
    batches = batches_of(events(3), 7)
    frames = [zstd_frame(header_line(head)), *(zstd_frame(jsonl_batch(b)) for b in batches)]
    log = tmp_path / "framed" / "session.jsonl.zstd"
    log.parent.mkdir()
    written = 0
    for upto in (2, 4, len(frames)):  # the header and a batch, then more batches as dsh appends them
        new = b"".join(frames[written:upto])
        with open(log, "ab") as f:
            f.write(new)
        written = upto
        tally = pushed([log], server, home)
        assert (tally["sent"], tally["bytes"], tally["refused"]) == (1, len(new), [])
        assert raw(server, "framed") == log.read_bytes()
        assert twin(server, "framed")["events"] == sum(len(b) for b in batches[: upto - 1])
    [version] = versions(server, "framed")
    assert len(version) == 3
    assert twin(server, "framed")["carrier"] == "jsonl-zstd"


def test_a_log_rewritten_in_place_is_a_new_version_and_the_old_one_stays(
    server: str, home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "rewritten.jsonl"
    for turns in (1, 3):
        log.write_bytes(log_bytes("rewritten", turns, 0))
        assert pushed([log], server, home)["sent"] == 1
    inode = log.stat().st_ino
    log.write_bytes(log_bytes("rewritten", 3, 1))  # turns 2 and 3 rewritten, in the same file
    assert log.stat().st_ino == inode
    tally = pushed([log], server, home)
    first = log_bytes("rewritten", 1, 0)
    assert (tally["sent"], tally["skipped"]) == (1, 0)
    assert tally["bytes"] == len(log.read_bytes()) - len(first), "sent after the start the server holds"
    assert raw(server, "rewritten") == log.read_bytes()
    old = [digest(log_bytes("rewritten", n, 0)) for n in (1, 3)]
    assert versions(server, "rewritten") == [old, [digest(log.read_bytes())]]
    current = twin(server, "rewritten")
    assert [v["current"] for v in current["versions"]] == [False, True]
    for n, upload in zip((1, 3), current["versions"][0]["uploads"], strict=True):  # the old version answers still
        then = twin(server, upload["url"].removeprefix("/sessions/"))
        assert then["turns"] == n
        assert httpx.get(server + then["download"], timeout=60).content == log_bytes("rewritten", n, 0)
        assert httpx.get(f"{server}/uploads/{upload['digest']}/raw", timeout=60).content == log_bytes("rewritten", n, 0)
    assert pushed([log], server, home)["sent"] == 0


def test_every_session_under_a_dsh_root_and_a_folder_is_pushed_once(server: str, home: Path, tmp_path: Path) -> None:
    root = tmp_path / "dsh-home" / "sessions"
    files = {
        "rooted-parent": artifact(root, "rooted-parent", jsonl_bytes("rooted-parent", 2)),
        "rooted-child-1": artifact(
            root,
            "rooted-child-1",
            jsonl_bytes("rooted-child-1", parentSession="rooted-parent", origin="subagent", delegationDepth=1),
        ),
        "rooted-child-2": artifact(
            root,
            "rooted-child-2",
            jsonl_bytes("rooted-child-2", parentSession="rooted-parent", origin="subagent", delegationDepth=1),
        ),
        "rooted-elsewhere": artifact(
            root, "rooted-elsewhere", jsonl_bytes("rooted-elsewhere", cwd="/work/other"), cwd="/work/other"
        ),
    }
    folder = tmp_path / "loose"
    (folder / "nested").mkdir(parents=True)
    files["loose-a"] = folder / "a.jsonl"
    files["loose-b"] = folder / "nested" / "b.jsonl"
    files["loose-a"].write_bytes(jsonl_bytes("loose-a", 2))
    files["loose-b"].write_bytes(jsonl_bytes("loose-b"))
    (folder / "notes.txt").write_text("not a session\n")

    tally = pushed([tmp_path / "dsh-home", folder], server, home)
    assert (tally["sessions"], tally["sent"], tally["skipped"], tally["refused"]) == (6, 6, 0, [])
    assert tally["bytes"] == sum(p.stat().st_size for p in files.values())
    assert set(files) <= listed_ids(server)
    for sid, path in files.items():
        assert raw(server, sid) == path.read_bytes(), sid
    assert twin(server, "rooted-child-1")["parentSession"] == "rooted-parent"
    again = pushed([tmp_path / "dsh-home", folder], server, home)
    assert (again["sessions"], again["sent"], again["bytes"], again["skipped"]) == (6, 0, 0, 6)
    for sid in files:
        assert len(versions(server, sid)) == 1 and len(versions(server, sid)[0]) == 1, sid


def test_a_sqlite_store_and_an_export_zip_are_pushed_whole_once(server: str, home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "whole"
    folder.mkdir()
    store = folder / "store.sqlite"
    store.write_bytes(sqlite_bytes(tmp_path, ["stored-1", "stored-2"]))
    export = folder / "dsh-session-exported.zip"
    export.write_bytes(export_zip_bytes("exported", ["exported-child"]))
    tally = pushed([folder], server, home)
    assert (tally["sessions"], tally["sent"], tally["skipped"], tally["refused"]) == (2, 2, 0, [])
    # the store goes as SQLite reads it (a snapshot: its write-ahead log included), the ZIP as it is
    named = {"store.sqlite", "dsh-session-exported.zip"}
    listed = httpx.get(f"{server}/api/uploads", timeout=60).json()["uploads"]
    uploads = {u["carrier"]: u for u in listed if u["name"] in named}
    assert set(uploads) == {"sqlite", "zip"}
    assert tally["bytes"] == uploads["sqlite"]["size"] + export.stat().st_size, "each sent whole, once"
    assert uploads["zip"]["digest"] == digest(export.read_bytes())
    assert httpx.get(f"{server}/uploads/{digest(export.read_bytes())}/raw", timeout=60).content == export.read_bytes()
    assert {"stored-1", "stored-2", "exported", "exported-child"} <= listed_ids(server)
    again = pushed([folder], server, home)
    assert (again["sent"], again["bytes"], again["skipped"]) == (0, 0, 2)


def test_without_the_state_file_or_with_verify_what_is_held_is_not_sent_again(
    server: str, home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    log = folder / "session.jsonl"
    log.write_bytes(log_bytes("forgotten", 2, 0))
    framed = folder / "framed" / "session.jsonl.zstd"
    framed.parent.mkdir()
    head = header("forgotten-framed")
    framed.write_bytes(zstd_frame(header_line(head)) + zstd_frame(jsonl_batch(events(1))))
    (folder / "store.sqlite").write_bytes(sqlite_bytes(tmp_path, ["forgotten-stored"]))
    assert pushed([folder], server, home)["sent"] == 3
    assert state_files(home), "the push state is kept in the cache folder"

    shutil.rmtree(home / "cache")
    lost = pushed([folder], server, home)
    assert (lost["sessions"], lost["sent"], lost["bytes"], lost["skipped"]) == (3, 0, 0, 3)
    verified = pushed([folder], server, home, "--verify")
    assert (verified["sent"], verified["bytes"], verified["skipped"]) == (0, 0, 3)

    shutil.rmtree(home / "cache")
    log.write_bytes(log_bytes("forgotten", 3, 0))  # grew while the state was lost: the server is asked
    grown = pushed([folder], server, home)
    assert (grown["sent"], grown["skipped"]) == (1, 2)
    assert grown["bytes"] == len(log_bytes("forgotten", 3, 0)) - len(log_bytes("forgotten", 2, 0))
    log.write_bytes(log_bytes("forgotten", 4, 0))
    grown = pushed([folder], server, home, "--verify")
    assert grown["bytes"] == len(log_bytes("forgotten", 4, 0)) - len(log_bytes("forgotten", 3, 0))
    assert raw(server, "forgotten") == log.read_bytes()
    assert len(versions(server, "forgotten")) == 1


def test_verify_finds_a_log_edited_in_its_middle(server: str, home: Path, tmp_path: Path) -> None:
    """The state file trusts a log on the same inode whose first 4 KiB and last 64 KiB pushed are unchanged to
    have only grown (docs/decisions/0024-push.md); `--verify` hashes it again, so an edit in its middle (a secret
    redacted by hand, in place) reaches the server as a new version, and the server's copy is the file."""
    turns = 40
    original = log_bytes("redacted", turns, 0)
    log = tmp_path / "session.jsonl"
    log.write_bytes(original)
    assert pushed([log], server, home)["sent"] == 1
    at = original.index(phrase("redacted", 0, 5).encode())
    assert 4096 < at < len(original) - 64 * 1024, "the edit is between the bytes the state file checks"
    with open(log, "r+b") as f:  # the same file, the same size: a word blanked out
        f.seek(at)
        f.write(b"x" * len(phrase("redacted", 0, 5)))
    with open(log, "ab") as f:
        f.write(log_bytes("redacted", turns + 1, 0)[len(original) :])
    tally = pushed([log], server, home, "--verify")
    assert (tally["sent"], tally["refused"]) == (1, [])
    assert raw(server, "redacted") == log.read_bytes()
    assert len(versions(server, "redacted")) == 2, "the edited log is a version of its own"


def test_a_push_stopped_before_it_kept_its_state_sends_nothing_twice(server: str, home: Path, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_bytes(log_bytes("unsaved", 1, 0))
    pushed([log], server, home)
    [state] = state_files(home)
    before = state.read_bytes()
    log.write_bytes(log_bytes("unsaved", 2, 0))
    assert pushed([log], server, home)["sent"] == 1
    state.write_bytes(before)  # as if the push had been killed after the server stored it, before it saved
    again = pushed([log], server, home)
    assert (again["sent"], again["bytes"], again["skipped"]) == (0, 0, 1)
    state.write_bytes(before)
    log.write_bytes(log_bytes("unsaved", 3, 0))
    grown = pushed([log], server, home)
    assert grown["bytes"] == len(log_bytes("unsaved", 3, 0)) - len(log_bytes("unsaved", 2, 0))
    assert raw(server, "unsaved") == log.read_bytes()
    assert versions(server, "unsaved") == [[digest(log_bytes("unsaved", n, 0)) for n in (1, 2, 3)]]


def test_a_session_deleted_on_the_server_is_sent_again(server: str, home: Path, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_bytes(log_bytes("deleted-there", 2, 0))
    assert pushed([log], server, home)["sent"] == 1
    assert httpx.delete(f"{server}/api/uploads/{digest(log.read_bytes())}", timeout=60).status_code == 200
    assert raw(server, "deleted-there") is None
    again = pushed([log], server, home)
    assert (again["sent"], again["bytes"]) == (1, log.stat().st_size), "the state file is not trusted over the server"
    assert raw(server, "deleted-there") == log.read_bytes()


@pytest.mark.parametrize("sid", ["team/run-1", ".."], ids=["slash", "dot-dot"])
def test_a_session_whose_id_holds_a_slash_or_dots_sends_only_its_new_bytes(
    sid: str, server: str, home: Path, tmp_path: Path
) -> None:
    """Ids are opaque strings (docs/format.md §1.1 encodes `/` and `..` in a folder name): each is pushed as any
    other, its grown log as the bytes after what the server holds."""
    one, two = jsonl_bytes(sid, 1), jsonl_bytes(sid, 2)
    log = tmp_path / "session.jsonl"
    log.write_bytes(one)
    assert pushed([log], server, home)["sent"] == 1
    log.write_bytes(two)
    tally = pushed([log], server, home)
    new, whole = len(two) - len(one), len(two)
    assert (tally["sent"], tally["bytes"]) == (1, new), f"{whole} bytes is the whole log sent again"


def test_a_log_the_push_api_cannot_name_does_not_stop_the_others(server: str, home: Path, tmp_path: Path) -> None:
    """A session id longer than the push URL takes (the server stores such sessions: tests/web/test_long_keys.py)
    is one file's problem: the push goes on with the others, and says what became of it."""
    folder = tmp_path / "logs"
    folder.mkdir()
    long_id = "long-" + "k" * 445
    (folder / "a-long.jsonl").write_bytes(jsonl_bytes(long_id))
    after = folder / "b-after.jsonl"
    after.write_bytes(jsonl_bytes("after-the-long-one"))
    done = push([folder], server, home, "--json")
    assert done.returncode in (0, 1), (done.returncode, done.stdout, done.stderr)
    assert raw(server, "after-the-long-one") == after.read_bytes(), "the log after it was pushed"
    said = json_of(done)
    refused = [r["path"] for r in said["refused"]]
    stored = httpx.get(f"{server}/api/uploads/{digest(jsonl_bytes(long_id))}", timeout=60).status_code == 200
    assert stored or refused == [str(folder / "a-long.jsonl")], said


def test_a_sqlite_store_dsh_is_writing_is_pushed_as_it_reads(server: str, home: Path, tmp_path: Path) -> None:
    """dsh keeps its store in WAL mode: while it runs, its latest transactions are in `store.sqlite-wal`, which
    SQLite reads with the store (a server serving the folder lists them). A push must send what the store holds,
    not a main file that may not even hold the schema yet."""
    folder = tmp_path / "live-store"
    folder.mkdir()
    writer = new_store(folder / "store.sqlite")
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")  # as a small store is between dsh's checkpoints
        written = events(1)
        write_sqlite_session(writer, header("in-the-wal"), batches_of(written, 5))
        assert (folder / "store.sqlite-wal").stat().st_size > 0
        with live_server([str(folder)], data_dir=str(tmp_path / "serving")) as serving:
            assert twin(serving, "in-the-wal")["events"] == len(written), "what the store holds, read in place"
        done = push([folder], server, home, "--json")
        assert "in-the-wal" in listed_ids(server), (done.returncode, done.stdout, done.stderr)
        assert twin(server, "in-the-wal")["events"] == len(written)
    finally:
        writer.close()
