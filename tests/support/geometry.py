"""docs/ui.md §4's geometry and style contract for an open context row, asserted in Chromium."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect


def assert_context_geometry(page: Any, button: Any) -> None:
    """All sixteen rows of docs/ui.md §4 for the instructions row behind `button`."""
    expect(button).to_have_attribute("aria-expanded", "false")  # 1
    icon = button.locator("svg").first.bounding_box()
    assert icon is not None and (icon["width"], icon["height"]) == (14, 14)  # 2
    assert page.locator("[data-context-injection-body]").count() == 0
    button.click()
    expect(button).to_have_attribute("aria-expanded", "true")  # 3
    body = page.locator("[data-context-injection-body]")
    expect(body).to_be_visible()
    assert body.locator("[data-context-files] li").all_inner_texts() == ["AGENTS.md\nloaded"]  # 4
    assert "<system-reminder>" in body.locator("[data-context-text]").inner_text()  # 5
    head = button.bounding_box()
    box = body.bounding_box()
    assert head is not None and box is not None
    assert head["height"] == 24  # 6
    assert box["x"] - head["x"] == 22  # 7
    assert box["y"] - head["y"] - head["height"] == 4  # 8
    assert box["height"] == 141  # 9
    style = body.evaluate("""el => { const s = getComputedStyle(el); return {
        bg: s.backgroundColor, radius: s.borderRadius, color: s.color, size: s.fontSize, line: s.lineHeight,
        padding: [s.paddingTop, s.paddingRight, s.paddingBottom, s.paddingLeft],
        scrolls: el.scrollHeight > el.clientHeight }; }""")
    assert style["bg"] == "rgb(249, 250, 251)"  # 10
    assert style["radius"] == "8px"  # 11
    assert style["color"] == "rgb(129, 133, 140)"  # 12
    assert (style["size"], style["line"]) == ("11px", "16px")  # 13
    assert style["padding"] == ["10px", "16px", "12px", "12px"]  # 14
    assert style["scrolls"] is True  # 15
    button.click()
    expect(button).to_have_attribute("aria-expanded", "false")  # 16
    assert page.locator("[data-context-injection-body]").count() == 0


def left_edges(page: Any, selectors: list[str]) -> list[float]:
    """The left edge, in CSS pixels, of the first element each selector finds on the page."""
    edges = []
    for selector in selectors:
        box = page.locator(selector).first.bounding_box()
        assert box is not None, f"{selector} is not laid out"
        edges.append(box["x"])
    return edges


def on_one_line(page: Any, container: str) -> bool:
    """Whether the visible controls inside `container` (inputs, selects, buttons, labels, outputs, links; a
    visually hidden one, one placed out of the container's flow (absolute, or inside what is: the session's
    head in the margin) and a label's own checkbox aside) sit on one line: one band crosses every one."""
    boxes = page.locator(container).first.evaluate("""el => [...el.querySelectorAll(
            'input, select, button, label, output, a')]
        .filter(e => {
            for (let up = e; up && up !== el; up = up.parentElement) {
                if (getComputedStyle(up).position === 'absolute') return false;
            }
            return e.offsetParent !== null;
        })
        .filter(e => e.tagName === 'LABEL' || !e.closest('label, .visually-hidden'))
        .map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0)
        .map(r => [r.top, r.bottom])""")
    assert boxes, f"nothing laid out in {container}"
    return max(top for top, _ in boxes) < min(bottom for _, bottom in boxes)
