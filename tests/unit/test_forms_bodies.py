"""Rendered forms and their body data (docs/ui.md §1.4, §1.6, §3; §7 items 9-30, 32).

Skipped, because they are about the browser DOM rather than the data a
template receives: item 9's collapsed state (aria-expanded, the body being
absent until opened, the svg icon), item 10's click/Space/Enter toggling,
item 27's "body absent while collapsed". Their data halves are covered here
(role, fields, summary); items 36-40 (geometry, aria) are out of range.
"""

from __future__ import annotations

from typing import Any

import pytest
from dsh_inspect.forms import (
    CatalogBody,
    ContextView,
    InstructionsBody,
    JsonPart,
    OpaqueBody,
    RecallBody,
    RelayBody,
    SnapshotBody,
    TextPart,
    context_body,
    interpolate,
    project_context,
)
from dsh_inspect.model.messages import create_user_message
from dsh_inspect.model.values import MessageSource


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def texts(view: ContextView) -> list[str]:
    content = getattr(view.body, "content", ())
    return [p.text.text for p in content if isinstance(p, TextPart)]


def fields(view: ContextView) -> dict[str, str]:
    assert isinstance(view.body, OpaqueBody)
    return {f.key: f.value.text for f in view.body.fields}


def assert_opaque(view: ContextView) -> OpaqueBody:
    assert view.rendered_form is None  # no data-context-form marker
    assert view.summary is None
    assert isinstance(view.body, OpaqueBody)
    return view.body


BASELINE = {
    "kind": "agent-instructions",
    "form": "instructions",
    "baseline": True,
    "changes": [
        {
            "action": "set",
            "scope": ".\u0000AGENTS.md",
            "path": "AGENTS.md",
            "digest": "context-injection-browser-snapshot",
        },
        {"action": "remove", "scope": "sub", "path": "sub/AGENTS.md"},
        {"action": "replace", "scope": ".\u0000AGENTS.md", "path": "AGENTS.md", "digest": "later"},
    ],
}


def catalog(*entries: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"kind": "skill-catalog", "form": "catalog", "entries": list(entries), **extra}


def skill(name: str, description: str) -> dict[str, str]:
    return {"name": name, "description": description}


# §7.9 (data half) and §7.10


def test_opaque_body_shows_text_with_real_newlines_and_fields_but_kind() -> None:
    view = project_context(
        [text("line one\n\nline two")], {"kind": "plugin", "plugin": "fixture", "empty": {}, "list": []}
    )
    assert (view.role, view.title_key, view.label) == ("inject", "message.contextInjection", "fixture")
    assert_opaque(view)
    assert texts(view) == ["line one\n\nline two"]
    assert fields(view) == {"plugin": "fixture", "empty": "{}", "list": "[]"}


def test_opaque_fields_need_a_key_besides_kind() -> None:
    assert assert_opaque(project_context([text("x")], {"kind": "plugin"})).fields == ()
    assert assert_opaque(project_context([text("x")], None)).fields == ()
    assert assert_opaque(project_context([text("x")], ["kind", "form"])).fields == ()


# §7.11-§7.12


def test_instructions_baseline_loads_removes_and_drops_duplicate_paths() -> None:
    reminder = "<system-reminder>\nInstructions from: AGENTS.md\n</system-reminder>"
    view = project_context([text(reminder)], BASELINE)
    assert view.rendered_form == "instructions"
    assert isinstance(view.body, InstructionsBody)
    files = [(f.path, f.wording, f.digest) for f in view.body.files]
    assert files == [("AGENTS.md", "loaded", "context-injection-browser-snapshot"), ("sub/AGENTS.md", "removed", None)]
    assert "<system-reminder>" in texts(view)[0]
    assert view.label == "AGENTS.md, sub/AGENTS.md"


def test_instructions_delta_words_set_as_added_and_replace_as_updated() -> None:
    source = {
        "kind": "agent-instructions",
        "form": "instructions",
        "changes": [
            {"action": "set", "path": "A.md"},
            {"action": "replace", "path": "B.md", "digest": ""},
            {"action": "remove", "path": "C.md"},
        ],
    }
    body = project_context([text("x")], source).body
    assert isinstance(body, InstructionsBody)
    assert [(f.path, f.wording, f.digest) for f in body.files] == [
        ("A.md", "added", None),
        ("B.md", "updated", ""),
        ("C.md", "removed", None),
    ]


# §7.13-§7.14


def test_interleaved_unknown_block_keeps_its_place() -> None:
    view = project_context(
        [text("before"), {"type": "mystery", "n": 1}, text("after")], {"kind": "plugin", "plugin": "p"}
    )
    content = view.body.content  # type: ignore[union-attr]
    assert [p.kind for p in content] == ["text", "json", "text"]
    assert [content[0].text.text, content[2].text.text] == ["before", "after"]
    assert content[1].json.text == '{\n  "type": "mystery",\n  "n": 1\n}'


def test_adjacent_text_blocks_join_with_no_separator() -> None:
    assert texts(project_context([text("first"), text("second")], {"kind": "plugin", "plugin": "p"})) == ["firstsecond"]


def test_empty_runs_render_nothing_and_non_text_blocks_break_runs() -> None:
    view = project_context([text(""), {"type": "reasoning", "text": "r"}, text(""), text("")], {"kind": "x"})
    assert [p.kind for p in view.body.content] == ["json"]  # type: ignore[union-attr]


def test_frozen_message_content_projects_like_logged_json() -> None:
    logged = [text("a"), {"type": "image", "attachment": {"id": "i"}}, text("b")]
    source = {"kind": "plugin", "plugin": "p", "form": "notice", "summary": "s"}
    message = create_user_message(content=logged, source=source)
    assert project_context(message) == project_context(logged, source)
    assert project_context(message.content, message.source) == project_context(logged, source)


# §7.15-§7.16, §7.21-§7.24


def test_catalog_lists_entries_without_prose_or_update_notice() -> None:
    view = project_context(
        [text("<system-reminder><available_skills>…")], catalog(skill("a-skill", "Does A"), skill("b-skill", "Does B"))
    )
    assert view.rendered_form == "catalog"
    assert view.label == "skill-catalog"
    body = view.body
    assert isinstance(body, CatalogBody)
    assert [e.name + e.description for e in body.entries] == ["a-skillDoes A", "b-skillDoes B"]
    assert (body.replacement, body.more, body.blocks) == (False, 0, ())
    assert texts(view) == []


def test_replacement_catalog_is_flagged() -> None:
    body = project_context([text("x")], catalog(skill("a", ""), update=True)).body
    assert isinstance(body, CatalogBody) and body.replacement


def test_empty_replacement_catalog_is_a_catalog_with_no_entries() -> None:
    view = project_context([text("x")], catalog(update=True))
    assert view.rendered_form == "catalog"
    assert isinstance(view.body, CatalogBody)
    assert (view.body.replacement, view.body.entries, view.body.more) == (True, (), 0)


@pytest.mark.parametrize("entries", [None, "a-skill", {"name": "a", "description": "b"}, 3])
def test_non_array_entries_fall_back_to_opaque(entries: Any) -> None:
    assert_opaque(project_context([text("x")], {"kind": "skill-catalog", "form": "catalog", "entries": entries}))


def test_catalog_shows_200_entries_and_counts_the_rest() -> None:
    body = project_context([text("x")], catalog(*(skill(f"s{i}", "d") for i in range(205)))).body
    assert isinstance(body, CatalogBody)
    assert len(body.entries) == 200 and body.entries[-1].name == "s199"
    assert body.more == 5
    assert interpolate("… {count} more", {"count": body.more}) == "… 5 more"


def test_catalog_keeps_duplicate_names() -> None:
    body = project_context([text("x")], catalog(skill("a", "1"), skill("a", "2"))).body
    assert isinstance(body, CatalogBody) and [e.description for e in body.entries] == ["1", "2"]


def test_catalog_keeps_unknown_blocks_only() -> None:
    body = project_context([text("prose"), {"type": "mystery"}, text("more")], catalog(skill("a", "b"))).body
    assert isinstance(body, CatalogBody)
    assert [p.json.text for p in body.blocks] == ['{\n  "type": "mystery"\n}']


@pytest.mark.parametrize(
    "entries",
    [
        [skill("a-skill", "Does A"), {"name": "b-skill"}],
        [skill("a-skill", "Does A"), {"name": "", "description": "x"}],
        [skill("a-skill", "Does A"), {"name": 3, "description": "x"}],
        [skill("a-skill", "Does A"), {"name": "b", "description": None}],
        [skill("a-skill", "Does A"), None],
        [skill("a-skill", "Does A"), ["b", "c"]],
    ],
)
def test_partially_unreadable_catalog_falls_back_whole(entries: list[Any]) -> None:
    view = project_context([text("the catalog prose")], catalog(*entries))
    body = assert_opaque(view)
    assert texts(view) == ["the catalog prose"]
    assert [f.key for f in body.fields] == ["form", "entries"]


# §7.17-§7.19, §7.25, §7.28


def test_unreadable_instruction_list_falls_back_with_fields() -> None:
    view = project_context(
        [text("x")], {"kind": "agent-instructions", "form": "instructions", "changes": [{"action": "set"}]}
    )
    assert_opaque(view)
    assert fields(view) == {"form": "instructions", "changes": '[{"action":"set"}]'}


@pytest.mark.parametrize(
    "changes",
    [
        [{"action": "merge", "path": "AGENTS.md"}],
        [{"action": "set", "path": "A.md"}, {"action": "merge", "path": "B.md"}],
        # A duplicate is validated before it is skipped.
        [{"action": "set", "path": "A.md"}, {"action": "merge", "path": "A.md"}],
        [{"action": "set", "path": "A.md"}, None],
        [{"action": "set", "path": ""}],
        [{"action": ["set"], "path": "A.md"}],
        [],
        "AGENTS.md",
        None,
    ],
)
def test_instructions_fall_back_whole_on_any_unreadable_change(changes: Any) -> None:
    assert_opaque(
        project_context([text("x")], {"kind": "agent-instructions", "form": "instructions", "changes": changes})
    )


def test_opaque_keeps_an_unknown_form_declaration_visible() -> None:
    view = project_context([text("x")], {"kind": "plugin", "plugin": "later", "form": "a-later-form"})
    assert view.declared_form is None
    assert_opaque(view)
    assert [f.key for f in view.body.fields] == ["plugin", "form"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "source",
    [
        {"kind": "plugin", "plugin": "p", "form": "snapshot", "sections": "not-a-list"},
        {"kind": "plugin", "plugin": "p", "form": "snapshot", "sections": []},
        {"kind": "plugin", "plugin": "p", "form": "snapshot", "sections": [{"name": "a", "text": "b"}, {"name": "c"}]},
        {"kind": "plugin", "plugin": "p", "form": "snapshot", "sections": [{"name": "", "text": "b"}]},
        {"kind": "coordinator", "form": "relay"},
        {"kind": "coordinator", "form": "relay", "senderSessionId": ""},
        {"kind": "coordinator", "form": "relay", "senderSessionId": 7},
        {"kind": "session-reference", "form": "recall", "references": [{"label": "x"}]},
        {"kind": "session-reference", "form": "recall", "references": []},
        {"kind": "session-reference", "form": "recall", "references": {"label": "x"}},
        {
            "kind": "session-reference",
            "form": "recall",
            "references": [{"label": "", "retainedMessages": 1, "omittedMessages": 0, "truncated": False}],
        },
        {
            "kind": "session-reference",
            "form": "recall",
            "references": [{"label": "x", "retainedMessages": "1", "omittedMessages": 0, "truncated": False}],
        },
        {
            "kind": "session-reference",
            "form": "recall",
            "references": [{"label": "x", "retainedMessages": 1, "omittedMessages": 0, "truncated": "no"}],
        },
        {"kind": "plugin", "plugin": "p", "form": "notice"},
        {"kind": "plugin", "plugin": "p", "form": "notice", "summary": ""},
        {"kind": "plugin", "plugin": "p", "form": "notice", "summary": ["done"]},
    ],
)
def test_each_form_falls_back_when_its_facts_are_unreadable(source: dict[str, Any]) -> None:
    view = project_context([text("kept")], source)
    assert view.declared_form == source["form"]
    body = assert_opaque(view)
    assert texts(view) == ["kept"]
    assert "form" in [f.key for f in body.fields]


def test_recall_fallback_keeps_the_recall_header() -> None:
    view = project_context([text("x")], {"kind": "session-reference", "form": "recall", "references": [{"label": "x"}]})
    assert (view.role, view.title_key, view.label) == ("recall", "message.contextRecall", "x")


# §7.20


def test_oversized_source_field_is_bounded_with_its_total() -> None:
    view = project_context([text("x")], {"kind": "plugin", "plugin": "p", "blob": "y" * 21_000})
    blob = next(f.value for f in view.body.fields if f.key == "blob")  # type: ignore[union-attr]
    assert (len(blob.text), blob.truncated, blob.total) == (20_000, True, 21_000)
    assert interpolate("… truncated, {total} characters total", {"total": blob.total}).endswith(
        "21000 characters total"
    )


def test_oversized_text_run_is_cut_at_20000_units() -> None:
    run = project_context([text("a" * 15_000), text("b" * 6_000)], {"kind": "x"}).body.content[0]  # type: ignore[union-attr]
    assert isinstance(run, TextPart)
    assert (run.text.text, run.text.truncated, run.text.total) == ("a" * 15_000 + "b" * 5_000, True, 21_000)


def test_text_at_the_bound_is_not_truncated() -> None:
    run = project_context([text("a" * 20_000)], {"kind": "x"}).body.content[0]  # type: ignore[union-attr]
    assert (run.text.truncated, run.text.total) == (False, 20_000)


def test_bound_counts_utf16_units() -> None:
    # 10,000 astral characters are 20,000 JS units: at the bound, not over it.
    run = project_context([text("😀" * 10_000)], {"kind": "x"}).body.content[0]  # type: ignore[union-attr]
    assert (run.text.truncated, run.text.total) == (False, 20_000)
    run = project_context([text("😀" * 10_001)], {"kind": "x"}).body.content[0]  # type: ignore[union-attr]
    assert (run.text.text, run.text.truncated, run.text.total) == ("😀" * 10_000, True, 20_002)


def test_oversized_unknown_block_and_section_are_bounded() -> None:
    view = project_context([{"type": "blob", "data": "z" * 30_000}], {"kind": "x"})
    part = view.body.content[0]  # type: ignore[union-attr]
    assert isinstance(part, JsonPart) and part.json.truncated and utf16_len_ok(part.json.text)
    source = {"kind": "plugin", "plugin": "p", "form": "snapshot", "sections": [{"name": "s", "text": "t" * 20_001}]}
    section = project_context([text("x")], source).body.sections[0]  # type: ignore[union-attr]
    assert (len(section.text.text), section.text.truncated, section.text.total) == (20_000, True, 20_001)


def utf16_len_ok(value: str) -> bool:
    return len(value.encode("utf-16-le")) // 2 == 20_000


# §7.26


def test_snapshot_shows_sections_and_no_content() -> None:
    source = {
        "kind": "plugin",
        "plugin": "@deepseek-ai/dsh-system-prompt",
        "form": "snapshot",
        "sections": [{"name": "sandbox:policy", "text": "workspace-write"}, {"name": "workspace", "text": "/repo"}],
    }
    view = project_context([text("Current runtime context. This snapshot supersedes…"), {"type": "mystery"}], source)
    assert view.rendered_form == "snapshot"
    assert isinstance(view.body, SnapshotBody)
    assert [s.name + s.text.text for s in view.body.sections] == ["sandbox:policyworkspace-write", "workspace/repo"]
    assert not hasattr(view.body, "content")


def test_cleared_snapshot_marker_is_opaque() -> None:
    cleared = "Current runtime context: none. Earlier runtime-context snapshots no longer apply."
    view = project_context([text(cleared)], {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"})
    assert_opaque(view)
    assert texts(view) == [cleared]


# §7.27


def test_notice_summary_rides_the_header_and_the_body_is_the_content() -> None:
    source = {
        "kind": "plugin",
        "plugin": "tool-jobs",
        "form": "notice",
        "summary": "bash pnpm test [status: completed]",
    }
    view = project_context([text("job done")], source)
    assert view.rendered_form == "notice"
    assert view.summary == view.header_summary == "bash pnpm test [status: completed]"
    assert view.body.kind == "notice"
    assert texts(view) == ["job done"]


def test_notice_without_summary_has_no_summary_and_shows_fields() -> None:
    view = project_context([text("x")], {"kind": "plugin", "plugin": "tool-jobs", "form": "notice"})
    assert_opaque(view)
    assert view.header_summary is None
    assert fields(view) == {"plugin": "tool-jobs", "form": "notice"}


def test_only_a_notice_has_a_summary() -> None:
    view = project_context(
        [text("x")], {"kind": "coordinator", "form": "relay", "senderSessionId": "c", "summary": "s"}
    )
    assert (view.rendered_form, view.summary) == ("relay", None)


# §7.29


def test_relay_names_the_sender_above_the_content() -> None:
    view = project_context(
        [text("Background subagent child-7 reported:"), text("all green")],
        {"kind": "subagent-report", "form": "relay", "senderSessionId": "child-7"},
    )
    assert view.rendered_form == "relay"
    assert isinstance(view.body, RelayBody)
    assert interpolate("From session {session}", {"session": view.body.sender}) == "From session child-7"
    assert texts(view) == ["Background subagent child-7 reported:all green"]


# §7.30


def test_recall_lists_references_with_counts_then_content() -> None:
    source = {
        "kind": "session-reference",
        "form": "recall",
        "version": 1,
        "references": [
            {
                "sessionId": "s1",
                "label": "Refactor loader",
                "retainedMessages": 18,
                "omittedMessages": 42,
                "truncated": True,
            },
            {"sessionId": "s2", "label": "Fix CI", "retainedMessages": 3, "omittedMessages": 0, "truncated": False},
        ],
    }
    view = project_context([text("recalled material")], source)
    assert (view.role, view.title_key, view.rendered_form) == ("recall", "message.contextRecall", "recall")
    body = view.body
    assert isinstance(body, RecallBody)
    counts = "{retained} kept · {omitted} omitted"
    shown = [
        (r.label, interpolate(counts, {"retained": r.retained, "omitted": r.omitted}), r.truncated)
        for r in body.references
    ]
    assert shown == [("Refactor loader", "18 kept · 42 omitted", True), ("Fix CI", "3 kept · 0 omitted", False)]
    assert texts(view) == ["recalled material"]


# §7.32 and §1.6


def test_a_boolean_is_not_a_message_count() -> None:
    source = {
        "kind": "session-reference",
        "form": "recall",
        "references": [{"label": "x", "retainedMessages": True, "omittedMessages": 0, "truncated": False}],
    }
    assert_opaque(project_context([text("x")], source))


def test_truncated_must_be_a_boolean_not_a_number() -> None:
    source = {
        "kind": "session-reference",
        "form": "recall",
        "references": [{"label": "x", "retainedMessages": 1, "omittedMessages": 0, "truncated": 0}],
    }
    assert_opaque(project_context([text("x")], source))


@pytest.mark.parametrize("baseline", [1, 1.0, "true", [True], None])
def test_only_a_true_baseline_says_loaded(baseline: Any) -> None:
    source = {
        "kind": "agent-instructions",
        "form": "instructions",
        "baseline": baseline,
        "changes": [{"action": "set", "path": "AGENTS.md"}],
    }
    body = project_context([text("x")], source).body
    assert isinstance(body, InstructionsBody) and body.files[0].wording == "added"


@pytest.mark.parametrize("update", [1, "true", None])
def test_only_a_true_update_is_a_replacement(update: Any) -> None:
    body = project_context([text("x")], catalog(skill("a", "b"), update=update)).body
    assert isinstance(body, CatalogBody) and not body.replacement


def test_integral_float_counts_print_without_a_fraction() -> None:
    source = {
        "kind": "session-reference",
        "form": "recall",
        "references": [{"label": "x", "retainedMessages": 18.0, "omittedMessages": 2.5, "truncated": False}],
    }
    body = project_context([text("x")], source).body
    assert isinstance(body, RecallBody)
    assert (body.references[0].retained, body.references[0].omitted) == ("18", "2.5")


def test_opaque_fields_are_formatted_and_ordered_like_js() -> None:
    source = {
        "kind": "plugin",
        "plugin": "p",
        "b": True,
        "n": 18.0,
        "z": None,
        "10": "ten",
        "2": "two",
        "obj": {"é": [1.5, False], "3": "x"},
        "02": "zero-two",
    }
    assert list(fields(project_context([text("x")], source)).items()) == [
        ("2", "two"),
        ("10", "ten"),
        ("plugin", "p"),
        ("b", "true"),
        ("n", "18"),
        ("z", "null"),
        ("obj", '{"3":"x","é":[1.5,false]}'),
        ("02", "zero-two"),
    ]


def test_message_source_and_mapping_project_alike() -> None:
    source = {**BASELINE}
    assert context_body("instructions", [text("x")], source) == context_body(
        "instructions", [text("x")], MessageSource.of(source)
    )


def test_context_body_ignores_a_form_for_a_non_record_source() -> None:
    rendered = context_body("notice", [text("x")], "not a record")
    assert (rendered.rendered, rendered.summary, rendered.body.kind) == (None, None, "opaque")


def test_non_array_content_is_shown_not_dropped() -> None:
    view = project_context({"type": "text", "text": "odd"}, {"kind": "x"})
    assert [p.kind for p in view.body.content] == ["json"]  # type: ignore[union-attr]
    assert view.body.content[0].json.text == '{\n  "type": "text",\n  "text": "odd"\n}'  # type: ignore[union-attr]
