"""Comparing two sessions (issue 17): alignment, the divergences named, ignored parts, folding."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from dsh_inspect.history.compare import (
    FOLD_MIN,
    Fold,
    compare_logs,
    divergence_lines,
    ignore_of,
    layout,
    word_diff,
)
from dsh_inspect.history.word_diff import WORK, _edit_script, least_work

from tests.support.builders import header
from tests.support.logs import load_path
from tests.support.runs import continued, fork_pair, tool_run, write_log


def runs(tmp_path: Path, a: list[dict], b: list[dict]):  # type: ignore[no-untyped-def]
    return load_path(write_log(tmp_path / "a.jsonl", a)), load_path(write_log(tmp_path / "b.jsonl", b))


def test_two_runs_that_differ_in_one_tool_result_part_at_that_step(tmp_path: Path) -> None:
    a, b = runs(tmp_path, tool_run("alpha", seed=1).events, tool_run("beta", seed=2).events)
    c = compare_logs(a, b)
    assert not c.same
    # the step whose result differs is where the recordings part...
    first = c.first_divergence
    assert first is not None and (first.a, first.b, first.part, first.label) == ("1.1", "1.1", "result", "read")
    # ...the step after reads that result (its request differs at the result, message 3)...
    request = c.request_divergence
    assert request is not None and (request.a, request.part, request.message) == ("1.2", "messages", 3)
    # ...and answers from it
    output = c.output_divergence
    assert output is not None and (output.a, output.part) == ("1.2", "output")
    step_1, step_2 = c.segments
    assert (step_1.request, step_1.output) == ("same", "same")  # message and call ids differ: never compared
    result = next(i for i in step_1.items if i.status != "same")
    assert result.status == "changed" and [(w.op, w.text) for w in result.words] == [("del", "alpha"), ("ins", "beta")]
    answer = step_2.items[0]
    assert [(w.op, w.text) for w in answer.words] == [
        ("same", "The file says "),
        ("del", "alpha"),
        ("ins", "beta"),
        ("same", "."),
    ]


def test_a_session_against_itself_has_no_divergence(tmp_path: Path) -> None:
    log = load_path(write_log(tmp_path / "a.jsonl", tool_run("alpha", turns=3).events))
    c = compare_logs(log, log)
    assert c.same and c.request_divergence is None and c.output_divergence is None
    assert all(p.status == "same" for p in c.segments)
    assert divergence_lines(c) == ["no divergence: the two sessions recorded the same conversation"]


def test_a_fork_and_its_parent_agree_up_to_the_seed_boundary(tmp_path: Path) -> None:
    parent_path, fork_path, seed = fork_pair(tmp_path)
    parent, fork = load_path(parent_path), load_path(fork_path)
    c = compare_logs(parent, fork)
    assert c.seed_b == seed and c.seed_a is None
    first = c.first_divergence
    assert first is not None and first.a == first.b == "2.1" and first.part == "prompt"
    before = c.segments[: first.index]
    assert before and all(p.status == "same" for p in before)
    assert all(p.b is not None and p.b.inherited for p in before)  # the fork's seeded steps, met at their keys
    assert c.request_divergence is not None and c.request_divergence.index >= first.index
    # the parent's answer to turn 2 took two steps; the fork answered in one
    assert [p.status for p in c.segments[first.index + 1 :]] == ["only-a"]


def test_a_resumed_session_aligns_with_its_earlier_self_on_the_shared_prefix(tmp_path: Path) -> None:
    earlier = tool_run("alpha").events
    a, b = runs(tmp_path, earlier, continued(earlier, "And now?", 2))
    c = compare_logs(a, b)
    assert [p.status for p in c.segments] == ["same", "same", "only-b"]
    first = c.first_divergence
    assert first is not None and (first.a, first.b, first.part) == (None, "2.1", "only-b")
    assert divergence_lines(c)[0] == "first divergence: step 2.1 (only in b)"


def test_ignored_parts_make_runs_the_same(tmp_path: Path) -> None:
    a, b = runs(
        tmp_path,
        tool_run("alpha", "Done.", seed=1).events,
        tool_run("beta", "Done.", seed=2).events,
    )
    assert not compare_logs(a, b).same
    assert compare_logs(a, b, ignore=("tool_result:read",)).same
    assert compare_logs(a, b, ignore=("tool_result:*", "timestamps")).same
    assert not compare_logs(a, b, ignore=("tool_result:write",)).same
    with pytest.raises(ValueError, match="cannot ignore 'reasonin'"):
        ignore_of(["reasonin"])


def test_reasoning_is_compared_unless_ignored(tmp_path: Path) -> None:
    def thinking(thought: str) -> list[dict]:
        log = tool_run("alpha")
        for e in log.events:
            if e["type"] == "assistant/message" and e["data"]["step"] == 2:
                e["data"]["message"]["content"].insert(0, {"type": "reasoning", "text": thought})
        return log.events

    a, b = runs(tmp_path, thinking("Short file."), thinking("A long file."))
    c = compare_logs(a, b)
    assert c.output_divergence is not None and c.output_divergence.a == "1.2"
    assert c.first_divergence is not None and c.first_divergence.part == "reasoning"
    assert compare_logs(a, b, ignore=["reasoning"]).same


def test_a_changed_system_prompt_is_named_in_the_request(tmp_path: Path) -> None:
    def with_system(system: str) -> list[dict]:
        events = tool_run("alpha").events
        for e in events:
            if e["type"] == "request/header":
                e["data"]["header"]["system"] = system
        return events

    a, b = runs(tmp_path, with_system("Be brief."), with_system("Be thorough."))
    c = compare_logs(a, b)
    assert c.request_divergence is not None and (c.request_divergence.a, c.request_divergence.part) == ("1.1", "system")
    assert compare_logs(a, b, ignore=["system"]).same


def test_long_same_stretches_fold_and_windows_are_bounded(tmp_path: Path) -> None:
    a = load_path(write_log(tmp_path / "a.jsonl", tool_run("alpha", turns=20).events))
    b_events = tool_run("alpha", turns=20, seed=3).events
    last = [e for e in b_events if e["type"] == "tool/result"][-1]
    last["data"]["message"]["content"][0]["content"][0]["text"] = "omega"
    b = load_path(write_log(tmp_path / "b2.jsonl", b_events))
    c = compare_logs(a, b)
    assert c.first_divergence is not None and c.first_divergence.a == "20.1"
    view = layout(c)
    rows, after = view.window(0, 10)
    assert after is None and isinstance(rows[0], Fold) and rows[0].end - rows[0].start >= FOLD_MIN
    opened, more = view.window(rows[0].start, 10, upto=rows[0].end)
    assert len(opened) == 10 and more == rows[0].start + 10  # an opened fold pages too


def test_word_diff_keeps_whitespace_and_bounds_its_cost() -> None:
    assert "".join(w.text for w in word_diff("a b  c", "a x  c").words if w.op != "del") == "a x  c"
    huge = " ".join(["w"] * 30_000)
    assert [w.op for w in word_diff(huge, huge + " v").words] == ["same", "ins"], "a long text with one change"
    # the compare bomb: every word apart; past the bound it is changed as a whole, said so, at once
    bomb = word_diff(" ".join(["x"] * 5_000), " ".join(["x", "y"] * 5_000))
    assert bomb.whole and [w.op for w in bomb.words] == ["del", "ins"]
    assert bomb.floor > WORK, "known from the words counted, before any diff is tried"


def test_the_least_work_of_a_pair_is_never_more_than_its_diff_costs() -> None:
    """A pair judged past the budget by `least_work` alone is one the diff itself would give up on: with one step
    less than that floor to spend, it always does, whatever the words."""
    rng = random.Random(33)
    for _ in range(400):
        a = [rng.randrange(4) for _ in range(rng.randrange(1, 40))]
        b = [rng.randrange(4) for _ in range(rng.randrange(1, 40))]
        floor = least_work(a, b)
        assert _edit_script(a, b, 10**9) is not None
        if floor:
            assert _edit_script(a, b, floor - 1) is None, (a, b)


def test_a_fork_header_without_a_parent_in_view_still_reads(tmp_path: Path) -> None:
    events = tool_run("alpha").events
    fork = continued(events, "next", 2)
    head = header("orphan", parentSession="gone", seedLength=len(events))
    a = load_path(write_log(tmp_path / "a.jsonl", fork, head))
    assert compare_logs(a, a).seed_a == len(events)
    parent = load_path(write_log(tmp_path / "parent.jsonl", events, header("parent")))
    c = compare_logs(a, parent)
    assert c.seed_a == len(events) and not c.same, "the fork's own turn is where the two part"
