"""The upload store without HTTP: carriers by content, duplicates, restarts, deletes, crash leftovers, limits."""

from __future__ import annotations

import io
import os
import random
import sqlite3
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from dsh_inspect.history.session import load_session
from dsh_inspect.log.plaintext import ZstdPlaintext
from dsh_inspect.log.sources import SessionSource, discover
from dsh_inspect.store import LimitExceeded, Limits, NoSessions, UploadStore, clean_name
from dsh_inspect.store.expansion import decoded_size

from tests.support.bombs import zip_bomb, zstd_bomb
from tests.support.builders import header
from tests.support.uploads import events, export_zip_bytes, jsonl_bytes, put, sqlite_bytes, zstd_bytes
from tests.support.writers import batches_of, new_store, write_sqlite_session

MIB = 1 << 20


def blob_files(root: Path) -> list[Path]:
    return [p for p in (root / "blobs").rglob("*") if p.is_file()]


def test_every_carrier_is_told_by_its_content_not_its_name(tmp_path: Path) -> None:
    store = UploadStore(tmp_path / "data")
    cases = {
        "plain.zip": (jsonl_bytes("plain"), "jsonl", ["plain"]),
        "notes.txt": (zstd_bytes(tmp_path, "framed"), "jsonl-zstd", ["framed"]),
        "store.jsonl": (sqlite_bytes(tmp_path, ["s-1", "s-2", "s-3"]), "sqlite", ["s-1", "s-2", "s-3"]),
        "export.db": (export_zip_bytes("parent", ["child-a", "child-b"]), "zip", ["parent", "child-a", "child-b"]),
    }
    for name, (data, carrier, ids) in cases.items():
        stored = put(store, data, name)
        assert stored.created and stored.upload.carrier == carrier, name
        assert [s.session_id for s in stored.upload.sessions] == ids, name
        assert all(s.verdict == "accepted" for s in stored.upload.sessions), name
    export = next(u for u in store.uploads() if u.name == "export.db")
    assert export.media == 1
    members = [s.member for s in export.sessions]
    assert members == ["session.jsonl", "subagents/child-a/session.jsonl", "subagents/child-b/session.jsonl"]
    listed = [h.current for h in store.sessions()]
    assert len(listed) == 1 + 1 + 3 + 3
    assert all(isinstance(s.source, SessionSource) and Path(s.source.path).is_file() for s in listed)
    assert {s.source.label for s in listed if s.source.kind == "zip"} >= {"export.db!session.jsonl"}


def test_the_same_bytes_are_stored_once(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    first = put(store, jsonl_bytes("twice"), "a.jsonl")
    second = put(store, jsonl_bytes("twice"), "b.jsonl")
    assert first.created and not second.created
    assert second.upload == first.upload and second.upload.name == "a.jsonl"
    assert len(store.uploads()) == 1 and len(blob_files(tmp_path)) == 1
    assert not list((tmp_path / "tmp").iterdir())


def test_uploads_survive_a_restart_and_can_be_deleted(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    keep = put(store, jsonl_bytes("keep"), "keep.jsonl").upload
    drop = put(store, jsonl_bytes("drop"), "drop.jsonl").upload
    reopened = UploadStore(tmp_path)
    assert [u.digest for u in reopened.uploads()] == [keep.digest, drop.digest]
    assert reopened.local_path(keep).read_bytes() == jsonl_bytes("keep")
    assert reopened.delete(drop.digest) and not reopened.delete(drop.digest)
    assert [u.name for u in UploadStore(tmp_path).uploads()] == ["keep.jsonl"]
    assert blob_files(tmp_path) == [reopened.local_path(keep)]


def test_a_partly_broken_log_is_stored_with_its_verdict(tmp_path: Path) -> None:
    data = jsonl_bytes("torn", turns=2)
    lines = data.split(b"\n")
    lines[5] = lines[5][:20]
    stored = put(UploadStore(tmp_path), b"\n".join(lines), "torn.jsonl")
    assert stored.created and stored.upload.sessions[0].verdict == "refused"


def test_a_file_that_is_no_session_log_is_refused_with_where_and_why(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    with pytest.raises(NoSessions) as caught:
        put(store, b'{"jsonrpc":"2.0","method":"session/update"}\n', "stdout.jsonl")
    assert caught.value.message.startswith("stdout.jsonl is not a dsh session log: ")
    assert "(stdout.jsonl, line 1, byte 0)" in caught.value.message
    with pytest.raises(NoSessions, match=r"no session\.jsonl"):
        put(store, zip_of({"media/cat.png": b"not really"}), "photos.zip")
    assert store.uploads() == [] and blob_files(tmp_path) == []
    assert not list((tmp_path / "tmp").iterdir())


def zip_of(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def test_leftovers_of_a_crash_are_swept_and_nothing_else(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    kept = put(store, jsonl_bytes("kept"), "kept.jsonl").upload
    dead = tmp_path / "tmp" / "upload-999999999-abc.part"  # no such pid
    dead.write_bytes(b"half an upload")
    live = tmp_path / "tmp" / f"upload-{os.getppid()}-abc.part"
    live.write_bytes(b"another process is still writing this")
    orphan = tmp_path / "blobs" / "ff" / ("f" * 64)
    orphan.parent.mkdir()
    orphan.write_bytes(b"its catalog row was deleted, then the process died")
    UploadStore(tmp_path)
    assert not dead.exists() and live.exists() and not orphan.exists()
    assert UploadStore(tmp_path).local_path(kept).is_file()
    with sqlite3.connect(tmp_path / "catalog.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_too_many_sessions_in_one_store_names_the_limit(tmp_path: Path) -> None:
    store = UploadStore(tmp_path / "data", Limits(max_sessions_per_upload=2))
    with pytest.raises(LimitExceeded) as caught:
        put(store, sqlite_bytes(tmp_path, ["a", "b", "c"]), "store.sqlite")
    assert caught.value.limit == "max_sessions_per_upload" and "3 sessions" in caught.value.message


def test_an_upload_over_the_size_limit_stops_while_it_is_written(tmp_path: Path) -> None:
    store = UploadStore(tmp_path, Limits(max_upload_bytes=MIB))
    receiving = store.receive()
    receiving.write(bytes(MIB))
    with pytest.raises(LimitExceeded) as caught:
        receiving.write(b"x")
    receiving.discard()
    assert caught.value.limit == "max_upload_bytes" and "1 MiB" in caught.value.message
    assert not list((tmp_path / "tmp").iterdir())


@pytest.mark.parametrize("bomb", ["zstd", "zip"])
def test_a_bomb_is_refused_after_the_limit_with_memory_to_spare(tmp_path: Path, bomb: str) -> None:
    path = (zstd_bomb if bomb == "zstd" else zip_bomb)(tmp_path / f"bomb.{bomb}", 512 * MIB)
    assert path.stat().st_size < 2 * MIB
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded) as caught:
            decoded_size(str(path), "jsonl-zstd" if bomb == "zstd" else "zip", Limits(max_decompressed_bytes=16 * MIB))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.limit == "max_decompressed_bytes"
    assert "past the limit of 16 MiB" in caught.value.message
    assert peak < 8 * MIB, f"peak {peak} bytes while refusing a {bomb} bomb"


def test_a_zip_listing_too_many_entries_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "many.zip"
    path.write_bytes(zip_of({f"media/{n}.png": b"" for n in range(25)}))
    with pytest.raises(LimitExceeded) as caught:
        decoded_size(str(path), "zip", Limits(max_sessions_per_upload=2))
    assert caught.value.limit == "max_sessions_per_upload" and "more than 20 entries" in caught.value.message


def test_upload_names_are_shown_and_offered_safely() -> None:
    assert clean_name("../../etc/passwd") == "passwd"
    assert clean_name("C:\\logs\\session.jsonl") == "session.jsonl"
    assert clean_name("a\r\nb\x00.jsonl") == "ab.jsonl"
    assert clean_name("..") == clean_name("") == clean_name(None) == "upload"
    assert len(clean_name("x" * 1000)) == 200


def test_the_measured_size_is_what_the_reader_decodes(tmp_path: Path) -> None:
    data = zstd_bytes(tmp_path, "framed")
    for cut in (0, 10, 300):
        path = tmp_path / f"cut-{cut}.zstd"
        path.write_bytes(data[: len(data) - cut])
        decoded = sum(len(c) for c in ZstdPlaintext(str(path)).chunks())
        assert decoded_size(str(path), "jsonl-zstd", Limits()) == decoded, cut


def test_reading_an_idle_wal_store_writes_nothing_beside_it(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    conn = new_store(served / "dsh.sqlite")  # WAL mode, as dsh writes it
    write_sqlite_session(conn, header("wal-1"), batches_of(events(1), 5))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    (served / "dsh.sqlite-wal").unlink(missing_ok=True)
    (served / "dsh.sqlite-shm").unlink(missing_ok=True)
    assert [load_session(s).verdict.category for s in discover([str(served)]).sources] == ["accepted"]
    assert sorted(p.name for p in served.iterdir()) == ["dsh.sqlite"]
    store = UploadStore(tmp_path / "data")
    put(store, (served / "dsh.sqlite").read_bytes(), "dsh.sqlite")
    assert [load_session(h.current.source).verdict.category for h in store.sessions()] == ["accepted"]
    assert len(blob_files(tmp_path / "data")) == 1 and not list((tmp_path / "data" / "tmp").iterdir())


@pytest.mark.parametrize("carrier", ["jsonl", "zstd", "sqlite", "zip"])
def test_a_damaged_upload_is_stored_or_refused_never_a_crash(tmp_path: Path, carrier: str) -> None:
    original = {
        "jsonl": lambda: jsonl_bytes("damaged", turns=2),
        "zstd": lambda: zstd_bytes(tmp_path, "damaged"),
        "sqlite": lambda: sqlite_bytes(tmp_path, ["d-1", "d-2"]),
        "zip": lambda: export_zip_bytes("damaged", ["d-child"]),
    }[carrier]()
    store = UploadStore(tmp_path / "data")
    rng = random.Random(carrier)
    for trial in range(30):
        data = bytearray(original)
        if trial % 3 == 0:
            data = data[: rng.randrange(1, len(data))]
        else:
            for _ in range(rng.randrange(1, 8 if trial % 3 == 1 else 40)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            put(store, bytes(data), f"{carrier}-{trial}")
        except (NoSessions, LimitExceeded):
            continue
    for history in store.sessions():
        log = load_session(history.current.source)
        assert log.verdict.category in ("accepted", "repaired", "refused", "unsupported")
        for seq in range(log.event_count):
            log.event(seq)
