"""Generated logs survive JSONL, zstd and SQLite round trips unchanged."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

from dsh_inspect.history.session import load_session
from dsh_inspect.log.sources import discover
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.builders import LogBuilder, header
from tests.support.logs import load_path, stored_events
from tests.support.writers import new_store, write_jsonl, write_sqlite_session, write_zstd

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
deltas = st.lists(texts, min_size=0, max_size=8)


@st.composite
def logs(draw: Any) -> list[dict[str, Any]]:
    builder = LogBuilder(seed=draw(st.integers(0, 1000)))
    for turn in range(1, draw(st.integers(1, 3)) + 1):
        builder.add("turn/start", {"turn": turn})
        builder.add("step/start", {"turn": turn, "step": 1})
        builder.user(draw(texts))
        kind = draw(st.sampled_from(["text-delta", "reasoning-delta", "tool-call-delta"]))
        for part in draw(deltas):
            chunk: dict[str, Any] = {"type": kind, "index": 0}
            if kind == "tool-call-delta":
                chunk.update(id="c", name="read", argumentsDelta=part)
            else:
                chunk["text"] = part
            builder.add("assistant/chunk", {"turn": turn, "step": 1, "chunk": chunk})
            builder.events[-1]["time"] += draw(st.integers(-5, 50))
        builder.assistant(turn, 1, [{"type": "text", "text": draw(texts)}])
        if draw(st.booleans()):
            builder.add(
                "future/ext",
                draw(st.dictionaries(texts, st.integers(-(2**53 - 1), 2**53 - 1) | texts, max_size=3)),
                ignorable=True,
            )
        builder.add("step/end", {"turn": turn, "step": 1})
        builder.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return builder.events


def split(events: list[dict[str, Any]], cuts: list[int]) -> list[list[dict[str, Any]]]:
    points = sorted({c % (len(events) + 1) for c in cuts} | {0, len(events)})
    return [events[a:b] for a, b in itertools.pairwise(points) if b > a]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=logs(), cuts=st.lists(st.integers(0, 200), max_size=4), packed=st.booleans())
def test_generated_logs_survive_every_carrier(events: list[dict[str, Any]], cuts: list[int], packed: bool) -> None:
    batches = split(events, cuts)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plain = load_path(write_jsonl(root / "a/session.jsonl", header(), batches, packed=packed))
        zstd = load_path(write_zstd(root / "b/session.jsonl.zstd", header(), batches, packed=packed))
        conn = new_store(root / "c.sqlite")
        write_sqlite_session(conn, header(), batches)
        conn.close()
        (source,) = discover([str(root / "c.sqlite")]).sources
        sqlite = load_session(source)
        for log in (plain, zstd, sqlite):
            assert log.verdict.category == "accepted", (log.carrier, log.verdict)
            assert stored_events(log) == events
