"""What the model read at each call (docs/format.md §5.3, §5.4, §5.6), on built logs."""

from __future__ import annotations

from pathlib import Path

from dsh_inspect.history.requests import RequestIndex, StepRequests, request_index, step_requests
from dsh_inspect.history.session import SessionLog

from tests.support.logs import load_path
from tests.support.request_logs import (
    FAILURE,
    compaction_between_calls,
    derive_messages,
    header_and_state,
    interrupted_then_empty,
    retried_before_streaming,
    write_log,
)


def load(tmp_path: Path, events: list[dict]) -> tuple[SessionLog, RequestIndex]:
    log = load_path(write_log(tmp_path / "session.jsonl", events))
    assert log.verdict.category == "accepted", log.verdict
    return log, request_index(log)


def step(log: SessionLog, index: RequestIndex, key: str) -> StepRequests:
    found = step_requests(log, index, key)
    assert found is not None
    return found


def test_a_compaction_between_a_failed_and_a_successful_call_gives_each_call_its_own_list(tmp_path: Path) -> None:
    b = compaction_between_calls()
    log, index = load(tmp_path, b.events)
    view = step(log, index, "2.1")
    failed, retried = view.calls
    assert [c.call.number for c in view.calls] == [1, 2]
    assert failed.outcome.kind == "failed" and failed.outcome.finish == "error"
    assert failed.outcome.failure == FAILURE
    assert retried.outcome.kind == "answered" and view.answered is retried
    # each call read the surface just before its own first chunk
    assert failed.call.request_at == failed.call.first_chunk - 1
    assert retried.call.request_at == retried.call.first_chunk - 1
    assert [m.read(log).to_json() for m in failed.messages] == derive_messages(b.events, failed.call.request_at)
    assert [m.read(log).to_json() for m in retried.messages] == derive_messages(b.events, retried.call.request_at)
    assert [m.seq for m in failed.messages] == [2, 4, 6, 9, 14]
    checkpoint = retried.messages[0]
    assert checkpoint.replaced and checkpoint.read(log).source.get("plugin") == "compact"
    assert [m.seq for m in retried.messages[1:]] == [14]
    # the diff at the second call is the compaction, with its shadowed range and ids
    (replace,) = retried.diff.replaced
    assert replace.kind == "compaction" and (replace.start, replace.end) == (2, 9)
    assert replace.shadowed == (2, 4, 6, 9) and replace.shadowed_tokens == 420
    assert replace.shadowed_ids == tuple(log.message_ids[s] for s in (2, 4, 6, 9))
    assert replace.message_id not in replace.shadowed_ids
    assert retried.diff.previous is not None and retried.diff.previous.number == 1
    assert retried.diff.added == () and retried.diff.header == ()


def test_a_call_that_failed_before_streaming_is_known_from_its_retry_notice(tmp_path: Path) -> None:
    log, index = load(tmp_path, retried_before_streaming().events)
    first, second = step(log, index, "1.1").calls
    assert first.call.first_chunk is None and first.call.retry is not None
    assert first.outcome.kind == "retried"
    assert first.outcome.failure == {"message": "socket hang up", "code": "TRANSPORT"}
    assert second.outcome.kind == "answered"
    assert second.outcome.usage is not None and second.outcome.usage.input == 8
    assert [m.read(log).id for m in first.messages] == [m.read(log).id for m in second.messages]


def test_interrupted_messages_are_read_and_empty_ones_are_not(tmp_path: Path) -> None:
    b = interrupted_then_empty()
    log, index = load(tmp_path, b.events)
    assert step(log, index, "1.1").calls[0].outcome.kind == "interrupted"
    assert step(log, index, "2.1").calls[0].outcome.kind == "empty"
    last = step(log, index, "3.1").calls[0]
    seqs = [m.seq for m in last.messages]
    assert 4 in seqs  # the interrupted answer's delivered prefix
    assert 10 not in seqs  # the empty-content answer
    assert [m.read(log).to_json() for m in last.messages] == derive_messages(b.events, last.call.request_at)


def test_the_header_and_the_state_in_force_and_what_changed(tmp_path: Path) -> None:
    log, index = load(tmp_path, header_and_state().events)
    first = step(log, index, "1.1").calls[0]
    assert first.header is not None and first.header.reason == "initial" and first.header.system is None
    assert first.state.get("sandboxMode").value == "read-only"
    assert first.state.get("planMode").value is False
    assert first.diff.previous is None and first.diff.header[0].first

    second = step(log, index, "2.1").calls[0]
    header = second.header
    assert header is not None
    assert (header.provider, header.model, header.reasoning_effort) == ("deepseek-official", "deepseek-v4-pro", "high")
    assert header.system == "You are careful." and [t.name for t in header.tools or ()] == ["read"]
    (change,) = second.diff.header
    assert change.reason == "change" and not change.first
    fields = {f.field: (f.before, f.after) for f in change.fields}
    assert fields["config.model"] == ("deepseek-v4-flash", "deepseek-v4-pro")
    assert fields["config.reasoningEffort"] == (None, "high")
    assert fields["tool:read"][0] is None and set(fields) == {
        "config.model",
        "config.reasoningEffort",
        "system",
        "tool:read",
    }
    state = {s.name: s.after.value for s in second.diff.state}
    assert state["planMode"] is True and state["goal"]["objective"] == "Ship it"
    assert [t["content"] for t in state["todos"]] == ["read a.txt", "answer"]
    assert state["modelRoute"]["contextWindow"] == 128000
    assert second.state.get("agentPreset").value is None

    third = step(log, index, "2.2").calls[0]
    (again,) = third.diff.header
    assert again.fields == () and not again.first  # logged again, unchanged
    assert third.diff.state == ()


def test_every_call_of_every_built_log_reads_what_section_5_3_derives(tmp_path: Path) -> None:
    for n, builder in enumerate(
        (compaction_between_calls, retried_before_streaming, interrupted_then_empty, header_and_state)
    ):
        events = builder().events
        log = load_path(write_log(tmp_path / str(n) / "session.jsonl", events))
        index = request_index(log)
        for s in index.calls.steps:
            for call in step(log, index, s.key).calls:
                assert [m.read(log).to_json() for m in call.messages] == derive_messages(events, call.call.request_at)
                assert [m.read(log).id for m in call.messages] == [m.id for m in log.history_at(call.call.request_at)]
