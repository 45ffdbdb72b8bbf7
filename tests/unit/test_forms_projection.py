"""Header projection and row classification (docs/ui.md §1.2-§1.3, §0; §7 items 1-8, 31, 33-35).

Item 33's ordering and item 34's "precedes the Session recall row" are about
the transcript builder's sort; here we pin the pure decisions they rest on.
"""

from __future__ import annotations

import pytest
from dsh_inspect.forms import (
    ContextView,
    context_form,
    context_provenance,
    project_context,
    session_recall_labels,
)
from dsh_inspect.model.messages import create_user_message
from dsh_inspect.model.values import MessageSource


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


# §7.1-§7.4


def test_plugin_source_is_labelled_by_its_plugin_id() -> None:
    p = context_provenance({"kind": "plugin", "plugin": "dsh-tool-skill"})
    assert (p.role, p.label) == ("inject", "dsh-tool-skill")


def test_agent_instructions_label_is_distinct_paths_in_first_seen_order() -> None:
    source = {
        "kind": "agent-instructions",
        "changes": [
            {"action": "set", "path": "AGENTS.md"},
            {"action": "set", "path": "sub/AGENTS.md"},
            {"action": "replace", "path": "AGENTS.md"},
        ],
    }
    assert context_provenance(source).label == "AGENTS.md, sub/AGENTS.md"


def test_session_reference_is_a_recall_labelled_by_joined_labels() -> None:
    source = {"kind": "session-reference", "references": [{"label": "Refactor the loader"}, {"label": "Fix CI"}]}
    p = context_provenance(source)
    assert (p.role, p.label, p.title_key) == ("recall", "Refactor the loader, Fix CI", "message.contextRecall")


def test_unknown_kind_is_labelled_by_the_kind() -> None:
    p = context_provenance({"kind": "subagent-report", "senderSessionId": "x"})
    assert (p.role, p.label, p.title_key) == ("inject", "subagent-report", "message.contextInjection")


# §7.5


@pytest.mark.parametrize(
    ("source", "label"),
    [
        ({"kind": "plugin"}, "plugin"),
        ({"kind": "plugin", "plugin": ""}, "plugin"),
        ({"kind": "plugin", "plugin": 7}, "plugin"),
        ({"kind": "skill-invocation"}, "skill-invocation"),
        ({"kind": "skill-invocation", "name": ""}, "skill-invocation"),
        ({"kind": "skill-invocation", "name": 7}, "skill-invocation"),
        ({"kind": "agent-instructions"}, "agent-instructions"),
        ({"kind": "agent-instructions", "changes": []}, "agent-instructions"),
        ({"kind": "agent-instructions", "changes": "AGENTS.md"}, "agent-instructions"),
        ({"kind": "agent-instructions", "changes": [{"action": "set"}, None]}, "agent-instructions"),
        ({"kind": "agent-instructions", "changes": [{"path": ""}, {"path": 7}]}, "agent-instructions"),
    ],
)
def test_label_falls_back_to_the_kind_when_the_name_field_is_unusable(source: dict, label: str) -> None:
    assert context_provenance(source) == context_provenance(MessageSource.of(source))
    p = context_provenance(source)
    assert (p.role, p.label) == ("inject", label)


def test_session_reference_without_references_keeps_role_and_kind_label() -> None:
    for references in ([], "x", [None, {"label": ""}, {"label": 3}]):
        p = context_provenance({"kind": "session-reference", "references": references})
        assert (p.role, p.label) == ("recall", "session-reference")


def test_lenient_label_reader_skips_unreadable_entries() -> None:
    source = {"kind": "agent-instructions", "changes": [None, {"path": "A.md"}, "B.md", {"path": "A.md"}]}
    assert context_provenance(source).label == "A.md"


# §7.6


@pytest.mark.parametrize(
    "source",
    [None, "plugin", [{"kind": "plugin"}], {"plugin": "fixture"}, {"kind": 42}, {"kind": ""}, {"kind": True}, 7, True],
)
def test_unreadable_source_is_the_unnamed_injection(source: object) -> None:
    p = context_provenance(source)
    assert (p.role, p.label, p.title_key) == ("inject", None, "message.contextInjection")


def test_undefined_source_is_the_unnamed_injection() -> None:
    # JS `undefined` has no JSON spelling; a message source without `kind` is the closest.
    assert context_provenance(MessageSource.of({})).label is None


def test_role_comes_from_kind_never_from_form() -> None:
    assert context_provenance({"kind": "plugin", "plugin": "p", "form": "recall"}).role == "inject"
    assert context_provenance({"kind": "session-reference", "form": "notice"}).role == "recall"


# §7.7


@pytest.mark.parametrize("form", ["instructions", "catalog", "snapshot", "notice", "relay", "recall"])
def test_context_form_reads_each_known_form(form: str) -> None:
    assert context_form({"kind": "plugin", "form": form}) == form
    assert context_form(MessageSource.of({"kind": "plugin", "form": form})) == form


@pytest.mark.parametrize(
    "source",
    [
        {"kind": "plugin"},
        {"kind": "plugin", "form": "a-later-form"},
        {"kind": "plugin", "form": ""},
        {"kind": "plugin", "form": 7},
        {"kind": "plugin", "form": ["notice"]},
        {"kind": "plugin", "form": {"notice": 1}},
        None,
        "instructions",
        ["instructions"],
    ],
)
def test_context_form_is_null_for_anything_else(source: object) -> None:
    assert context_form(source) is None


# §7.8


def test_session_recall_labels_are_distinct_and_only_from_session_reference() -> None:
    source = {"kind": "session-reference", "references": [{"label": "A"}, {"label": "B"}, {"label": "A"}]}
    assert session_recall_labels(source) == ("A", "B")
    assert session_recall_labels({"kind": "session-reference", "references": "corrupt"}) == ()
    assert session_recall_labels({"kind": "session-reference", "references": [None, {"label": ""}]}) == ()
    assert session_recall_labels({"kind": "plugin", "references": [{"label": "A"}]}) == ()
    assert session_recall_labels(None) == ()


# §7.31


def test_label_less_header_has_the_title_alone_even_for_a_notice() -> None:
    view = project_context([text("x")], {"form": "notice", "summary": "done"})
    assert (view.title_key, view.label, view.header_summary) == ("message.contextInjection", None, None)
    # The body still renders the notice (docs/ui.md §2.1 edge case); only the header hides it.
    assert view.rendered_form == "notice"
    assert view.summary == "done"


def test_labelled_notice_header_carries_the_summary() -> None:
    view = project_context(
        [text("x")],
        {"kind": "plugin", "plugin": "tool-jobs", "form": "notice", "summary": "bash pnpm test [status: completed]"},
    )
    assert (view.label, view.header_summary) == ("tool-jobs", "bash pnpm test [status: completed]")


# §7.33 and §7.34 (which rows a log's messages become) are transcript tests:
# tests/unit/test_transcript.py.


def test_recall_context_is_titled_session_recall_with_joined_labels() -> None:
    source = {
        "kind": "session-reference",
        "form": "recall",
        "references": [{"label": "Research notes"}, {"label": "Fix CI"}],
    }
    view = project_context([text("recalled")], source)
    assert (view.role, view.title_key, view.label) == ("recall", "message.contextRecall", "Research notes, Fix CI")


# §7.35


def test_skill_invocation_is_opaque_and_labelled_by_the_skill_name() -> None:
    body = '<skill_content name="review">\nReview the diff.\n</skill_content>'
    message = create_user_message(
        content=[text(body)], source={"kind": "skill-invocation", "name": "review", "form": "instructions"}
    )
    view = project_context(message)
    assert isinstance(view, ContextView)
    assert (view.role, view.label, view.declared_form, view.rendered_form) == ("inject", "review", "instructions", None)
    assert view.body.kind == "opaque"
    assert view.body.content[0].text.text == body
    assert [f.key for f in view.body.fields] == ["name", "form"]


def test_project_context_needs_a_source_for_bare_content() -> None:
    with pytest.raises(TypeError):
        project_context([text("x")])
    # None is a loggable source, not "missing".
    assert project_context([text("x")], None).label is None
