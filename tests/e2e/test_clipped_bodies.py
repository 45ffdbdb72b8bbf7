"""A body clipped to its box (issue 41 item 2): an instructions card opens as dsh's 141px scroll box (docs/ui.md
§4), shows that it scrolls, has chips that take the box to each file's section and mark it, and an "Expand" that
shows the whole body in place; any other clipped body has the "Expand" too, in either language."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.builders import LogBuilder, header
from tests.support.server import live_server

pytestmark = pytest.mark.browser

FILES = ("AGENTS.md", "docs/AGENTS.md")
INSTRUCTIONS = (
    "<system-reminder>\nThe following workspace instructions may be relevant to your work.\n\n"
    + "".join(
        f"Instructions from: {path}\n\n" + "".join(f"Rule {n} of {path}: keep the contract.\n" for n in range(1, 16))
        for path in FILES
    )
    + "</system-reminder>"
)
SOURCE = {
    "kind": "agent-instructions",
    "form": "instructions",
    "baseline": True,
    "changes": [{"action": "set", "scope": f".\u0000{p}", "path": p, "digest": f"d-{p}"} for p in FILES],
}
LONG_PLUGIN = "".join(f"plugin line {n}\n" for n in range(1, 41))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("clipped")
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Please look.")
    b.user(INSTRUCTIONS, SOURCE)
    b.user(LONG_PLUGIN, {"kind": "plugin", "plugin": "long"})
    b.user("Short injected context.", {"kind": "plugin", "plugin": "short"})
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    path = root / "clipped" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("clipped"), *b.events]))
    tool = LogBuilder()  # a read whose result runs past its card's section, the text's own box inside it
    tool.add("turn/start", {"turn": 1})
    tool.add("step/start", {"turn": 1, "step": 1})
    tool.user("Read it")
    tool.assistant(1, 1, [{"type": "tool-call", "id": "c1", "name": "read", "arguments": '{"file_path": "a.txt"}'}])
    tool.tool_round(1, 1, "c1", "".join(f"line {n} of a.txt\n" for n in range(1, 60)))
    tool.add("step/end", {"turn": 1, "step": 1})
    tool.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    path = root / "tool" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("tool"), *tool.events]))
    with live_server([str(root)]) as url:
        yield url


def opened(page: Page, name: str) -> Any:
    """The body of the context row called `name`, opened."""
    row = page.locator("[data-context-row]").filter(has=page.get_by_role("button", name=name, exact=True))
    row.get_by_role("button", name=name, exact=True).click()
    return row


def box_of(row: Any) -> dict[str, float]:
    return row.locator("[data-context-injection-body]").evaluate(
        "el => ({height: el.getBoundingClientRect().height, scroll: el.scrollHeight, top: el.scrollTop})"
    )


def test_the_instructions_box_opens_at_dshs_141px_and_says_it_scrolls(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/clipped")
    row = opened(page, "Context injection AGENTS.md, docs/AGENTS.md")
    body = row.locator("[data-context-injection-body]")
    expect(body).to_have_attribute("data-clipped", "")
    assert box_of(row)["height"] == 141, "first open keeps dsh's geometry"
    expect(body).to_have_css("background-color", "rgb(249, 250, 251)")
    assert body.evaluate("el => getComputedStyle(el).backgroundImage") != "none", "a shade says there is more below"
    body.evaluate("el => { el.scrollTop = el.scrollHeight; }")  # at the end the shade has nothing to say


def test_expand_shows_the_whole_body_in_place_and_collapse_brings_the_box_back(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/clipped")
    row = opened(page, "Context injection AGENTS.md, docs/AGENTS.md")
    expand = row.get_by_role("button", name="Expand")
    expand.click()
    box = box_of(row)
    assert box["height"] == box["scroll"] > 141, "the whole body, nothing left to scroll"
    expect(row.get_by_text("Rule 15 of docs/AGENTS.md: keep the contract.", exact=False)).to_be_visible()
    row.get_by_role("button", name="Collapse").click()
    assert box_of(row)["height"] == 141


def test_a_chip_takes_the_box_to_its_files_section_and_marks_it(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/clipped")
    row = opened(page, "Context injection AGENTS.md, docs/AGENTS.md")
    chips = row.locator("[data-section-chip]")
    expect(chips).to_have_text(["AGENTS.md loaded", "docs/AGENTS.md loaded"])
    chips.nth(1).click()
    mark = row.locator("mark[data-section-mark]")
    expect(mark).to_have_text("Instructions from: docs/AGENTS.md")
    expect(chips.nth(1)).to_have_attribute("aria-pressed", "true")
    inside = mark.evaluate("""m => {
        const box = m.closest('[data-context-injection-body]').getBoundingClientRect();
        const r = m.getBoundingClientRect();
        return r.top >= box.top && r.bottom <= box.bottom;
    }""")
    assert inside, "the section's heading is in the box's view"
    assert box_of(row)["top"] > 0
    chips.nth(0).click()
    expect(mark).to_have_text("Instructions from: AGENTS.md")
    expect(row.locator("mark[data-section-mark]")).to_have_count(1)


def test_any_clipped_body_expands_and_a_short_one_has_nothing_to_expand(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/clipped")
    long = opened(page, "Context injection long")
    long.get_by_role("button", name="Expand").click()
    expect(long.get_by_text("plugin line 40")).to_be_in_viewport()
    short = opened(page, "Context injection short")
    expect(short.locator("[data-context-injection-body]")).not_to_have_attribute("data-clipped", "")
    expect(short.get_by_role("button", name="Expand")).to_have_count(0)


def test_the_chips_and_expand_speak_chinese(browser: Browser, server: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(f"{server}/sessions/clipped")
        row = opened(page, "上下文注入 AGENTS.md, docs/AGENTS.md")
        expect(row.locator("[data-section-chip]")).to_have_text(["AGENTS.md 已载入", "docs/AGENTS.md 已载入"])
        row.get_by_role("button", name="展开").click()
        expect(row.get_by_role("button", name="收起")).to_be_visible()
    finally:
        context.close()


def test_a_tool_cards_boxes_expand_together_from_one_button(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/tool")
    page.locator(".flow-item[data-chat-flow-kind='tool-call'] [data-disclosure-row][data-expandable]").click()
    expand = page.get_by_role("button", name="Expand")
    expect(expand).to_have_count(1)  # the section and the text inside it: one button, after the section
    expand.click()
    expect(page.get_by_text("line 59 of a.txt")).to_be_in_viewport()
    uncapped = page.locator(".card-section, .card-pre").evaluate_all(
        "els => els.every(el => el.scrollHeight <= el.clientHeight + 1)"
    )
    assert uncapped, "nothing left to scroll inside the card"
    expect(page.locator("[data-clipped]")).to_have_count(0)
