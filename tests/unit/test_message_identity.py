"""One id through inbox, event, rewrite and request (docs/format.md §5.7), and the context budget."""

from __future__ import annotations

from pathlib import Path

from dsh_inspect.history.identity import InboxCarrier, MessageCarrier, message_identity
from dsh_inspect.history.requests import request_index
from dsh_inspect.history.usage import session_budget
from dsh_inspect.model.values import TextBlock, ToolResultBlock

from tests.support.logs import load_path
from tests.support.request_logs import (
    compaction_between_calls,
    interrupted_then_empty,
    pruned_result,
    steering,
    write_log,
)


def _result_text(carrier: MessageCarrier) -> str:
    assert carrier.message is not None
    (block,) = carrier.message.content
    assert isinstance(block, ToolResultBlock)
    return "".join(b.text for b in block.content if isinstance(b, TextBlock))


def test_a_pruned_tool_result_keeps_its_id_and_shows_both_contents_in_order(tmp_path: Path) -> None:
    log = load_path(write_log(tmp_path / "session.jsonl", pruned_result().events))
    index = request_index(log)
    identity = message_identity(log, index, log.message_ids[6])
    assert identity is not None
    original, pruned = identity.carriers
    assert isinstance(original, MessageCarrier) and isinstance(pruned, MessageCarrier)
    assert (original.seq, pruned.seq) == (6, 16)
    assert _result_text(original) == "alpha" and _result_text(pruned) == "[tool result pruned]"
    assert original.shadowed_by == 16 and original.appended
    assert pruned.replacement is not None and pruned.replacement.kind == "prune"
    assert pruned.keeps_id_of == (6,) and pruned.replacement.shadowed_tokens == 57
    # the original went out in turn 1's second request, the pruned copy in turn 2's
    assert [r.step_key for r in original.requests] == ["1.2"]
    assert [r.step_key for r in pruned.requests] == ["2.1"]
    assert [r.step_key for r in identity.requests] == ["1.2", "2.1"]


def test_a_compaction_checkpoint_has_a_new_id_that_lists_what_it_shadowed(tmp_path: Path) -> None:
    log = load_path(write_log(tmp_path / "session.jsonl", compaction_between_calls().events))
    index = request_index(log)
    checkpoint_id = log.message_ids[19]
    identity = message_identity(log, index, checkpoint_id)
    assert identity is not None
    (carrier,) = identity.carriers
    assert isinstance(carrier, MessageCarrier) and carrier.replacement is not None
    assert carrier.replacement.kind == "compaction" and carrier.keeps_id_of == ()
    assert carrier.replacement.shadowed_ids == tuple(log.message_ids[s] for s in (2, 4, 6, 9))
    assert checkpoint_id not in carrier.replacement.shadowed_ids
    assert [(r.step_key, r.number) for r in carrier.requests] == [("2.1", 2)]
    # a shadowed prompt was still read by the failed call of the same step
    prompt = message_identity(log, index, log.message_ids[2])
    assert prompt is not None
    (event,) = [c for c in prompt.carriers if isinstance(c, MessageCarrier)]
    assert event.shadowed_by == 19
    assert [(r.step_key, r.number) for r in event.requests] == [("1.1", 1), ("1.2", 1), ("2.1", 1)]


def test_a_steering_message_claimed_from_the_inbox_links_its_splice(tmp_path: Path) -> None:
    b, steer_id, dropped_id = steering()
    log = load_path(write_log(tmp_path / "session.jsonl", b.events))
    index = request_index(log)
    identity = message_identity(log, index, steer_id)
    assert identity is not None
    splice, event = identity.carriers
    assert isinstance(splice, InboxCarrier) and isinstance(event, MessageCarrier)
    assert (splice.seq, splice.target, splice.fate, splice.taken_at) == (7, "next-step", "claimed", 9)
    assert splice.message is not None and splice.message == event.message
    assert event.seq == 11 and [r.step_key for r in event.requests] == ["1.2"]
    cancelled = message_identity(log, index, dropped_id)
    assert cancelled is not None
    (only,) = cancelled.carriers
    assert isinstance(only, InboxCarrier) and (only.fate, only.taken_at) == ("canceled", 13)
    assert cancelled.requests == ()


def test_an_empty_answer_is_never_model_visible(tmp_path: Path) -> None:
    log = load_path(write_log(tmp_path / "session.jsonl", interrupted_then_empty().events))
    index = request_index(log)
    identity = message_identity(log, index, log.message_ids[10])
    assert identity is not None
    (carrier,) = identity.carriers
    assert isinstance(carrier, MessageCarrier) and not carrier.visible and carrier.requests == ()
    interrupted = message_identity(log, index, log.message_ids[4])
    assert interrupted is not None and [r.step_key for r in interrupted.requests] == ["2.1", "3.1"]
    assert message_identity(log, index, "no-such-id") is None


def test_the_budget_counts_tokens_per_step_and_marks_the_compaction_before_the_call_that_read_it(
    tmp_path: Path,
) -> None:
    log = load_path(write_log(tmp_path / "session.jsonl", compaction_between_calls().events))
    budget = session_budget(log, request_index(log))
    assert [s.key for s in budget.steps] == ["1.1", "1.2", "2.1"]
    last = budget.steps[-1]
    assert last.calls == 2 and last.messages == 2 and last.answered
    assert last.usage is not None and (last.usage.input, last.usage.cache_read, last.usage.context) == (30, 10, 40)
    assert budget.steps[0].usage is None  # the builder's turn 1 logs no usage
    (shrink,) = budget.shrinks
    assert shrink.replacement.kind == "compaction" and shrink.before_step == 2
