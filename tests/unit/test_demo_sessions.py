"""The bundled demo sessions: reproducible, committed as generated, and covering what they promise."""

from __future__ import annotations

from pathlib import Path

from dsh_inspect.cli import context_counts, default_paths
from dsh_inspect.demo.generate import SESSIONS, build
from dsh_inspect.forms import project_context

from tests.support.logs import load_all


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_committed_files_are_exactly_what_the_generator_writes(tmp_path: Path) -> None:
    build(tmp_path / "a")
    build(tmp_path / "b")
    assert tree(tmp_path / "a") == tree(tmp_path / "b"), "the generator is not deterministic"
    assert tree(tmp_path / "a") == tree(SESSIONS), "app/demo/sessions is stale: run python -m dsh_inspect.demo.generate"


def test_serve_shows_the_demo_when_given_no_path() -> None:
    assert default_paths()[0] == str(SESSIONS)


def test_the_demo_covers_every_form_fallback_outcome_and_defect() -> None:
    logs = {log.header.id: log for log in load_all(SESSIONS) if log.header}
    verdicts = {sid: log.verdict.category for sid, log in logs.items()}
    assert verdicts == {
        "demo-context-forms": "accepted",
        "demo-context-fallbacks": "accepted",
        "demo-tools": "accepted",
        "demo-compaction": "accepted",
        "demo-subagent-parent": "accepted",
        "demo-subagent-child": "accepted",
        "demo-crash": "repaired",
        "demo-corrupt": "refused",
    }
    assert all(not [d for d in log.diagnostics if d.severity == "warning"] for log in logs.values())
    forms = context_counts(logs["demo-context-forms"])
    assert forms == {"instructions": 1, "catalog": 1, "snapshot": 1, "notice": 1, "relay": 1, "recall": 1, "opaque": 0}
    fallbacks = logs["demo-context-fallbacks"]
    declared = [
        project_context(e.message).declared_form
        for e in fallbacks.events()
        if e.type == "user/message" and e.message and e.message.source.kind != "user"
    ]
    assert set(declared) >= {"instructions", "catalog", "snapshot", "notice", "relay", "recall"}
    assert context_counts(fallbacks)["opaque"] == len(declared) == 9

    tools = logs["demo-tools"]
    results = [e for e in tools.events() if e.type == "tool/result"]
    failed = [e for e in results if isinstance(e.data, dict) and "error" in e.data]
    assert len(results) == 5 and len(failed) == 2
    assert {"hook/invoked", "hook/result", "approval/asked", "approval/decided", "todo/write"} <= set(tools.types)

    compaction = logs["demo-compaction"]
    assert {"compaction/start", "compaction/summary", "compaction/end", "command/run"} <= set(compaction.types)
    assert len(compaction.history_at()) < sum(1 for t in compaction.types if t in ("user/message", "assistant/message"))

    child = logs["demo-subagent-child"]
    assert child.header.parent_session == "demo-subagent-parent" and child.header.origin == "subagent"
    assert "relay" in {
        project_context(e.message).rendered_form
        for e in logs["demo-subagent-parent"].events()
        if e.type == "user/message" and e.message
    }

    crash = logs["demo-crash"]
    assert crash.closers and crash.tail and crash.tail[-1].kind == "pending"
    assert logs["demo-corrupt"].verdict.location is not None
