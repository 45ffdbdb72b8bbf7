"""zstd frames and SQLite stores built by the tests' writer, intact and damaged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest
import zstandard
from dsh_inspect.history.session import load_session
from dsh_inspect.history.transcript import transcript_rows
from dsh_inspect.log.plaintext import scan_frames
from dsh_inspect.log.sources import discover

from tests.support.builders import LogBuilder, header, two_turns
from tests.support.logs import load_path, stored_events
from tests.support.writers import batches_of, new_store, write_sqlite_session, write_zstd


def long_log() -> LogBuilder:
    builder = LogBuilder()
    for turn in range(1, 6):
        builder.turn(turn, f"prompt {turn} " + "lorem ipsum dolor sit amet " * 3000)
    return builder


def test_zstd_artifact_reads_like_its_plain_text(tmp_path: Path) -> None:
    builder = two_turns()
    log = load_path(write_zstd(tmp_path / "session.jsonl.zstd", header(), batches_of(builder.events, 4)))
    assert log.verdict.category == "accepted"
    assert stored_events(log) == builder.events


def test_a_torn_final_frame_is_repaired_and_its_complete_lines_recovered(tmp_path: Path) -> None:
    builder = long_log()
    events = builder.events
    batches = [events[:20], events[20:]]
    path = write_zstd(tmp_path / "session.jsonl.zstd", header(), batches)
    data = path.read_bytes()
    frames = scan_frames(data).frames
    last_start, last_end = frames[-1]
    path.write_bytes(data[: last_start + (last_end - last_start) * 3 // 4])
    log = load_path(path)
    assert log.verdict.category == "repaired", log.verdict
    torn = [d for d in log.diagnostics if d.code == "torn-frame"]
    assert torn and torn[0].location.offset == last_start
    real = log.closers.start
    assert 20 < real < len(events), "complete lines of the torn frame are recovered"
    assert stored_events(log)[:real] == events[:real]
    # the recovered prefix ends inside a turn, which the in-memory closers finish
    assert log.closers and log.types[log.closers[-1]] == "turn/end"


def test_a_bad_checksum_in_a_complete_frame_is_refused_at_that_frame(tmp_path: Path) -> None:
    builder = two_turns()
    path = write_zstd(tmp_path / "session.jsonl.zstd", header(), batches_of(builder.events, 5))
    data = bytearray(path.read_bytes())
    start, end = scan_frames(bytes(data)).frames[2]
    data[end - 1] ^= 0xFF  # the frame's content checksum
    path.write_bytes(bytes(data))
    log = load_path(path)
    assert log.verdict.category == "refused"
    assert log.verdict.location.offset == start
    assert "checksum" in log.verdict.reason


@pytest.mark.parametrize("keep", [0, 7], ids=["empty", "torn-first-frame"])
def test_a_missing_header_frame_is_corruption(tmp_path: Path, keep: int) -> None:
    path = write_zstd(tmp_path / "session.jsonl.zstd", header(), [two_turns().events])
    path.write_bytes(path.read_bytes()[:keep] if keep else b"")
    log = load_path(path)
    assert log.verdict.category == "refused"
    assert log.verdict.reason == "empty or header-less session log"
    assert log.verdict.location is not None and log.verdict.location.offset == 0


def test_a_header_frame_holding_more_than_the_header_is_corruption(tmp_path: Path) -> None:
    events = two_turns().events
    path = write_zstd(tmp_path / "session.jsonl.zstd", header(), [events])
    first_frame_end = scan_frames(path.read_bytes()).frames[0][1]
    merged = zstandard.ZstdCompressor(write_checksum=True).compress(
        zstandard.ZstdDecompressor().decompress(path.read_bytes()[:first_frame_end])
        + b"".join(orjson.dumps(e) + b"\n" for e in events[:2])
    )
    path.write_bytes(merged)
    log = load_path(path)
    assert log.verdict.category == "refused"
    assert "header frame must contain exactly one complete line" in log.verdict.reason
    assert log.verdict.location is not None and log.verdict.location.offset == 0


def test_bytes_after_the_last_frame_that_are_not_a_frame_are_corruption(tmp_path: Path) -> None:
    path = write_zstd(tmp_path / "session.jsonl.zstd", header(), batches_of(two_turns().events, 6))
    size = len(path.read_bytes())
    path.write_bytes(path.read_bytes() + b"garbage!")
    log = load_path(path)
    assert log.verdict.category == "refused"
    assert log.verdict.location.offset == size and "magic" in log.verdict.reason


def store_with(tmp_path: Path, events: list[dict], batch: int = 6) -> Path:
    path = tmp_path / "store.sqlite"
    conn = new_store(path)
    write_sqlite_session(conn, header(), batches_of(events, batch))
    conn.close()
    return path


def load_store(path: Path):  # type: ignore[no-untyped-def]
    (source,) = discover([str(path)]).sources
    return load_session(source)


def test_sqlite_store_reads_like_the_log_it_holds(tmp_path: Path) -> None:
    builder = two_turns()
    log = load_store(store_with(tmp_path, builder.events))
    assert log.carrier == "sqlite" and log.verdict.category == "accepted"
    assert stored_events(log) == builder.events


def test_a_torn_sqlite_tail_is_repaired(tmp_path: Path) -> None:
    builder = two_turns()
    path = store_with(tmp_path, builder.events)
    conn = sqlite3.connect(path)
    n = len(builder.events)
    conn.execute(
        "INSERT INTO events VALUES (?, ?, 'turn/start', 1, '{not json', NULL, NULL, NULL)", ("session-test", n)
    )
    conn.commit()
    conn.close()
    log = load_store(path)
    assert log.verdict.category == "repaired"
    assert f"row seq {n}" in log.verdict.reason
    assert log.event_count == n


def store_with_a_broken_row(tmp_path: Path) -> Path:
    """Two turns in a store whose row 4 no longer holds JSON: a later turn/end makes it corruption."""
    path = store_with(tmp_path, two_turns().events)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE events SET data = '{broken' WHERE seq = 4")
    conn.commit()
    conn.close()
    return path


def test_a_bad_row_before_the_last_turn_end_is_refused_at_that_row(tmp_path: Path) -> None:
    log = load_store(store_with_a_broken_row(tmp_path))
    assert log.verdict.category == "refused"
    assert log.verdict.location.row == 4


def test_the_rows_after_a_bad_sqlite_row_read_on_outside_dsh_view(tmp_path: Path) -> None:
    log = load_store(store_with_a_broken_row(tmp_path))
    rows = transcript_rows(log)[1]
    assert [r.diagnostic.code for r in rows if r.diagnostic] == ["defect", "committed-corruption"]
    outside = [r for r in rows if r.kind != "diagnostic" and r.outside is not None]
    assert {"user", "assistant-step", "tool-call"} <= {r.kind for r in outside}
    assert all("row seq 4" in r.outside for r in outside)  # type: ignore[operator]


def test_a_wrong_application_id_is_not_a_dsh_store(tmp_path: Path) -> None:
    path = store_with(tmp_path, two_turns().events)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 42")
    conn.commit()
    conn.close()
    found = discover([str(path)])
    assert not found.sources
    (refused,) = found.refused
    assert "application_id is 42" in refused.reason


def test_a_newer_store_schema_is_unsupported_with_its_version(tmp_path: Path) -> None:
    path = store_with(tmp_path, two_turns().events)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 19")
    conn.commit()
    conn.close()
    log = load_store(path)
    assert log.verdict.category == "unsupported"
    assert "19" in log.verdict.reason


def test_a_changed_schema_is_refused(tmp_path: Path) -> None:
    path = store_with(tmp_path, two_turns().events)
    conn = sqlite3.connect(path)
    conn.execute("CREATE INDEX extra ON events(type)")
    conn.commit()
    conn.close()
    log = load_store(path)
    assert log.verdict.category == "refused" and "schema" in log.verdict.reason


def test_packed_rows_in_sqlite_expand_exactly(tmp_path: Path) -> None:
    builder = two_turns()
    builder.add("turn/start", {"turn": 3})
    builder.add("step/start", {"turn": 3, "step": 1})
    for i, text in enumerate(["a", "b", "c", "d", "e"]):
        builder.add(
            "assistant/chunk", {"turn": 3, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": text}}
        )
        builder.events[-1]["time"] += i * 7
    for part in ['{"a"', ":1", "}"]:
        builder.add(
            "assistant/chunk",
            {
                "turn": 3,
                "step": 1,
                "chunk": {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "read", "argumentsDelta": part},
            },
        )
    builder.add("step/end", {"turn": 3, "step": 1})
    builder.add("turn/end", {"turn": 3, "reason": {"kind": "completed"}})
    path = store_with(tmp_path, builder.events, batch=100)
    conn = sqlite3.connect(path)
    packed = conn.execute("SELECT type, data FROM events WHERE ignorable = 0 ORDER BY seq").fetchall()
    conn.close()
    assert [t for t, _ in packed] == ["text-chunks", "tool-call-chunks"]
    assert orjson.loads(packed[0][1])["texts"] == ["a", "b", "c", "d", "e"]
    log = load_store(path)
    assert log.verdict.category == "accepted"
    assert stored_events(log) == builder.events


def test_a_defect_inside_a_complete_frame_is_corruption_not_a_tail(tmp_path: Path) -> None:
    """zstd tolerates defects only in the final torn frame (docs/format.md §1.1): the same garbage line
    that a plain file would drop as a tail makes a zstd artifact corrupt."""
    from tests.support.writers import jsonl_batch, zstd_frame

    events = two_turns().events
    first_turn = next(i for i, e in enumerate(events) if e["type"] == "turn/end") + 1
    frames = [
        orjson.dumps(header()) + b"\n",
        jsonl_batch(events[:first_turn], packed=False),
        b"{garbage\n",
        jsonl_batch(events[first_turn:-1], packed=False),
    ]
    zstd = tmp_path / "z" / "session.jsonl.zstd"
    zstd.parent.mkdir()
    zstd.write_bytes(b"".join(zstd_frame(f) for f in frames))
    plain = tmp_path / "p" / "session.jsonl"
    plain.parent.mkdir()
    plain.write_bytes(b"".join(frames))
    assert load_path(plain).verdict.category == "repaired"
    refused = load_path(zstd).verdict
    assert refused.category == "refused" and "complete zstd frame" in refused.reason
    assert refused.location.line == first_turn + 2
