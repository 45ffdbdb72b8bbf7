"""A smoke run of the benchmark generator (benchmarks/generate.py) at a tiny size.

It checks what the workloads are, never how fast anything reads them: the
budgets are measured by `make bench`, not by the test suite.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from dsh_inspect.cli import context_counts
from dsh_inspect.history.session import load_session
from dsh_inspect.log.sources import discover

from benchmarks.generate import MIB, Spec, generate, generate_w3

TINY = Spec(
    long_turns=12,
    context_every=5,
    small_sessions=4,
    w2_bytes=MIB // 4,
    w2_big_result=40_000,
    w2_big_every=6,
    corpus_bytes=1 << 15,
)


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "workloads.stamp"):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    generate(out, TINY)
    return out


def test_every_workload_is_a_log_dsh_accepts(tiny: Path) -> None:
    found = discover([str(tiny / "w1"), str(tiny / "w2")])
    assert not found.refused and not found.diagnostics
    assert len(found.sources) == TINY.small_sessions + 3  # long, one-turn, the small ones; and W2
    for source in found.sources:
        log = load_session(source)
        assert log.verdict.category == "accepted", (source.label, log.verdict.reason)


def test_the_long_session_has_its_turns_calls_and_a_context_of_each_form_every_few_turns(tiny: Path) -> None:
    where = generate(tiny, TINY)  # up to date: found, not written again
    log = load_session(discover([str(where.long_session)]).sources[0])
    assert log.header is not None and log.header.id == "w1-long"
    assert log.turns == TINY.long_turns
    assert log.types.count("tool/call") == TINY.long_turns
    injections = -(-TINY.long_turns // TINY.context_every)
    counts = context_counts(log)
    assert {form: counts[form] for form in counts if form != "opaque"} == dict.fromkeys(
        ("instructions", "catalog", "snapshot", "notice", "relay", "recall"), injections
    )
    assert counts["opaque"] == 0  # every form renders as itself, none falls back
    one = load_session(discover([str(where.one_turn_session)]).sources[0])
    assert one.turns == 1 and not set(one.message_ids.values()) & set(log.message_ids.values())


def test_w2_is_one_plain_tool_heavy_log_of_about_its_size_with_big_results(tiny: Path) -> None:
    where = generate(tiny, TINY)
    data = where.w2_session.read_bytes()
    assert not data.startswith(b"\x28\xb5\x2f\xfd")  # plain JSONL, not zstd
    assert TINY.w2_bytes <= len(data) < 2 * TINY.w2_bytes
    lines = data.splitlines()
    results = [line for line in lines if b'"type":"tool/result"' in line]
    assert len(results) > len(lines) // 20
    assert any(len(line) > TINY.w2_big_result for line in results)


def test_a_second_run_writes_the_same_bytes(tiny: Path, tmp_path: Path) -> None:
    generate(tmp_path, TINY)
    assert _digest(tmp_path) == _digest(tiny)


def test_w3_is_one_accepted_log_of_small_events_kept_apart_from_w1_and_w2(tmp_path: Path) -> None:
    path = generate_w3(tmp_path, MIB // 4, TINY)
    assert path.stat().st_size >= MIB // 4 and not (tmp_path / "workloads.stamp").exists()
    log = load_session(discover([str(path)]).sources[0])
    assert log.verdict.category == "accepted" and log.header is not None and log.header.id == "w3-small-events"
    assert path.stat().st_size / log.stored_count < 400  # small events
    mtime = path.stat().st_mtime_ns
    assert generate_w3(tmp_path, MIB // 4, TINY).stat().st_mtime_ns == mtime  # up to date: not written again
