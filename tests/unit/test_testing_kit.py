"""The test author's kit without a browser (issue 42): builders dsh accepts, each context form rendered as
its form, what the seeder assigns, seed-time validation, `cwd`, the goldens' normalisation and `settled`."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest
from dsh_inspect.forms.bodies import context_body
from dsh_inspect.forms.declared_form import context_form
from dsh_inspect.history.session import load_one
from dsh_inspect.testing import SeedError, normalize, seed_events, settled
from dsh_inspect.testing import events as ev
from dsh_inspect.testing.seeding import SCAFFOLD_CWD, assign_positions, numbered, seed_problem, write_seed

CONTEXTS = {
    "instructions": ev.instructions("<system-reminder>rules</system-reminder>", "AGENTS.md", "docs/AGENTS.md"),
    "catalog": ev.catalog({"pdf": "Reads PDFs", "sql": ""}),
    "snapshot": ev.snapshot({"time-context": "It is noon.", "cwd": "/srv"}),
    "notice": ev.notice("You called read twice", "<system-reminder>You called read twice.</system-reminder>"),
    "relay": ev.relay("All done.", "child-session"),
    "recall": ev.recall("Yesterday we fixed the cache.", "yesterday", "last week"),
}


def scenario() -> list[dict[str, Any]]:
    return [
        ev.turn_start(),
        ev.step_start(),
        ev.prompt("Read a.txt"),
        *CONTEXTS.values(),
        *ev.tool_use("read", {"file_path": "a.txt"}, "alpha", reasoning="Let me read it."),
        *ev.approval("bash", "rejected", reason="rm -rf"),
        ev.step_end(),
        ev.step_start(),
        ev.answer("It says alpha.", reasoning="The tool said so.", usage={"inputTokens": 10, "outputTokens": 3}),
        ev.step_end(),
        ev.turn_end(),
        *ev.command("model", " deepseek-v4-pro"),
        *ev.compaction("We read a.txt.", tokens=120),
        ev.turn_start(),
        ev.step_start(),
        ev.prompt("Again"),
        *ev.compaction("Read twice.", manual=False),
        ev.answer("Still alpha."),
        ev.step_end(),
        ev.turn_end(reason={"kind": "aborted", "reason": {"kind": "user"}}),
        ev.title("Reading a.txt"),
    ]


def test_a_scenario_of_builders_is_what_dsh_accepts(tmp_path: Path) -> None:
    plan = seed_events(scenario(), session_id="kit", cwd="/srv/shop")
    assert seed_problem(plan.header, plan.events) is None
    log = load_one(str(write_seed(tmp_path, plan, "zstd")))
    assert log.verdict.category == "accepted", log.verdict
    assert plan.header["cwd"] == "/srv/shop"
    assert [e["seq"] for e in plan.events] == list(range(len(plan.events)))


def test_each_context_builder_renders_as_its_form() -> None:
    for form, event in CONTEXTS.items():
        source = event["data"]["source"]
        assert context_form(source) == form
        assert context_body(form, event["data"]["content"], source).rendered == form, form


def test_the_seeder_numbers_turns_and_steps_and_cites_sources() -> None:
    events = seed_events(scenario(), session_id="kit").events
    by_type = {t: [e for e in events if e["type"] == t] for t in {e["type"] for e in events}}
    assert [e["data"]["turn"] for e in by_type["turn/start"]] == [1, 2]
    assert [(e["data"]["turn"], e["data"]["step"]) for e in by_type["step/start"]] == [(1, 1), (1, 2), (2, 1)]
    call, result = by_type["tool/call"][0], by_type["tool/result"][0]
    assert result["sourceEventSeqs"] == [call["seq"]]
    assert [e["data"]["turn"] for e in by_type["assistant/message"]] == [1, 1, 2]
    # no chunks were streamed: provenance not recorded (an empty list would say the stream was empty)
    assert all("sourceEventSeqs" not in e for e in by_type["assistant/message"])
    first, second = by_type["compaction/summary"]
    surface_before = [e["seq"] for e in events if e.get("surfaceOp") == "append" and e["seq"] < first["seq"]]
    assert first["data"]["shadowedSeqs"] == surface_before
    assert first["data"]["shadowedRange"] == {"start": surface_before[0], "end": surface_before[-1]}
    checkpoint = events[first["seq"] + 1]
    assert checkpoint["surfaceOp"] == {"op": "replace", "start": surface_before[0], "end": surface_before[-1]}
    start = next(e["seq"] for e in by_type["compaction/start"])
    assert checkpoint["sourceEventSeqs"] == [start, first["seq"], *surface_before]
    # the second compaction shadows the surface as the first left it: its checkpoint and the new prompt
    assert second["data"]["shadowedSeqs"][0] == checkpoint["seq"]
    assert by_type["compaction/start"][1]["data"]["turn"] == 2
    # dsh's key order, and its checkpoint text and command closing words (a recorded `/compact`)
    assert list(checkpoint) == ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]
    texts = [b["text"] for b in checkpoint["data"]["content"]]
    assert texts[0].endswith("\n\n<compacted-summary>") and texts[1:] == ["We read a.txt.", "</compacted-summary>"]
    run = next(e for e in events if e["type"] == "command/run" and e["data"]["name"] == "compact")
    assert run["data"]["args"] == ""
    done = next(e for e in events if e["type"] == "command/done" and e["data"]["commandId"] == run["data"]["commandId"])
    compacted = f"Compacted {len(surface_before)} history items (~120 tokens)."
    assert done["data"] == {
        "commandId": run["data"]["commandId"],
        "kind": "success",
        "text": compacted,
        "sourceEventSeq": first["seq"],
    }


def test_builders_write_keys_in_dsh_order() -> None:
    events = seed_events(scenario(), session_id="kit").events
    first = {e["type"]: e for e in reversed(events)}
    assert list(first["user/message"]["data"]) == ["content", "source", "role", "id"]
    assert list(first["assistant/message"]["data"]["message"]) == ["role", "content", "source", "id"]
    result = first["tool/result"]["data"]["message"]
    assert list(result) == ["source", "content", "role", "id"]
    assert result["content"][0]["isError"] is False  # written, as dsh writes it
    snapshot = CONTEXTS["snapshot"]["data"]["source"]
    assert list(snapshot)[:3] == ["kind", "plugin", "form"]


def test_an_answer_cites_only_the_chunks_of_its_own_call() -> None:
    chunk = {
        "type": "assistant/chunk",
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}},
    }
    retry = {
        "type": "llm/retry",
        "data": {
            "retryId": "r",
            "turn": 1,
            "step": 1,
            "provider": "p",
            "mode": "always",
            "policyKey": "k",
            "retry": 1,
            "delayMs": 0,
            "failure": {"message": "m", "code": "c"},
        },
    }
    events = seed_events(
        [
            ev.turn_start(),
            ev.step_start(),
            ev.prompt("hi"),
            chunk,
            retry,
            chunk,
            chunk,
            ev.answer("x"),
            ev.step_end(),
            ev.turn_end(),
        ],
        session_id="retry",
    ).events
    assert events[7]["sourceEventSeqs"] == [5, 6]


def test_appended_builders_continue_from_what_was_seeded() -> None:
    plan = seed_events(scenario(), session_id="kit")
    more = numbered(
        [ev.turn_start(), ev.step_start(), ev.prompt("{{cwd}}")],
        plan.values,
        start=len(plan.events),
        last_time=plan.events[-1]["time"],
    )
    whole = assign_positions([*plan.events, *more])
    assert whole[-3]["data"]["turn"] == 3 and whole[-2]["data"] == {"turn": 3, "step": 1}
    assert whole[-1]["data"]["content"][0]["text"] == SCAFFOLD_CWD
    last = plan.events[-1]["time"]
    assert [e["time"] for e in whole[-3:]] == [last + 1, last + 2, last + 3]


def test_a_refused_event_is_named_with_dsh_reason() -> None:
    no_id = {"type": "user/message", "surfaceOp": "append", "data": {"role": "user", "content": []}}
    plan = seed_events([ev.turn_start(), ev.prompt("hi"), no_id, ev.turn_end()], session_id="bad")
    problem = seed_problem(plan.header, plan.events)
    assert isinstance(problem, SeedError)
    assert (problem.index, problem.event_type) == (2, "user/message")
    assert "event 2 (user/message)" in str(problem) and "id" in problem.reason


def test_a_defective_tail_is_blamed_on_its_event() -> None:
    plan = seed_events(
        [ev.turn_start(), ev.prompt("hi"), {"type": "tool/result", "surfaceOp": "append", "data": {}}, ev.turn_end()],
        session_id="tail",
    )
    problem = seed_problem(plan.header, plan.events)
    assert problem is not None and (problem.index, problem.event_type) == (2, "tool/result")


def test_an_open_last_turn_is_refused_when_seeding_and_allowed_when_appending() -> None:
    plan = seed_events([ev.turn_start(), ev.prompt("hi")], session_id="open")
    problem = seed_problem(plan.header, plan.events)
    assert problem is not None and (problem.index, problem.event_type) == (0, "turn/start")
    assert "still open" in problem.reason
    assert seed_problem(plan.header, plan.events, open_turn=True) is None


def test_appended_problems_are_indexed_in_the_batch_and_old_damage_is_not_blamed() -> None:
    no_id = {"type": "user/message", "surfaceOp": "append", "data": {"role": "user", "content": []}}
    seeded = seed_events([ev.turn_start(), no_id, ev.turn_end()], session_id="damaged")
    assert seed_problem(seeded.header, seeded.events, first=3) is None  # seeded damaged on purpose
    good = seed_events([ev.turn_start(), ev.turn_end(), ev.prompt("x"), no_id], session_id="later")
    problem = seed_problem(good.header, good.events, first=2)
    assert problem is not None and problem.index == 1


@pytest.mark.parametrize(
    ("given", "fixture_cwd", "header_cwd", "placeholder"),
    [
        (None, None, SCAFFOLD_CWD, SCAFFOLD_CWD),
        (None, "{{cwd}}/workspace", f"{SCAFFOLD_CWD}/workspace", SCAFFOLD_CWD),
        (None, "/home/me/repo", "/home/me/repo", SCAFFOLD_CWD),
        ("/srv/shop", "{{cwd}}/workspace", "/srv/shop", "/srv/shop"),
    ],
)
def test_cwd(tmp_path: Path, given: str | None, fixture_cwd: str | None, header_cwd: str, placeholder: str) -> None:
    head = {"type": "session", "version": 0, "id": "{{sessionId}}", "createdAt": 5}
    if fixture_cwd:
        head["cwd"] = fixture_cwd
    fixture = tmp_path / "fixture.jsonl"
    lines = [head, ev.turn_start(1), ev.prompt("in {{cwd}}", message_id="m"), ev.turn_end(1)]
    fixture.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    plan = seed_events(fixture, session_id="s", cwd=Path(given) if given else None)  # a path object is a cwd too
    assert plan.header["cwd"] == header_cwd
    assert plan.header["createdAt"] == 5
    assert plan.events[1]["data"]["content"][0]["text"] == f"in {placeholder}"


@pytest.mark.parametrize(
    ("page", "golden"),
    [
        ('- link "#12":\n  - /url: /sessions/s/events/12', '- link "#{{seq}}":\n  - /url: /sessions/s/events/{{seq}}'),
        ("- link: /sessions/s?at=40", "- link: /sessions/s?at={{seq}}"),
        ("- time: 2026-12-06 02:44", "- time: {{datetime}}"),
        ("- time: yesterday", "- time: {{datetime}}"),
        ("- text: 2.5 s", "- text: {{duration}}"),
        ("- text: in 215 out 32 TTFT 340 ms 889 tok/s", "- text: in 215 out 32 TTFT {{duration}} 889 tok/s"),
        (
            '- link "legacy-message:session-1:108":\n  - /url: "#msg-legacy-message%3Asession-1%3A108"',
            '- link "{{legacy-id}}":\n  - /url: "#msg-{{legacy-id}}"',
        ),
        ("id 0b0e7e2a-8c1f-4bb8-9f0c-1d2e3f4a5b6c at /tmp/pytest-1/x.jsonl", "id {{uuid}} at {{path}}"),
        ("- text: 1 分 5 秒", "- text: {{duration}}"),
        ("- text: 输入 215 首字 12 毫秒", "- text: 输入 215 首字 {{duration}}"),
        ("- /url: /sessions/s/contexts/8", "- /url: /sessions/s/contexts/{{seq}}"),
        (
            "- paragraph: see /home/u/tmp/notes.txt and /var/tmp/x",
            "- paragraph: see /home/u/tmp/notes.txt and /var/tmp/x",
        ),
        # a fixture's own text stays as written
        ("- paragraph: Meet at 12:30, wait 5 s, see issue #4", "- paragraph: Meet at 12:30, wait 5 s, see issue #4"),
        ("- text: 5 s later", "- text: 5 s later"),
    ],
)
def test_normalisation(page: str, golden: str) -> None:
    assert normalize(page) == golden + "\n"


def test_a_tests_own_substitutions_come_first() -> None:
    assert normalize("build 2026.12.3 at 12:30", [(r"build \S+", "build {{build}}")]) == "build {{build}} at 12:30\n"


def test_settled_waits_until_two_reads_agree_and_says_when_they_never_do() -> None:
    reads = iter([1, 2, 3, 3, 4])
    assert settled(lambda: next(reads), interval=0) == 3
    counter = itertools.count()
    with pytest.raises(AssertionError, match="not settled after"):
        settled(lambda: next(counter), timeout=0.05, interval=0.001)
