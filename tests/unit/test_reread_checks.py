"""An event read again from a file that changed since the log was read: the record found there is checked
against what was read (its bytes all there, decoding, the same events by type), and a mismatch is a located
`RecordChanged`, never another record's content; a command meeting one says where, in one line."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from dsh_inspect import cli
from dsh_inspect.history.session import SessionLog, load_session
from dsh_inspect.log.sources import RecordChanged
from dsh_inspect.sessions import registry

from tests.support.builders import LogBuilder, header
from tests.support.writers import new_store, write_sqlite_session


def write_log(path: Path) -> list[bytes]:
    b = LogBuilder()
    b.turn(1, "first prompt")
    b.turn(2, "second prompt")
    lines = [orjson.dumps(x) + b"\n" for x in [header("reread"), *b.events]]
    path.write_bytes(b"".join(lines))
    return lines


def changed_line(line: bytes) -> bytes:
    """Another event in the line's bytes: of another type, padded to the same length."""
    event = orjson.loads(line)
    other = orjson.dumps({**event, "type": "x/y"})
    assert len(other) < len(line)
    return other + b" " * (len(line) - len(other) - 1) + b"\n"


def replace_line(path: Path, lines: list[bytes], i: int, new: bytes) -> int:
    """Line `i` replaced by `new` in place; the byte offset it starts at."""
    at = sum(len(x) for x in lines[:i])
    with path.open("r+b") as f:
        f.seek(at)
        f.write(new)
    return at


def loaded(tmp_path: Path) -> tuple[Path, list[bytes], SessionLog]:
    path = tmp_path / "reread.jsonl"
    lines = write_log(path)
    return path, lines, load_session(registry.SessionSource(str(path), "jsonl"))


def test_a_record_of_other_events_is_a_located_change(tmp_path: Path) -> None:
    path, lines, log = loaded(tmp_path)
    at = replace_line(path, lines, 3, changed_line(lines[3]))
    with pytest.raises(RecordChanged) as raised:
        log.raw_event(2)
    assert raised.value.location.file == str(path) and raised.value.location.offset == at
    assert f"{path}, byte {at}: the record holds other events" in str(raised.value)
    assert log.raw_event(1)["type"] == orjson.loads(lines[2])["type"]  # the records unchanged read as before


def test_a_record_that_no_longer_decodes_is_a_located_change(tmp_path: Path) -> None:
    path, lines, log = loaded(tmp_path)
    at = replace_line(path, lines, 3, b"#" * (len(lines[3]) - 1) + b"\n")
    with pytest.raises(RecordChanged, match=f"byte {at}: the record no longer decodes"):
        log.raw_event(2)


def test_a_record_cut_off_by_a_shrink_is_a_located_change(tmp_path: Path) -> None:
    path, lines, log = loaded(tmp_path)
    path.write_bytes(b"".join(lines[:3]) + lines[3][:10])
    with pytest.raises(RecordChanged, match=f"{len(lines[3]) - 1} bytes expected, 10 left"):
        log.raw_event(2)
    path.write_bytes(b"".join(lines[:3]))
    with pytest.raises(RecordChanged):
        log.raw_event(len(lines) - 2)


def test_a_command_reading_a_file_that_changes_under_it_says_where_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "reread.jsonl"
    lines = write_log(path)
    read = registry.load_session

    def read_then_rewrite(*args: object, **kwargs: object) -> SessionLog:
        log = read(*args, **kwargs)  # type: ignore[arg-type]
        before = path.stat()
        for i in range(1, len(lines)):  # as a tool rewriting the log in place while the command reads it
            replace_line(path, lines, i, changed_line(lines[i]))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # within one tick of the file system's clock
        return log

    monkeypatch.setattr(registry, "load_session", read_then_rewrite)
    assert cli.main(["render", str(path), "-o", str(tmp_path / "out.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"dsh-inspect: {path}, byte ") and "the log changed since it was read" in err
    assert not (tmp_path / "out.html").exists()


def test_a_sqlite_row_changed_or_deleted_since_the_read_is_a_located_change(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1, "first prompt")
    conn = new_store(tmp_path / "store.db")
    write_sqlite_session(conn, header("stored"), [[e] for e in b.events])  # one row per event: none packed
    log = load_session(registry.SessionSource(str(tmp_path / "store.db"), "sqlite", member="stored"))
    conn.execute("UPDATE events SET type = 'x/y' WHERE seq = 2")
    conn.execute("DELETE FROM events WHERE seq = 3")
    conn.commit()
    with pytest.raises(RecordChanged, match=r"row seq 2: the record holds other events"):
        log.raw_event(2)
    with pytest.raises(RecordChanged, match=r"row seq 3: the record no longer decodes"):
        log.raw_event(3)
    assert log.raw_event(1)["type"] == b.events[1]["type"]
    conn.close()


def test_check_over_a_folder_reports_a_file_changed_under_its_read_and_checks_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    changing, steady = tmp_path / "a-changing.jsonl", tmp_path / "b-steady.jsonl"
    lines = write_log(changing)
    write_log(steady)
    read = cli.load_session

    def read_then_rewrite(source: registry.SessionSource) -> SessionLog:
        log = read(source)
        if source.path == str(changing):  # rewritten in place after the read, before its rows are checked
            before = changing.stat()
            for i in range(1, len(lines)):
                replace_line(changing, lines, i, changed_line(lines[i]))
            os.utime(changing, ns=(before.st_atime_ns, before.st_mtime_ns))
        return log

    monkeypatch.setattr(cli, "load_session", read_then_rewrite)
    assert cli.main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    changed = [line for line in out.splitlines() if line.startswith("changed ")]
    assert len(changed) == 1 and f"{changing}, byte " in changed[0] and "changed while it was read" in changed[0]
    assert any(line.startswith("accepted") and str(steady) in line for line in out.splitlines())
    assert "1 of 1 session(s) accepted or repaired; 0 input(s) not session logs; 1 changed while read" in out

    lines = write_log(changing)  # and the same in --json: the file under `changed`, the other checked
    assert cli.main(["check", "--json", str(tmp_path)]) == 1
    doc = orjson.loads(capsys.readouterr().out)
    assert [c["path"] for c in doc["changed"]] == [str(changing)]
    assert doc["changed"][0]["location"].startswith(f"{changing}, byte ")
    assert [s["path"] for s in doc["sessions"]] == [str(steady)] and doc["sessions"][0]["verdict"]["accepted"]
