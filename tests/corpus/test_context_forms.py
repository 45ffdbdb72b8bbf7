"""Every context message in the real corpus projects to a form (docs/ui.md §0, §1).

The transcript decides which messages are context rows (append-origin
`user/message`s whose source kind is not `user`); each must project.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_inspect.forms import project_context
from dsh_inspect.history.transcript import transcript_rows
from dsh_inspect.model.frozen import thaw

from tests.support.logs import load_path

pytestmark = pytest.mark.corpus

AGENT_INSTRUCTIONS = Path("examples/acp-agent/tests/snapshots/agent-instructions/session.jsonl")
# Producers that declare a form without the facts it needs (docs/ui.md §1.5).
KNOWN_OPAQUE = {("skill-invocation", None), ("plugin", "tool-cordis")}


def context_messages(path: Path) -> Iterator[dict[str, Any]]:
    """The messages the transcript shows as context rows, as logged."""
    log = load_path(path)
    for row in transcript_rows(log)[1]:
        if row.kind == "context":
            yield thaw(log.event(row.seq).data)


def test_every_corpus_context_message_renders_a_form(corpus_dir: Path) -> None:
    logs = sorted((corpus_dir / "sessions").rglob("*.jsonl"))
    assert logs, "the corpus holds no session logs"
    rendered: Counter[str] = Counter()
    for log in logs:
        for data in context_messages(log):
            source = data.get("source")
            view = project_context(data.get("content"), source)
            where = f"{log.relative_to(corpus_dir)}: {source!r:.200}"
            assert view.label is not None, where
            producer = (source.get("kind"), source.get("plugin"))
            if view.declared_form is not None and producer not in KNOWN_OPAQUE:
                assert view.rendered_form == view.declared_form, where
            rendered[view.body.kind] += 1
    assert rendered["opaque"] and rendered["instructions"] and rendered["snapshot"], rendered


def test_agent_instructions_renders_as_instructions(corpus_dir: Path) -> None:
    log = corpus_dir / "sessions" / AGENT_INSTRUCTIONS
    views = [project_context(d.get("content"), d.get("source")) for d in context_messages(log)]
    instructions = [v for v in views if v.label == "AGENTS.md"]
    assert instructions, [v.label for v in views]
    for view in instructions:
        assert view.rendered_form == "instructions"
        assert view.body.kind == "instructions"
        assert [(f.path, f.wording) for f in view.body.files] == [("AGENTS.md", "loaded")]  # type: ignore[union-attr]
        assert "<system-reminder>" in view.body.content[0].text.text  # type: ignore[union-attr]
