"""Where a session's time went (history/spend/timing.py): spans from the events' own times, on built logs and
the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_inspect.history.row_facts import AssistantFacts, ToolFacts, row_facts
from dsh_inspect.history.session import SessionLog
from dsh_inspect.history.spend.timing import Span, Timing, session_timing
from dsh_inspect.history.transcript import transcript_rows
from dsh_inspect.testing import events as ev

from tests.support.logs import load_path
from tests.support.timed_logs import T0, Timed, streamed, timed_log

CORPUS = Path("/work/shared/corpus")
DSH_HOME = sorted((CORPUS / "dsh-home").glob("sessions/*/*/session.jsonl.zstd"))


def built(tmp_path: Path, timed: list[Timed], *, complete: bool = True) -> tuple[SessionLog, Timing]:
    log = timed_log(tmp_path, timed)
    assert log.verdict.accepted, log.verdict
    assert (not log.closers) is complete, "a complete log needs no crash closers; a cut one does"
    return log, session_timing(log)


def one(timing: Timing, kind: str) -> Span:
    (span,) = [s for s in timing.spans if s.kind == kind]
    return span


def tool_turn(call_id: str = "call_1") -> list[Timed]:
    """One turn: the model streams (first delta 300 ms after the step starts), asks for a tool that runs
    1,200 ms after an approval that waits 4,000 ms, then answers in a second step."""
    block = ev.call("bash", {"command": "ls"}, call_id=call_id)
    return [
        (0, ev.turn_start()),
        (0, ev.prompt("list the files")),
        (10, ev.step_start()),
        *zip((200, 310, 350), streamed("I will list them."), strict=True),
        (400, ev.answer("I will list them.", calls=[block])),
        (405, ev.tool_call(block)),
        *zip((410, 4410), ev.approval("bash", call_id=call_id), strict=True),
        (5610, ev.tool_result(block, "a.txt")),
        (5620, ev.step_end()),
        (5630, ev.step_start()),
        *zip((5700, 5900, 5950), streamed("One file."), strict=True),
        (6000, ev.answer("One file.")),
        (6010, ev.step_end()),
        (6020, ev.turn_end()),
    ]


def test_each_span_is_its_events_times(tmp_path: Path) -> None:
    _, timing = built(tmp_path, tool_turn())
    first, second = [s for s in timing.spans if s.kind == "model"]
    assert (first.start, first.first_token, first.end) == (T0 + 10, T0 + 310, T0 + 400)
    assert first.ttft_ms == 300 and first.duration_ms == 390 and first.step == "1.1"
    assert first.decoding_ms == 400 - 310
    assert second.ttft_ms == 5900 - 5630 and second.duration_ms == 6000 - 5630
    tool = one(timing, "tool")
    assert (tool.label, tool.duration_ms, tool.step) == ("bash", 5610 - 405, "1.1")
    wait = one(timing, "wait")
    assert (wait.label, wait.duration_ms) == ("bash", 4000)
    assert timing.total("model") == 390 + 370 and timing.total("wait") == 4000
    assert [(s.key, s.duration_ms, s.ttft_ms) for s in timing.steps] == [("1.1", 5610, 300), ("1.2", 380, 270)]
    assert timing.wall_ms == 6020 and timing.backwards == 0


def test_the_ttft_agrees_with_the_answer_rows_stream_timing(tmp_path: Path) -> None:
    log, timing = built(tmp_path, tool_turn())
    readable, rows = transcript_rows(log)
    shown = {}
    for row in rows:
        facts = row_facts(readable, row)
        if isinstance(facts, AssistantFacts) and facts.timing is not None:
            shown[row.seq] = facts.timing.first_token_ms
    assert shown == {s.seq: s.ttft_ms for s in timing.spans if s.kind == "model"}


def clock_behind(timed: list[Timed], event_type: str) -> list[Timed]:
    """`timed` with the first `event_type` event written an hour early: the clock ran backwards to it."""
    at = next(i for i, (_, event) in enumerate(timed) if event["type"] == event_type)
    return [*timed[:at], (timed[at][0] - 3_600_000, timed[at][1]), *timed[at + 1 :]]


@pytest.mark.parametrize(
    ("timed", "complete", "took"),
    [
        (tool_turn(), True, 5610 - 405),
        ([t for t in tool_turn() if t[0] < 5610], False, None),  # cut while it ran: open, not a closer's zero
        (clock_behind(tool_turn(), "tool/result"), True, None),  # never a negative duration
    ],
    ids=["closed", "cut", "backwards"],
)
def test_a_tool_rows_duration_is_its_spans(tmp_path: Path, timed: list[Timed], complete: bool, took: int) -> None:
    log, timing = built(tmp_path, timed, complete=complete)
    readable, rows = transcript_rows(log)
    shown = [f.duration_ms for row in rows if isinstance(f := row_facts(readable, row), ToolFacts)]
    assert shown == [one(timing, "tool").duration_ms] == [took]


def test_idle_time_between_turns_and_a_question_as_a_wait(tmp_path: Path) -> None:
    block = ev.call("ask_user_question", {"question": "Which file?"}, call_id="ask_1")
    second_turn: list[Timed] = [
        (60_000, ev.turn_start()),
        (60_000, ev.prompt("and now?")),
        (60_010, ev.step_start()),
        (60_100, ev.answer(None, calls=[block])),
        (60_110, ev.tool_call(block)),
        (90_110, ev.tool_result(block, "a.txt")),
        (90_120, ev.step_end()),
        (90_130, ev.turn_end()),
    ]
    _, timing = built(tmp_path, [*tool_turn(), *second_turn])
    idle = one(timing, "idle")
    assert (idle.start, idle.end, idle.duration_ms) == (T0 + 6020, T0 + 60_000, 60_000 - 6020)
    (question,) = [s for s in timing.spans if s.label == "ask_user_question"]
    assert (question.kind, question.duration_ms) == ("wait", 30_000)
    assert timing.total("wait") == 4000 + 30_000


def test_a_log_cut_while_a_tool_runs_leaves_its_span_open(tmp_path: Path) -> None:
    cut = [t for t in tool_turn() if t[0] < 5610]  # the result never written
    _, timing = built(tmp_path, cut, complete=False)
    tool = one(timing, "tool")
    assert tool.state == "open" and tool.end is None and tool.duration_ms is None
    assert timing.steps[0].end is None and timing.steps[0].duration_ms is None
    assert all(s.duration_ms is None or s.duration_ms >= 0 for s in timing.spans)


def test_a_log_cut_mid_stream_leaves_the_model_call_open(tmp_path: Path) -> None:
    cut = [t for t in tool_turn() if t[0] <= 310]  # the first delta, and nothing after it
    _, timing = built(tmp_path, cut, complete=False)
    model = one(timing, "model")
    assert model.state == "open" and model.duration_ms is None
    assert model.ttft_ms == 300  # what is known of it stays known


def test_a_clock_that_ran_backwards_is_told_never_a_negative_duration(tmp_path: Path) -> None:
    """A resumed session on a machine whose clock is an hour behind: its second turn starts before the first
    ended."""
    first = tool_turn()
    behind = -3_600_000
    resumed = [(behind + at, event) for at, event in tool_turn("call_2")]
    _, timing = built(tmp_path, [*first, *resumed])
    idle = one(timing, "idle")
    assert idle.state == "backwards" and idle.duration_ms is None
    assert timing.backwards == 1
    assert all(s.duration_ms is None or s.duration_ms >= 0 for s in timing.spans)
    assert timing.wall_ms == 6020 * 2  # each machine's own stretch; the jump back counts as nothing
    assert timing.total("tool") == 2 * (5610 - 405)


def test_a_log_without_times_has_no_spans() -> None:
    fixture = CORPUS / "sessions/examples/acp-agent/tests/snapshots/bash-tool-turn/session.jsonl"
    timing = session_timing(load_path(fixture))
    assert timing.spans == () and timing.wall_ms is None


@pytest.mark.parametrize("path", DSH_HOME, ids=lambda p: p.parent.name[:16])
def test_corpus_spans_are_the_events_own_times(path: Path) -> None:
    log = load_path(path)
    timing = session_timing(log)
    for span in timing.spans:
        assert span.start == log.event(span.seq).time or span.kind in ("model", "idle")
        assert span.duration_ms is not None and span.duration_ms >= 0, span
    for span in (s for s in timing.spans if s.kind == "tool"):
        result = next(s for s, c in log.result_calls.items() if c == log.event(span.seq).data["callId"])
        assert span.end == log.event(result).time
    events = list(log.events(0, log.stored_count))
    assert timing.wall_ms == max(e.time for e in events) - min(e.time for e in events)


def test_corpus_compaction_and_its_command() -> None:
    (compacted,) = [p for p in DSH_HOME if "2d63c78e" in str(p)]
    timing = session_timing(load_path(compacted))
    command, compaction = one(timing, "command"), one(timing, "compaction")
    assert command.label == "/compact" and command.start <= compaction.start
    assert compaction.end is not None and command.end is not None and compaction.end <= command.end
    assert len([s for s in timing.spans if s.kind == "idle"]) == 2


def test_a_subagent_run_names_the_child_session_it_started() -> None:
    demos = Path(__file__).resolve().parents[2] / "app/demo/sessions/--home-demo-project--"
    timing = session_timing(load_path(demos / "demo-subagent-parent/session.jsonl"))
    (subagent,) = [s for s in timing.spans if s.kind == "subagent"]
    assert (subagent.label, subagent.child, subagent.duration_ms) == ("subagent", "demo-subagent-child", 37)
    assert timing.total("tool") == 0, "a subagent's run is the subagent's time, not a tool's"
