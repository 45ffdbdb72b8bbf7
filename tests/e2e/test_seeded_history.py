"""Our own seeded-history scenario, written with the dsh_inspect plugin as a user would (docs/ui.md §4):
seed the upstream seed plus a manual /compact, open it cold, check the transcript's aria golden,
then append the 24-line AGENTS.md message live and check its geometry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dsh_inspect.history.session import load_session
from dsh_inspect.log.sources import discover
from dsh_inspect.testing.seeding import fixture_events
from playwright.sync_api import expect

from tests.conftest import CORPUS
from tests.support.geometry import assert_context_geometry

pytestmark = pytest.mark.browser  # on the corpus too (`corpus_dir`): its lane is the one that needs Chromium

SEED = CORPUS / "sessions/apps/web/tests/snapshots/seeded-history/seed.jsonl"
AGENTS_TEXT = (
    "<system-reminder>\nThe following workspace instructions may be relevant to your work.\n\n"
    + "".join(f"Instruction {n}: preserve the logged context contract.\n" for n in range(1, 25))
    + "</system-reminder>"
)
AGENTS_MESSAGE = {
    "type": "user/message",
    "surfaceOp": "append",
    "data": {
        "id": "agents-md-live",
        "role": "user",
        "content": [{"type": "text", "text": AGENTS_TEXT}],
        "source": {
            "kind": "agent-instructions",
            "form": "instructions",
            "baseline": True,
            "changes": [
                {
                    "action": "set",
                    "scope": ".\u0000AGENTS.md",
                    "path": "AGENTS.md",
                    "digest": "context-injection-browser-snapshot",
                }
            ],
        },
    },
}


def with_manual_compact(events: list[dict[str, Any]], surface: list[int]) -> list[dict[str, Any]]:
    """The seed followed by a standalone `/compact` lifecycle (docs/format.md §5.6)."""
    n = len(events)
    summary = "## Session summary\n\nRead `a.txt` and `b.txt` in one step, then replied **DONE**."
    ids = {"commandId": "cmd-compact", "compactionId": "cmp-1"}
    return [
        *events,
        {"type": "command/run", "data": {"commandId": "cmd-compact", "name": "compact", "source": {"kind": "user"}}},
        {"type": "compaction/start", "data": {"compactionId": "cmp-1", "sourceCommandId": "cmd-compact", "turn": None}},
        {
            "type": "compaction/summary",
            "data": {
                "compactionId": "cmp-1",
                "sourceCommandId": "cmd-compact",
                "summary": [{"type": "text", "text": summary}],
                "shadowedRange": {"start": surface[0], "end": surface[-1]},
                "shadowedSeqs": surface,
                "shadowedTokenCount": 412,
                "provider": "deepseek-official",
                "model": "deepseek-v4-flash",
            },
        },
        {
            "type": "user/message",
            "surfaceOp": {"op": "replace", "start": surface[0], "end": surface[-1]},
            "sourceEventSeqs": [n + 1, n + 2, *surface],
            "data": {
                "id": "checkpoint-1",
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "<context_checkpoint>\n<compacted-summary>\n"
                        + summary
                        + "\n</compacted-summary>\n</context_checkpoint>",
                    }
                ],
                "source": {
                    "kind": "plugin",
                    "plugin": "compact",
                    "compactionId": "cmp-1",
                    "sourceCommandId": "cmd-compact",
                },
            },
        },
        {"type": "compaction/end", "data": {"compactionId": "cmp-1", "sourceCommandId": "cmd-compact", "turn": None}},
        {
            "type": "command/done",
            "data": {
                "commandId": ids["commandId"],
                "kind": "success",
                "text": f"Compacted {len(surface)} history items",
            },
        },
    ]


def test_the_seeded_history_reads_cold_and_takes_a_live_instructions_message(
    seed_session: Any, append_events: Any, chromium_page: Any, aria_golden: Any, corpus_dir: Path
) -> None:
    (source,) = discover([str(SEED)]).sources
    surface = load_session(source).surface
    _, events = fixture_events(SEED)
    url = seed_session(with_manual_compact(events, surface))
    page = chromium_page
    page.goto(url)
    marker = page.get_by_role(
        "button", name=f"compact Compacted {len(surface)} history items (~412 tokens)", exact=True
    )
    expect(marker).to_be_visible()
    assert page.get_by_text("context_checkpoint").count() == 0
    aria_golden(page.locator("[data-chat-flow]"), "goldens/seeded-history.aria.yml")
    append_events(url, [AGENTS_MESSAGE])
    button = page.get_by_role("button", name="Context injection AGENTS.md", exact=True)
    expect(button).to_be_visible(timeout=10000)
    assert_context_geometry(page, button)
