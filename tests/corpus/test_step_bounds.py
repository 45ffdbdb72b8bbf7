"""Steps are keyed from what the read kept of each step/start, and only the rest are read again: the keys and
bounds are those the stored events name, on every real log and on steps the read could not take in stride."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from dsh_inspect.history.calls import StepBounds, step_bounds, step_key
from dsh_inspect.history.session import SessionLog

from tests.conftest import CORPUS
from tests.support.builders import LogBuilder, header
from tests.support.logs import load_all, load_path

pytestmark = pytest.mark.corpus


def bounds_from_stored_events(log: SessionLog) -> list[StepBounds]:
    """Each step's key and bounds read off the stored events alone, one event at a time."""
    events = [log.raw_event(seq) for seq in range(log.event_count)]
    starts = [
        (e["seq"], e["data"]["turn"], e["data"]["step"])
        for e in events
        if e["type"] == "step/start" and all(type(e["data"].get(k)) is int for k in ("turn", "step"))
    ]
    out, seen = [], {}
    for i, (start, turn, step) in enumerate(starts):
        limit = starts[i + 1][0] - 1 if i + 1 < len(starts) else len(events) - 1
        end = next((s for s in range(start + 1, limit + 1) if events[s]["type"] in ("step/end", "turn/end")), limit)
        if events[end]["type"] == "turn/end":
            end = max(start, end - 1)
        seen[(turn, step)] = seen.get((turn, step), 0) + 1
        out.append(StepBounds(step_key(turn, step, seen[(turn, step)]), turn, step, start, end))
    return out


def test_every_corpus_log_keys_its_steps_as_its_stored_events_name_them(corpus_dir: Path) -> None:
    logs = load_all(CORPUS / "sessions") + load_all(CORPUS / "dsh-home")
    assert sum(1 for log in logs if log.steps) > 50
    wrong = {log.source.label for log in logs if step_bounds(log) != bounds_from_stored_events(log)}
    assert wrong == set()


def test_steps_the_read_judged_apart_are_read_again(tmp_path: Path) -> None:
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("step/start", {"turn": 1, "step": 1})  # a step repeated: a rule judges it, not the fast path
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("step/start", {"turn": 1, "step": 4})  # steps skipped
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    b.add("step/start", {"turn": 2, "step": 1})  # outside any turn
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(), *b.events]))
    log = load_path(path)
    assert [(s.key, s.start, s.end) for s in step_bounds(log)] == [
        ("1.1", 1, 2),
        ("1.1~2", 3, 4),
        ("1.4", 5, 5),
        ("2.1", 7, 7),
    ]
    assert step_bounds(log) == bounds_from_stored_events(log)
    assert 0 < len(list(log.step_pairs())) < 4  # some were taken in stride, and some not
