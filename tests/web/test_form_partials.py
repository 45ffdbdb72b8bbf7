"""Each rendered form's partial, fetched as the open row fetches it (docs/ui.md §3, §7)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.builders import LogBuilder, header
from tests.support.rows import attrs, definitions, one, select, text, texts
from tests.support.server import app_client

CASES: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {
    "interleaved": (
        [{"type": "text", "text": "before"}, {"type": "hologram", "x": 1}, {"type": "text", "text": "after"}],
        {"kind": "plugin", "plugin": "fixture"},
    ),
    "adjacent": (
        [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        {"kind": "plugin", "plugin": "fixture"},
    ),
    "oversized": ([{"type": "text", "text": "y" * 21000}], {"kind": "plugin", "plugin": "fixture", "big": "x" * 21000}),
    "empty-catalog": (
        [{"type": "text", "text": "none left"}],
        {"kind": "skill-catalog", "form": "catalog", "update": True, "entries": []},
    ),
    "later-form": ([{"type": "text", "text": "t"}], {"kind": "plugin", "plugin": "later", "form": "a-later-form"}),
    "snapshot": (
        [{"type": "text", "text": "Current runtime context. …"}],
        {
            "kind": "plugin",
            "plugin": "@deepseek-ai/dsh-system-prompt",
            "form": "snapshot",
            "sections": [{"name": "sandbox:policy", "text": "workspace-write"}, {"name": "workspace", "text": "/repo"}],
        },
    ),
    "instructions": (
        [{"type": "text", "text": "<system-reminder>x</system-reminder>"}],
        {
            "kind": "agent-instructions",
            "form": "instructions",
            "changes": [
                {"action": "set", "path": "AGENTS.md", "digest": "d1"},
                {"action": "replace", "path": "sub/AGENTS.md"},
            ],
        },
    ),
    "relay": (
        [{"type": "text", "text": "Background subagent child-7 reported:"}, {"type": "text", "text": "ok"}],
        {"kind": "subagent-report", "form": "relay", "senderSessionId": "child-7"},
    ),
    "opaque-fields": (
        [{"type": "text", "text": "line one\n\nline two"}],
        {"kind": "plugin", "plugin": "fixture", "empty": {}, "list": [], "n": 18.0, "flag": True},
    ),
    "partial-catalog": (
        [{"type": "text", "text": "catalog prose"}],
        {
            "kind": "skill-catalog",
            "form": "catalog",
            "entries": [{"name": "a-skill", "description": "Does A"}, {"name": "b-skill"}],
        },
    ),
    "notice-no-summary": ([{"type": "text", "text": "n"}], {"kind": "plugin", "plugin": "tool-jobs", "form": "notice"}),
    "snapshot-bad": (
        [{"type": "text", "text": "s"}],
        {"kind": "plugin", "plugin": "p", "form": "snapshot", "sections": "not-a-list"},
    ),
    "relay-bad": ([{"type": "text", "text": "r"}], {"kind": "coordinator", "form": "relay"}),
    "recall-bad": (
        [{"type": "text", "text": "c"}],
        {"kind": "session-reference", "form": "recall", "references": [{"label": "x"}]},
    ),
    "skill": (
        [{"type": "text", "text": '<skill_content name="a-skill">Do A.</skill_content>'}],
        {"kind": "skill-invocation", "name": "a-skill", "form": "instructions"},
    ),
    "bad-instructions": (
        [{"type": "text", "text": "x"}],
        {"kind": "agent-instructions", "form": "instructions", "changes": [{"action": "merge", "path": "AGENTS.md"}]},
    ),
}


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    b = LogBuilder()
    b.turn(1)
    seqs = {}
    for name, (content, source) in CASES.items():
        event = b.user("", source)
        event["data"]["content"] = content
        seqs[name] = event["seq"]
    path = tmp_path_factory.mktemp("forms") / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("forms"), *b.events]))
    with app_client([str(path)]) as client:
        yield {name: client.get(f"/sessions/forms/contexts/{seq}").text for name, seq in seqs.items()}


CONTEXT_TEXT = "pre[data-context-text]"
FOOTER = "\n… truncated, 21000 characters total"


def fields(html: str) -> list[tuple[str, str]]:
    """The opaque body's fields: each key and the value shown beside it."""
    return definitions(one(html, "[data-context-injection-body] > dl[data-context-fields]"))


def test_an_unknown_block_keeps_its_place_between_text_runs(bodies: dict[str, str]) -> None:
    html = bodies["interleaved"]
    assert texts(html, CONTEXT_TEXT) == ["before", "after"]
    assert texts(html, f"{CONTEXT_TEXT}, [data-json-block] > [data-json-toggle]") == [
        "before",
        "▸ Unknown content block",
        "after",
    ]


def test_adjacent_text_blocks_join_without_separator(bodies: dict[str, str]) -> None:
    assert texts(bodies["adjacent"], CONTEXT_TEXT) == ["firstsecond"]


def test_oversized_text_and_fields_end_with_the_truncation_footer(bodies: dict[str, str]) -> None:
    html = bodies["oversized"]
    assert texts(html, CONTEXT_TEXT) == ["y" * 20000 + FOOTER]
    assert dict(fields(html))["big"] == "x" * 20000 + FOOTER


def test_an_empty_replacement_catalog_still_renders_as_a_catalog(bodies: dict[str, str]) -> None:
    html = bodies["empty-catalog"]
    assert attrs(html, "[data-context-form]", "data-context-form") == ["catalog"]
    assert "Replacement catalog" in text(html, "[data-context-injection-body] > [data-context-catalog-update]")
    assert texts(html, "[data-context-entries]") == [""]
    assert not select(html, "li") and "data-context-text" not in html


def test_an_unknown_declared_form_stays_visible_in_the_fields(bodies: dict[str, str]) -> None:
    html = bodies["later-form"]
    assert "data-context-form" not in html
    assert [key for key, _ in definitions(html)] == ["plugin", "form"]
    assert dict(fields(html))["form"] == "a-later-form"


def test_snapshot_sections_replace_the_prose_and_keep_it_one_click_away(bodies: dict[str, str]) -> None:
    html = bodies["snapshot"]
    assert "Supersedes earlier snapshots" in text(html, "[data-context-snapshot-supersedes]")
    assert definitions(html) == [("sandbox:policy", "workspace-write"), ("workspace", "/repo")]
    assert definitions(one(html, "[data-context-injection-body] > dl[data-context-sections]")) == definitions(html)
    assert "data-context-text" not in html
    # the prose the model read, collapsed beneath the sections
    model_text = one(html, "[data-context-injection-body] > details.ctx-model-text[data-context-model-text]")
    assert not model_text.has_attr("open")
    assert texts(model_text, "pre") == ["Current runtime context. …"]


def test_instruction_files_carry_their_digest_and_wording(bodies: dict[str, str]) -> None:
    html = bodies["instructions"]
    files = [
        (li.get("title"), text(li, "span.path"), text(li, "span.action"))
        for li in select(html, "ul[data-context-files] > li")
    ]
    assert files == [("d1", "AGENTS.md", "added"), (None, "sub/AGENTS.md", "updated")]
    # the model's text shows as text, its tags escaped
    assert texts(html, CONTEXT_TEXT) == ["<system-reminder>x</system-reminder>"]


def test_relay_names_its_sender_above_the_text(bodies: dict[str, str]) -> None:
    html = bodies["relay"]
    assert texts(html, f"[data-context-relay-sender], {CONTEXT_TEXT}") == [
        "From session child-7",
        "Background subagent child-7 reported:ok",
    ]


def test_a_bad_instruction_action_falls_back_whole(bodies: dict[str, str]) -> None:
    html = bodies["bad-instructions"]
    assert "data-context-form" not in html and "data-context-files" not in html
    assert [key for key, _ in definitions(html)] == ["form", "changes"]
    assert [key for key, _ in fields(html)] == ["form", "changes"]


def test_the_opaque_body_shows_real_line_breaks_and_js_formatted_fields(bodies: dict[str, str]) -> None:
    html = bodies["opaque-fields"]
    assert texts(html, CONTEXT_TEXT) == ["line one\n\nline two"]
    assert (
        definitions(html)
        == fields(html)
        == [
            ("plugin", "fixture"),
            ("empty", "{}"),
            ("list", "[]"),
            ("n", "18"),
            ("flag", "true"),
        ]
    )


def test_one_unreadable_catalog_entry_sends_the_whole_catalog_to_opaque(bodies: dict[str, str]) -> None:
    html = bodies["partial-catalog"]
    assert "data-context-form" not in html and "data-context-entries" not in html
    assert texts(html, CONTEXT_TEXT) == ["catalog prose"]


@pytest.mark.parametrize("name", ["notice-no-summary", "snapshot-bad", "relay-bad", "recall-bad"])
def test_each_form_falls_back_without_a_marker(bodies: dict[str, str], name: str) -> None:
    html = bodies[name]
    assert "data-context-form" not in html
    assert "form" in [key for key, _ in fields(html)]


def test_a_skill_invocation_is_opaque_with_its_skill_content(bodies: dict[str, str]) -> None:
    html = bodies["skill"]
    assert "data-context-form" not in html
    # the skill's content shows as text, its tags escaped
    assert texts(html, CONTEXT_TEXT) == ['<skill_content name="a-skill">Do A.</skill_content>']
    assert [key for key, _ in definitions(html)] == [key for key, _ in fields(html)] == ["name", "form"]


def test_collapsed_rows_carry_no_body_and_a_notice_summary_only_when_it_rendered(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    b.user("done", {"kind": "plugin", "plugin": "tool-jobs", "form": "notice", "summary": "bash ok"})
    b.user("n", {"kind": "plugin", "plugin": "tool-jobs", "form": "notice"})
    b.user(
        '<skill_content name="a-skill">Do A.</skill_content>',
        {"kind": "skill-invocation", "name": "a-skill", "form": "instructions"},
    )
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("rows"), *b.events]))
    with app_client([str(path)]) as client:
        html = client.get("/sessions/rows").text
    rows = select(html, "div.disclosure.ctx[data-context-row]")
    assert len(rows) == 3
    assert all(not select(r, "[data-context-injection-body]") for r in rows)
    assert all(attrs(r, "[data-disclosure-row]", "aria-expanded") == ["false"] for r in rows)
    assert all(not select(r, "[data-context-recall-icon]") and select(r, "[data-disclosure-row] svg") for r in rows)
    assert texts(rows[0], "[data-disclosure-row] > span.summary[data-context-summary]") == ["bash ok"]
    assert not select(rows[1], "[data-context-summary]")
    assert texts(rows[2], "[data-disclosure-row] > span.source[data-context-source]") == ["a-skill"]
