"""A one-file export that opens light (issue 39, item 4): however long the session, the page holds a few
windows of its rows, mounted from the file's inert templates as the reader nears them, from file:// with the
network cut. Screenshots of it (`DSH_INSPECT_SHOTS`, tests/support/shots.py) go to its `39b/`."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from dsh_inspect.cli import main
from dsh_inspect.demo.generate import SESSIONS
from playwright.sync_api import Page, expect

from tests.e2e.test_render_export import nodes, open_offline, scroll_to_end
from tests.support.builders import LogBuilder, header, numbered_turns
from tests.support.shots import shot

pytestmark = pytest.mark.browser

TURNS = 500
DOM_LIMIT = 3000


@pytest.fixture(scope="module")
def long_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export-light")
    path = numbered_turns(folder / "session.jsonl", TURNS)
    out = folder / "long.html"
    assert main(["render", str(path), "-o", str(out)]) == 0
    return out


@pytest.mark.parametrize("width", [1440, 390])
def test_a_long_export_stays_small_from_its_first_row_to_its_last_and_back(
    page: Page, long_export: Path, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    requests = open_offline(page, long_export)
    expect(page.locator("[data-export-mounted='0']")).to_be_attached()
    expect(page.locator("[data-chat-flow]")).to_contain_text("prompt number 1")
    assert nodes(page) < DOM_LIMIT
    assert page.locator("template[data-export-window]").count() > 20  # long enough for windows to matter
    counts = scroll_to_end(page)
    expect(page.locator("[data-chat-flow] .flow-item", has_text=f"prompt number {TURNS}")).to_be_visible()
    shot(page, f"39b/export-long-end-{width}")
    for _ in range(8):  # and to the top, again and again: each time an earlier window comes back
        lowest = min(
            int(i)
            for i in page.locator("[data-export-mounted]").evaluate_all(
                "wins => wins.map((w) => w.getAttribute('data-export-mounted'))"
            )
        )
        page.evaluate("window.scrollTo(0, 0)")
        expect(page.locator(f"[data-export-mounted='{lowest - 1}']")).to_be_attached(timeout=15_000)
        counts.append(nodes(page))
    assert max(counts) < DOM_LIMIT
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scroll
    assert requests == []


def test_a_permalink_to_a_row_far_in_the_session_opens_there(page: Page, long_export: Path) -> None:
    page.goto(long_export.as_uri())
    text = f"prompt number {TURNS - 100}"
    expect(page.locator(".flow-item", has_text=text)).to_have_count(0)  # far from the first window
    far = page.evaluate(
        """text => { for (const chunk of document.querySelectorAll('template[data-export-window]')) {
             const rows = Array.from(chunk.content.querySelectorAll('.flow-item'));
             const row = rows.find((r) => r.textContent.includes(text));
             if (row) return row.id; } return null; }""",
        text,
    )
    assert far
    page.goto("about:blank")
    page.goto(f"{long_export.as_uri()}#{far}")  # a fresh load at the permalink
    expect(page.locator(f"[id='{far}']")).to_be_in_viewport()
    assert nodes(page) < DOM_LIMIT
    page.goto(f"{long_export.as_uri()}#{page.locator('[data-chat-flow] .flow-item').first.get_attribute('id')}")
    page.goto(f"{long_export.as_uri()}#{far}")  # and the same in the page, by its hash
    expect(page.locator(f"[id='{far}']")).to_be_in_viewport()


def test_j_walks_on_past_the_last_row_of_a_window(page: Page, long_export: Path) -> None:
    open_offline(page, long_export)
    first = page.locator("[data-export-mounted='0'] > .flow-item")
    expect(first.first).to_be_attached()
    for _ in range(first.count() + 1):
        page.keyboard.press("j")
    marked = page.locator(".flow-item[data-current]")
    expect(marked).to_have_count(1)
    expect(page.locator("[data-export-mounted='1'] .flow-item[data-current]")).to_have_count(1)


@pytest.mark.parametrize(("lang", "dark"), [("en", False), ("zh", True)])
@pytest.mark.parametrize("width", [1440, 390])
def test_the_bundled_demos_export_light_in_both_languages_and_themes(
    page: Page, tmp_path: Path, lang: str, dark: bool, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.emulate_media(color_scheme="dark" if dark else "light")
    out = tmp_path / "demo-tools.html"
    assert main(["render", str(SESSIONS), "--session", "demo-tools", "--lang", lang, "-o", str(out)]) == 0
    requests = open_offline(page, out)
    expect(page.locator("[data-export-mounted='0'] .flow-item:visible").first).to_be_visible()
    assert page.evaluate("document.documentElement.lang") == ("zh-CN" if lang == "zh" else "en")
    assert nodes(page) < DOM_LIMIT
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"39b/export-demo-tools-{lang}-{'dark' if dark else 'light'}-{width}")
    assert requests == []


@pytest.fixture(scope="module")
def bookkeeping_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session whose 4,500 bookkeeping events lie between two turns: windows of folds, a few pixels tall each."""
    log = LogBuilder()
    log.turn(1)
    for i in range(4_500):  # two kinds in turn: like events in a row would make one run row instead
        log.add(*(("session/title", {"title": f"title {i}"}) if i % 2 else ("sandbox/mode", {"mode": f"m{i}"})))
    log.turn(2)
    folder = tmp_path_factory.mktemp("export-bookkeeping")
    path = folder / "titles.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("titles"), *log.events]))
    out = folder / "titles.html"
    assert main(["render", str(path), "-o", str(out)]) == 0
    return out


def test_a_long_stretch_of_folded_bookkeeping_stays_small_and_opens(page: Page, bookkeeping_export: Path) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    open_offline(page, bookkeeping_export)
    page.locator("[data-details-toggle]").check()  # the reading view leaves closed folds out; Details shows them
    head = page.locator("[data-fold-toggle][data-fold-count='120']").first
    rows = page.locator(f"[id='{head.get_attribute('aria-controls')}'] > .flow-item")
    expect(rows).to_have_count(0)  # folded: its rows wait in a template
    head.click()
    expect(rows).to_have_count(120)
    expect(rows.first).to_be_visible()
    head.click()  # folded again
    assert max([nodes(page), *scroll_to_end(page)]) < DOM_LIMIT
    # a permalink to a row folded away in a window not mounted: its window comes, its fold opens
    far = page.evaluate(
        """() => { const chunk = document.querySelectorAll('template[data-export-window]')[3];
                   return chunk.content.querySelector('[data-fold-rows] > .flow-item').id; }"""
    )
    page.goto("about:blank")
    page.goto(f"{bookkeeping_export.as_uri()}#{far}")
    expect(page.locator(f"[id='{far}']")).to_be_in_viewport()
    assert nodes(page) < DOM_LIMIT
