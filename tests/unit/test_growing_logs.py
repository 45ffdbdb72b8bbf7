"""A log read, then grown, then read on from where it stopped equals a fresh read of the whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from dsh_inspect.history.session import SessionLog
from dsh_inspect.history.transcript import transcript_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.builders import LogBuilder, header
from tests.support.logs import load_path, stored_events
from tests.support.writers import jsonl_batch, zstd_frame


def facts(log: SessionLog) -> dict[str, Any]:
    return {
        "verdict": (log.verdict.category, log.verdict.repairs),
        "events": stored_events(log),
        "surface": log.surface,
        "identity": {k: [(e.seq, e.role) for e in v] for k, v in log.identity.items() if v},
        "counts": (log.turns, log.steps, log.title, log.message_count),
        "diagnostics": sorted((d.code, d.location.line or 0) for d in log.diagnostics),
        "rows": [(r.kind, r.seq, r.links) for r in transcript_rows(log)[1]],
    }


def session_events() -> list[dict[str, Any]]:
    b = LogBuilder()
    for turn in (1, 2, 3):
        b.turn(turn, f"prompt {turn}")
    return b.events


def write_growing(path: Path, events: list[dict[str, Any]], cut: int, torn: bytes, zstd: bool) -> None:
    head = orjson.dumps(header()) + b"\n"
    if zstd:
        path.write_bytes(zstd_frame(head) + zstd_frame(jsonl_batch(events[:cut], packed=False)) + torn)
    else:
        path.write_bytes(head + jsonl_batch(events[:cut], packed=False) + torn)


def append(path: Path, events: list[dict[str, Any]], zstd: bool) -> None:
    data = jsonl_batch(events, packed=False)
    with path.open("ab") as f:
        f.write(zstd_frame(data) if zstd else data)


@pytest.mark.parametrize("zstd", [False, True])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(1, 60), min_size=1, max_size=4, unique=True))
def test_reading_on_equals_reading_afresh(tmp_path: Path, zstd: bool, cuts: list[int]) -> None:
    events = session_events()
    cuts = [*sorted(c for c in cuts if c < len(events)), len(events)]
    path = tmp_path / ("session.jsonl.zstd" if zstd else "session.jsonl")
    write_growing(path, events, cuts[0], b"", zstd)
    live = load_path(path)
    done = cuts[0]
    for cut in cuts[1:]:
        append(path, events[done:cut], zstd)
        done = cut
        assert live.extend()
        assert facts(live) == facts(load_path(path))


def test_a_torn_last_line_completes_on_the_next_read(tmp_path: Path) -> None:
    events = session_events()
    path = tmp_path / "session.jsonl"
    line = orjson.dumps(events[10]) + b"\n"
    write_growing(path, events, 10, line[:15], zstd=False)
    live = load_path(path)
    assert [t.kind for t in live.tail] == ["pending"] and live.verdict.category == "repaired"
    with path.open("ab") as f:
        f.write(line[15:] + jsonl_batch(events[11:], packed=False))
    assert live.extend()
    assert not live.tail and live.verdict.category == "accepted"
    assert facts(live) == facts(load_path(path))


def test_a_log_with_a_defect_is_read_afresh(tmp_path: Path) -> None:
    events = session_events()
    path = tmp_path / "session.jsonl"
    path.write_bytes(orjson.dumps(header()) + b"\n" + jsonl_batch(events[:5], packed=False) + b"{bad\n")
    live = load_path(path)
    assert live.extend() is False
