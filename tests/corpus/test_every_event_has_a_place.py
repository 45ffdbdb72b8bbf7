"""Nothing the log holds is hidden: every event of every real log has a row or a place in one."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from dsh_inspect.history.session import SessionLog
from dsh_inspect.history.transcript import transcript_rows

from tests.conftest import CORPUS
from tests.support.builders import LogBuilder, header
from tests.support.logs import load_all, load_path

pytestmark = pytest.mark.corpus


def unplaced(log: SessionLog) -> list[tuple[int, str]]:
    placed: set[int] = set()
    for row in transcript_rows(log)[1]:
        if row.kind != "diagnostic":
            placed.add(row.seq)
            placed.update(row.related)
    return [(seq, log.types[seq]) for seq in range(log.event_count) if seq not in placed]


def test_every_corpus_event_has_a_row_or_a_place(corpus_dir: Path) -> None:
    logs = load_all(CORPUS / "sessions") + load_all(CORPUS / "dsh-home")
    assert len(logs) > 100
    missing = {log.source.label: unplaced(log) for log in logs}
    assert {k: v for k, v in missing.items() if v} == {}


def test_events_outside_an_open_turn_or_step_still_show(tmp_path: Path) -> None:
    b = LogBuilder()
    b.add("step/start", {"turn": 0, "step": 1})
    b.add("step/end", {"turn": 0, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a"}})
    b.add("step/start", {"turn": 1, "step": 2})
    b.add("step/end", {"turn": 1, "step": 2})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "user"}}})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(), *b.events]))
    log = load_path(path)
    assert log.verdict.category == "accepted"  # the invariants these break are warnings only
    assert unplaced(log) == []
    kinds = [(r.kind, r.seq) for r in transcript_rows(log)[1]]
    assert ("partial-stream", 5) in kinds and ("event", 2) in kinds and ("event", 9) in kinds
