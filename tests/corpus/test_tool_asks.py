"""Real dsh logs (issue 41, item 1): every call of a tool whose card shows what it asked is in the shape the
card reads (dsh's own argument names), and every search result's meta lists, so no real card falls back to
the JSON its reader had before."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from dsh_inspect.forms.tool_outcomes import search_listing
from dsh_inspect.forms.tools import present_tool

pytestmark = pytest.mark.corpus

ASKING = {"bash", "pwsh", "read", "web_fetch", "grep", "glob", "web_search", "write", "edit", "run_code"}


def events(corpus: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted(corpus.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(event, dict) and isinstance(event.get("data"), dict):
                found.append(event)
    return found


def test_every_real_call_of_an_asking_tool_shows_what_it_asked(corpus_dir: Path) -> None:
    calls = [e["data"] for e in events(corpus_dir) if e.get("type") == "tool/call"]
    asked = [c for c in calls if c.get("name") in ASKING]
    assert not [c for c in asked if present_tool(c["name"], c.get("arguments")).ask is None]
    # the corpus holds most of these tools: the test reads real shapes, not none
    assert len(Counter(c["name"] for c in asked)) >= 7


def test_every_real_search_meta_lists(corpus_dir: Path) -> None:
    metas = [e["data"]["meta"] for e in events(corpus_dir) if e.get("type") == "tool/result" and "meta" in e["data"]]
    searches = [m for m in metas if isinstance(m, dict) and m.get("shape") in ("matches", "paths")]
    assert searches and all(search_listing(m) is not None for m in searches)
