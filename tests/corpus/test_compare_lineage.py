"""Comparing real dsh logs (issue 17): each recorded fork against its parent agrees up to its seed
boundary, and a resumed session meets its earlier self on the shared prefix."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_inspect.history.calls import call_index
from dsh_inspect.history.compare import compare_logs, log_facts
from dsh_inspect.history.requests import surfaces_at
from dsh_inspect.history.session import SessionLog
from dsh_inspect.history.state import type_index

from tests.support.logs import load_path, stored_events
from tests.support.runs import write_log

pytestmark = pytest.mark.corpus

SNAPSHOTS = "sessions/examples/acp-agent/tests/snapshots"
RESUMED = "dsh-home/sessions/--home-dev-project--/session-bbe88c97-9dd2-4991-ad6a-fa0982b5251f/session.jsonl.zstd"


def forks(corpus: Path) -> list[tuple[SessionLog, SessionLog]]:
    """(parent, fork) for every child log whose header names a seed length and its scenario's parent."""
    pairs = []
    for parent_path in sorted((corpus / SNAPSHOTS).glob("*/session.jsonl")):
        parent = load_path(parent_path)
        for child_path in sorted(parent_path.parent.glob("session.*.jsonl")):
            child = load_path(child_path)
            if (
                child.header
                and child.header.seed_length
                and child.header.parent_session == (parent.header and parent.header.id)
            ):
                pairs.append((parent, child))
    return pairs


def test_every_recorded_fork_agrees_with_its_parent_up_to_its_seed_boundary(corpus_dir: Path) -> None:
    pairs = forks(corpus_dir)
    assert pairs, "the corpus holds forks with a seed length (subagent-fork-in-process, subagent-mixed)"
    for parent, fork in pairs:
        c = compare_logs(parent, fork)
        assert fork.header is not None and c.seed_b == fork.header.seed_length
        first = c.first_divergence
        assert first is not None, fork.source.label  # the fork was asked something else
        inherited = [p for p in c.segments[: first.index] if p.b is not None and p.b.inherited]
        assert inherited, fork.source.label  # it inherited steps, and they met the parent's
        assert all(p.status == "same" for p in c.segments[: first.index]), fork.source.label
        diverged = c.segments[first.index].b
        assert diverged is None or not diverged.inherited, fork.source.label  # nothing differs before the boundary


def test_a_resumed_session_meets_its_earlier_self_on_the_shared_prefix(corpus_dir: Path, tmp_path: Path) -> None:
    resumed = load_path(corpus_dir / RESUMED)
    events = stored_events(resumed)
    boundary = next(e["seq"] for e in events if e["type"] == "session/end-seed")
    assert resumed.header is not None
    earlier = load_path(write_log(tmp_path / "earlier.jsonl", events[:boundary], resumed.header.to_json()))
    c = compare_logs(earlier, resumed)
    first = c.first_divergence
    assert first is not None and first.part == "only-b" and first.a is None
    assert first.index > 0 and all(p.status == "same" for p in c.segments[: first.index])
    assert all(p.key_a is None for p in c.segments[first.index :])  # only the resumed lifecycle's steps follow
    assert compare_logs(resumed, resumed).same


def test_each_step_is_read_where_its_model_view_says_the_model_read_it(corpus_dir: Path) -> None:
    """The comparison keys and reads steps without splitting their calls: the same keys as the model
    views, and at each answered step the same surface and header as the answered call's request."""
    paths = [*sorted((corpus_dir / SNAPSHOTS).glob("*/session*.jsonl")), *sorted(corpus_dir.glob("dsh-home/**/*.zstd"))]
    checked = 0
    for path in paths:
        log = load_path(path)
        facts = log_facts(log)
        steps = call_index(log).steps
        assert list(facts.request_at) == [s.key for s in steps], path
        types = type_index(log)
        for step in steps:
            answered = step.answered
            if step.message is None or answered is None:
                continue
            ours, theirs = facts.request_at[step.key], answered.request_at
            assert surfaces_at(log, [ours])[ours] == surfaces_at(log, [theirs])[theirs], (path, step.key)
            assert types.last("request/header", ours) == types.last("request/header", theirs), (path, step.key)
            checked += 1
    assert checked > 200, checked  # every answered step of 100-odd real logs
