"""What the model read at each step of real dsh logs (docs/format.md §5.3, §5.4, §5.9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_inspect.history.identity import MessageCarrier, message_identity
from dsh_inspect.history.requests import CallRequest, RequestIndex, StepRequests, request_index, step_requests
from dsh_inspect.history.session import SessionLog, load_session
from dsh_inspect.history.usage import session_budget
from dsh_inspect.log.sources import discover
from dsh_inspect.model.rules import decode_source_event_seqs

from tests.support.logs import load_path, stored_events
from tests.support.request_logs import derive_messages

pytestmark = pytest.mark.corpus

SNAPSHOTS = "sessions/examples/acp-agent/tests/snapshots"
HOME = "dsh-home/sessions/--home-dev-project--"
COMPACTED = f"{HOME}/session-2d63c78e-16f5-4333-ae51-0ea39805a2a6/session.jsonl.zstd"
RESUMED = f"{HOME}/session-bbe88c97-9dd2-4991-ad6a-fa0982b5251f/session.jsonl.zstd"


def open_log(corpus_dir: Path, relative: str) -> tuple[SessionLog, RequestIndex]:
    log = load_path(corpus_dir / relative)
    assert log.verdict.accepted, log.verdict
    return log, request_index(log)


def view(log: SessionLog, index: RequestIndex, key: str) -> StepRequests:
    found = step_requests(log, index, key)
    assert found is not None, key
    return found


def answered(log: SessionLog, index: RequestIndex, key: str) -> CallRequest:
    call = view(log, index, key).answered
    assert call is not None
    return call


def assert_section_5_3(log: SessionLog, index: RequestIndex) -> int:
    """Every call's list is §5.3 over the log prefix before it; an answered call starts before its first cited chunk."""
    events = stored_events(log)
    calls = 0
    for step in index.calls.steps:
        for request in view(log, index, step.key).calls:
            call = request.call
            assert [m.read(log).to_json() for m in request.messages] == derive_messages(events, call.request_at), (
                log.source.label,
                step.key,
                call.number,
            )
            if call.message is not None and events[call.message].get("sourceEventSeqs"):
                cited = decode_source_event_seqs(events[call.message]["sourceEventSeqs"])
                assert call.request_at == min(cited) - 1
            calls += 1
    return calls


def test_a_fork_reads_its_inherited_seed_and_resumes_its_header(corpus_dir: Path) -> None:
    log, index = open_log(corpus_dir, f"{SNAPSHOTS}/subagent-fork-in-process/session.1.jsonl")
    assert log.header is not None and log.header.seed_length == 42
    assert_section_5_3(log, index)
    call = answered(log, index, "2.1")
    assert call.header is not None and call.header.reason == "resume"
    assert [h.reason for h in call.diff.header] == ["resume"]
    inherited = [m.seq for m in call.messages if m.inherited]
    assert inherited == [4, 5, 39]  # the parent's turn, below seedLength
    assert all(m.seq > 42 for m in call.messages if not m.inherited)
    assert "MARMALADE" in call.messages[0].read(log).text()


def test_a_resumed_session_reads_the_earlier_lifecycle_after_its_end_seed(corpus_dir: Path) -> None:
    log, index = open_log(corpus_dir, RESUMED)
    assert_section_5_3(log, index)
    end_seed = log.types.index("session/end-seed")
    call = answered(log, index, "2.1")
    assert call.seed_boundary == end_seed
    (change,) = call.diff.header
    assert change.reason == "resume" and not change.first
    assert {"system", "adapterDefaults"} <= {f.field for f in change.fields}
    assert [m.seq < end_seed for m in call.messages] == [True] * 6 + [False]
    assert call.messages[-1].read(log).text() == "NOTOOL continue from where we stopped"


def test_an_interrupted_answer_is_the_steps_message(corpus_dir: Path) -> None:
    log, index = open_log(corpus_dir, f"{SNAPSHOTS}/cancel/session.jsonl")
    assert_section_5_3(log, index)
    call = answered(log, index, "1.1")
    assert call.outcome.kind == "interrupted"
    assert log.event(call.call.message).message.text() == "partial"  # type: ignore[arg-type, union-attr]
    # after the cancel, the delivered prefix is part of what the model would read next
    assert log.event(call.call.message).message in log.history_at()  # type: ignore[arg-type]


def test_an_empty_content_answer_is_never_read(corpus_dir: Path) -> None:
    log, index = open_log(corpus_dir, f"{SNAPSHOTS}/subagent-max-tokens-partial/session.1.jsonl")
    assert_section_5_3(log, index)
    call = answered(log, index, "1.2")
    assert call.outcome.kind == "empty" and call.outcome.usage is not None
    empty_id = call.outcome.message_id
    assert empty_id is not None and empty_id not in [m.id for m in log.history_at()]
    identity = message_identity(log, index, empty_id)
    assert identity is not None
    (carrier,) = identity.carriers
    assert isinstance(carrier, MessageCarrier) and not carrier.visible and identity.requests == ()


def test_the_hand_authored_replace_swaps_one_context_in_place(corpus_dir: Path) -> None:
    log, index = open_log(corpus_dir, f"{SNAPSHOTS}/agent-instructions/session.jsonl")
    assert_section_5_3(log, index)
    before = answered(log, index, "1.1")
    after = answered(log, index, "1.2")
    assert [m.seq for m in before.messages] == [4, 5, 6]
    assert [m.seq for m in after.messages][:3] == [4, 17, 6]
    (replace,) = after.diff.replaced
    assert (replace.seq, replace.kind, replace.start, replace.end, replace.shadowed) == (17, "compaction", 5, 5, (5,))
    assert replace.shadowed_ids == (log.message_ids[5],) and replace.message_id != log.message_ids[5]


def test_the_real_compact_command_shrinks_the_next_request(corpus_dir: Path) -> None:
    log, index = open_log(corpus_dir, COMPACTED)
    assert_section_5_3(log, index)
    before, after = answered(log, index, "2.1"), answered(log, index, "3.1")
    assert len(before.messages) == 7 and len(after.messages) == 5
    checkpoint = after.messages[0]
    assert checkpoint.replaced and checkpoint.read(log).source.get("plugin") == "compact"
    (replace,) = after.diff.replaced
    assert replace.kind == "compaction" and len(replace.shadowed) == 7 and replace.shadowed_tokens == 364
    assert set(replace.shadowed_ids) <= {m.read(log).id for m in before.messages}
    budget = session_budget(log, index)
    (shrink,) = budget.shrinks
    assert budget.steps[shrink.before_step].key == "3.1"
    assert [s.messages for s in budget.steps] == [3, 5, 7, 5, 7]
    assert all(s.usage is not None for s in budget.steps)
    assert budget.context_window == 1_000_000


def test_every_call_in_every_corpus_log_reads_what_section_5_3_derives(corpus_dir: Path) -> None:
    sources = discover([str(corpus_dir / "sessions"), str(corpus_dir / "dsh-home")]).sources
    calls = 0
    for source in sources:
        log = load_session(source)
        if not log.verdict.accepted:
            continue
        index = request_index(log)
        calls += assert_section_5_3(log, index)
        assert sum(1 for s in index.calls.steps if s.message is not None) == log.types.count("assistant/message")
    assert calls > 200  # every corpus log with a model call took part
