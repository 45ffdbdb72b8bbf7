"""`dsh-inspect render` output in Chromium from file://, with the network cut: rows open and show their bodies,
images show, and the keyboard walks the rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_inspect.cli import main
from dsh_inspect.demo.generate import SESSIONS
from playwright.sync_api import Page, Request, expect

from tests.support.bombs import tiny_records_jsonl
from tests.support.media import export_zip_with_image

pytestmark = pytest.mark.browser


def render(tmp_path: Path, session_id: str) -> Path:
    out = tmp_path / f"{session_id}.html"
    assert main(["render", str(SESSIONS), "--session", session_id, "-o", str(out)]) == 0
    return out


def open_offline(page: Page, path: Path) -> list[str]:
    """Open the file with the network cut; returns every non-file request the page makes."""
    requests: list[str] = []

    def on_request(request: Request) -> None:
        if not request.url.startswith("file://"):
            requests.append(request.url)

    page.context.set_offline(True)
    page.on("request", on_request)
    page.goto(path.as_uri())
    return requests


def nodes(page: Page) -> int:
    """Every node of the page: elements, text, comments (a template's rows are none until mounted)."""
    walk = "() => { const w = document.createTreeWalker(document); let n = 0; while (w.nextNode()) n++; return n; }"
    return int(page.evaluate(walk))


def scroll_to_end(page: Page) -> list[int]:
    """Scrolled to the end as static/export.js mounts the windows beyond what it holds; the page's nodes at each
    step. A step waits for a later last window than the step before, not for a given window: one scroll may bring
    several short windows, and one brought may go again before it is looked for (past 2,400 nodes, those out of
    view go), never to come back while the reader goes on down."""
    last = page.locator("[data-chat-flow] > template[data-export-window]").count() - 1
    latest = page.locator("[data-chat-flow] > [data-export-mounted]").last
    reached = int(latest.get_attribute("data-export-mounted") or 0)
    counts = []
    while reached < last:
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        # a window's rows are laid out before the next edge is watched: on a loaded machine that can take seconds
        expect(latest).not_to_have_attribute("data-export-mounted", str(reached), timeout=15_000)
        reached = int(latest.get_attribute("data-export-mounted") or 0)
        counts.append(nodes(page))
    return counts


def test_every_context_form_opens_from_file_without_a_network(page: Page, tmp_path: Path) -> None:
    requests = open_offline(page, render(tmp_path, "demo-context-forms"))
    rows = page.locator("[data-context-row] [data-disclosure-row]")
    expect(rows).to_have_count(6)
    forms = []
    for n in range(6):
        rows.nth(n).click()
        expect(rows.nth(n)).to_have_attribute("aria-expanded", "true")
        body = page.locator("[data-context-row]").nth(n).locator("[data-context-injection-body]")
        expect(body).to_be_visible()
        forms.append(body.get_attribute("data-context-form"))
    assert forms == ["instructions", "catalog", "snapshot", "notice", "relay", "recall"]
    files = page.locator("[data-context-form='instructions'] [data-context-files] li")
    assert files.all_inner_texts() == ["AGENTS.md\nloaded", "docs/AGENTS.md\nloaded"]
    rows.first.click()
    expect(page.locator("[data-context-row]").first.locator("[data-context-injection-body]")).to_have_count(0)
    assert requests == []


def test_tool_rows_and_fallbacks_show_their_bodies_offline(page: Page, tmp_path: Path) -> None:
    requests = open_offline(page, render(tmp_path, "demo-tools"))
    failed = page.locator("[data-tool='edit'][data-state='error'] [data-disclosure-row]").first
    failed.click()
    output = page.locator("[data-tool='edit'][data-state='error'] [data-tool-output]").first
    expect(output).to_contain_text("old_string not found in README.md")
    page.locator("[data-theme-toggle]").click()
    assert page.evaluate("document.documentElement.dataset.theme") in ("dark", "light")
    assert requests == []


def test_opaque_fallbacks_render_their_fields_offline(page: Page, tmp_path: Path) -> None:
    open_offline(page, render(tmp_path, "demo-context-fallbacks"))
    rows = page.locator("[data-context-row] [data-disclosure-row]")
    expect(rows).to_have_count(9)
    rows.nth(4).click()
    body = page.locator("[data-context-injection-body]")
    expect(body).to_have_count(1)
    assert body.get_attribute("data-context-form") is None
    assert body.locator("[data-context-fields] dt").all_inner_texts() == ["form", "senderSessionId"]


def test_an_export_zip_image_shows_from_the_file_itself(page: Page, tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    export_zip_with_image(archive)
    out = tmp_path / "image.html"
    assert main(["render", str(archive), "-o", str(out)]) == 0
    requests = open_offline(page, out)
    image = page.locator("img[data-image]")
    expect(image).to_have_count(1)
    image.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('img[data-image]').complete")
    assert image.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [1, 1]  # decoded, not a broken icon
    assert requests == []


def test_the_export_keeps_no_server_chrome_and_j_k_walk_its_rows(page: Page, tmp_path: Path) -> None:
    requests = open_offline(page, render(tmp_path, "demo-tools"))
    expect(page.locator("[data-search], [data-follow], [data-live], a[href^='/'], [hx-get]")).to_have_count(0)
    rows = page.locator("[data-chat-flow] > [data-window] > .flow-item:visible")  # j and k walk the rows shown
    marked = page.locator(".flow-item[data-current]")
    page.keyboard.press("j")
    expect(marked).to_have_attribute("id", rows.nth(0).get_attribute("id") or "")
    page.keyboard.press("j")
    expect(marked).to_have_attribute("id", rows.nth(1).get_attribute("id") or "")
    page.keyboard.press("k")
    expect(marked).to_have_attribute("id", rows.nth(0).get_attribute("id") or "")
    # j reaches the first tool row and Enter opens it: its body comes from the file
    tool_at = next(n for n in range(rows.count()) if rows.nth(n).locator("[data-tool-card], [data-tool]").count())
    for _ in range(tool_at):
        page.keyboard.press("j")
    header = rows.nth(tool_at).locator("[data-disclosure-row]").first
    expect(header).to_be_focused()
    page.keyboard.press("Enter")
    expect(header).to_have_attribute("aria-expanded", "true")
    expect(rows.nth(tool_at).locator("[data-tool-output]")).to_be_visible()
    assert requests == []


def test_a_run_row_opens_to_its_events_and_a_permalink_to_one_opens_the_run(page: Page, tmp_path: Path) -> None:
    log = tiny_records_jsonl(tmp_path / "tiny.jsonl", 5_000)
    out = tmp_path / "tiny.html"
    assert main(["render", str(log), "-o", str(out)]) == 0
    requests = open_offline(page, out)
    scroll_to_end(page)  # past the diagnostics the tiny records bring, each a row
    run = page.locator("details[data-run]")
    expect(run).to_have_count(1)
    events = run.locator("[data-run-events]")
    expect(events).to_be_hidden()
    run.locator("summary").click()
    expect(events).to_be_visible()
    expect(events).to_contain_text('#2500 {"seq":2500,"time":0}')
    page.goto("about:blank")
    page.goto(out.as_uri() + "#seq-2500")  # a row's anchor, as the served page names the event
    expect(page.locator("details[data-run][open]")).to_be_in_viewport()
    assert requests == []
