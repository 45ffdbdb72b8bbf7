"""Context rows in Chromium: bodies, geometry (docs/ui.md §4), aria shapes, keyboard, hostile text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import CORPUS
from tests.support.builders import LogBuilder, header
from tests.support.geometry import assert_context_geometry
from tests.support.server import live_server

pytestmark = pytest.mark.browser

AGENTS_TEXT = (
    "<system-reminder>\nThe following workspace instructions may be relevant to your work.\n\n"
    + "".join(f"Instruction {n}: preserve the logged context contract.\n" for n in range(1, 25))
    + "</system-reminder>"
)
AGENTS_SOURCE = {
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
}
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">{{ 7 * 7 }}'


def contexts_log(path: Path) -> Path:
    """A session with one context row of every shape the browser tests open."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Please look.")
    b.user("Short injected context.", {"kind": "plugin", "plugin": "fixture"})
    b.user(
        "job done",
        {"kind": "plugin", "plugin": "tool-jobs", "form": "notice", "summary": "bash pnpm test [status: completed]"},
    )
    b.user(
        "recalled material",
        {
            "kind": "session-reference",
            "form": "recall",
            "version": 1,
            "references": [
                {
                    "sessionId": "s-1",
                    "label": "Research notes",
                    "capturedThroughSeq": 9,
                    "compacted": False,
                    "originalMessages": 20,
                    "retainedMessages": 18,
                    "omittedMessages": 42,
                    "omittedBytes": 100,
                    "truncated": True,
                    "inputIndex": 0,
                }
            ],
        },
    )
    b.user(
        "<available_skills>…</available_skills>",
        {
            "kind": "skill-catalog",
            "form": "catalog",
            "entries": [{"name": f"skill-{i}", "description": f"Does {i}"} for i in range(205)],
        },
    )
    b.user(HOSTILE, {"kind": "plugin", "plugin": HOSTILE, "form": "notice", "summary": HOSTILE, "extra": HOSTILE})
    b.user(AGENTS_TEXT, AGENTS_SOURCE)
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("contexts"), *b.events]))
    return path


def geometry_log(path: Path) -> Path:
    """docs/ui.md §4's scenario: the seeded-history seed plus the 24-line AGENTS.md message."""
    seed = (CORPUS / "sessions/apps/web/tests/snapshots/seeded-history/seed.jsonl").read_bytes()
    message = {
        "type": "user/message",
        "surfaceOp": "append",
        "data": {
            "id": "agents-md-live",
            "role": "user",
            "content": [{"type": "text", "text": AGENTS_TEXT}],
            "source": AGENTS_SOURCE,
        },
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(seed.rstrip(b"\n") + b"\n" + orjson.dumps(message) + b"\n")
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("logs")
    contexts_log(root / "contexts" / "session.jsonl")
    paths = [str(root)]
    if CORPUS.is_dir():
        geometry_log(root / "geometry" / "seed.jsonl")
        paths.append(str(CORPUS / "sessions/examples/acp-agent/tests/snapshots/agent-instructions/session.jsonl"))
    with live_server(paths) as url:
        yield url


def open_session(page: Page, server: str, session_id: str) -> None:
    sessions = page.request.get(f"{server}/api/sessions").json()["sessions"]
    url = next(s["url"] for s in sessions if s["id"] == session_id and "agent-instructions" not in s["path"])
    page.goto(server + url)


def header_named(page: Page, name: str):  # type: ignore[no-untyped-def]
    return page.get_by_role("button", name=name, exact=True)


def test_the_real_instructions_card_shows_its_files_and_verbatim_text(
    page: Page, server: str, corpus_dir: Path
) -> None:
    sessions = page.request.get(f"{server}/api/sessions").json()["sessions"]
    url = next(s["url"] for s in sessions if "agent-instructions" in s["path"])
    page.goto(server + url)
    row = header_named(page, "Context injection AGENTS.md").first
    row.click()
    body = page.locator("[data-context-injection-body]").first
    expect(body).to_have_attribute("data-context-form", "instructions")
    assert body.locator("[data-context-files] li").all_inner_texts() == ["AGENTS.md\nloaded"]
    text = body.locator("[data-context-text]").inner_text()
    assert text.startswith("<system-reminder>") and "Root snapshot instruction." in text


def test_the_context_disclosure_geometry_matches_dsh(page: Page, server: str, corpus_dir: Path) -> None:
    open_session(page, server, "{{sessionId}}")
    assert_context_geometry(page, header_named(page, "Context injection AGENTS.md"))


def test_a_short_opaque_body_fits_without_a_scrollport(page: Page, server: str) -> None:
    open_session(page, server, "contexts")
    header_named(page, "Context injection fixture").click()
    body = page.locator("[data-context-injection-body]:not([data-context-form])")
    expect(body).to_be_visible()
    box = body.bounding_box()
    assert box is not None and box["height"] < 141
    assert body.evaluate("el => el.scrollHeight > el.clientHeight") is False
    assert body.locator("[data-context-text]").inner_text() == "Short injected context."
    assert body.locator("[data-context-fields] dt").all_inner_texts() == ["plugin"]


def test_collapsed_rows_have_dsh_aria_shapes(page: Page, server: str) -> None:
    open_session(page, server, "contexts")
    expect(header_named(page, "Context injection fixture")).to_match_aria_snapshot(
        '- button "Context injection fixture":\n  - img\n  - img\n  - text: Context injection fixture'
    )
    notice = "Context injection tool-jobs bash pnpm test [status: completed]"
    expect(header_named(page, notice)).to_match_aria_snapshot(
        f'- \'button "{notice}"\':\n  - img\n  - img\n  - text: "{notice}"'
    )
    recall = header_named(page, "Session recall Research notes")
    expect(recall).to_match_aria_snapshot(
        '- button "Session recall Research notes":\n  - img\n  - text: Session recall Research notes'
    )
    assert recall.locator("[data-context-recall-icon]").count() == 1
    recall.click()
    expect(recall).to_match_aria_snapshot(
        '- button "Session recall Research notes" [expanded]:\n  - img\n  - text: Session recall Research notes'
    )
    items_shown = page.locator("[data-context-recalls] li")
    expect(items_shown).to_have_count(1)
    items = items_shown.all_inner_texts()
    assert [re.sub(r"\s+", " ", i) for i in items] == ["Research notes 18 kept · 42 omitted truncated"]


def test_a_205_entry_catalog_lists_200_and_counts_the_rest(page: Page, server: str) -> None:
    open_session(page, server, "contexts")
    header_named(page, "Context injection skill-catalog").click()
    body = page.locator("[data-context-injection-body][data-context-form='catalog']")
    expect(body.locator("[data-context-entries] li")).to_have_count(200)
    assert body.locator("[data-context-entries-truncated]").inner_text() == "… 5 more"
    assert body.locator("[data-context-text]").count() == 0
    model_text = body.locator("details[data-context-model-text]")
    expect(model_text).not_to_have_attribute("open", "")
    model_text.locator("summary").click()
    assert "<available_skills>" in model_text.inner_text()


def test_enter_and_space_toggle_a_focused_row(page: Page, server: str) -> None:
    open_session(page, server, "contexts")
    button = header_named(page, "Context injection fixture")
    button.focus()
    page.keyboard.press("Enter")
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(page.locator("[data-context-injection-body]")).to_have_count(1)
    scroll = page.evaluate("window.scrollY")
    page.keyboard.press(" ")
    expect(button).to_have_attribute("aria-expanded", "false")
    expect(page.locator("[data-context-injection-body]")).to_have_count(0)
    assert page.evaluate("window.scrollY") == scroll, "Space must not scroll the page"
    expect(button).to_be_focused()
    for key in ("a", "ArrowDown", "Escape"):
        page.keyboard.press(key)
    # had another key toggled it, this Enter would close it again
    page.keyboard.press("Enter")
    expect(button).to_have_attribute("aria-expanded", "true")


def test_hostile_content_renders_as_text_and_runs_nothing(page: Page, server: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    # the hostile image's address answers, with no image: a broken image, and no 404 in the console
    asked: list[str] = []
    page.route("**/x", lambda route: (asked.append(route.request.url), route.fulfill(body="not an image")))
    open_session(page, server, "contexts")
    row = page.locator("[data-context-row]").filter(has=page.locator("[data-context-summary]", has_text="<script>"))
    header = row.locator("[data-disclosure-row]")
    assert row.locator("[data-context-source]").inner_text() == HOSTILE
    header.click()
    body = row.locator("[data-context-injection-body]")
    expect(body).to_be_visible()
    assert body.locator("[data-context-text]").inner_text() == HOSTILE
    # An image the hostile text became would have asked for its address, failed and run its handler by the time
    # one made after it has: wait for that one instead of a while.
    page.evaluate("() => new Promise(failed => Object.assign(new Image(), {onerror: failed, src: 'x'}))")
    assert len(asked) == 1, f"only the probe asked for the hostile image's address: {asked}"
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src='x']").count() == 0
    assert "49" not in body.inner_text()
    assert not dialogs
