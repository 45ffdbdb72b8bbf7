"""Comparing from the session page in Chromium: "Compare with…" leads to the chooser, the parent is
offered first, and the compare page marks where the fork parted; a fold of same rows opens."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.builders import header
from tests.support.runs import fork_pair, tool_run, write_log
from tests.support.server import live_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("compare-browser")
    fork_pair(root / "lineage")
    write_log(root / "x" / "session.jsonl", tool_run("alpha", seed=1, turns=40).events, header("run-x"))
    write_log(root / "y" / "session.jsonl", tool_run("beta", seed=2, turns=40).events, header("run-y"))
    with live_server([str(root)], window_rows=30) as url:
        yield url


def test_compare_with_leads_to_the_divergence_marked(server: str, page: Any) -> None:
    page.goto(f"{server}/sessions/session-fork")
    page.get_by_role("link", name="Compare with…").click()
    expect(page).to_have_url(f"{server}/compare?a=session-fork")
    page.locator("[data-suggested]").get_by_role("link", name="Compare with session-parent").click()
    expect(page.locator("[data-compare]")).to_have_attribute("data-same", "false")
    expect(page).to_have_url(f"{server}/compare?a=session-fork&b=session-parent")
    parted = page.locator('[data-compare-step][data-divergence~="first"]')
    expect(parted).to_have_attribute("data-step-a", "2.1")
    expect(parted.locator('[data-divergence-marker="first"]')).to_have_text("first divergence")
    # the changed prompt, word by word: what the fork (A) asked, what the parent (B) asked instead
    prompt = page.locator('[data-compare-row][data-status="changed"][data-kind="prompt"]')
    expect(prompt.locator('[data-side="a"] del').first).to_have_text("Now")
    expect(prompt.locator('[data-side="a"] .compare-text')).to_have_text("Now write b.txt")
    expect(prompt.locator('[data-side="b"] .compare-text')).to_have_text("Read it again (2)")
    # the seeded stretch before it is folded; opened, it shows the inherited steps, all the same
    fold = page.locator("details[data-fold]").first
    expect(fold.locator("summary")).to_contain_text("rows the same")
    fold.locator("summary").click()
    expect(fold.locator("[data-compare-step]").first).to_have_attribute("data-status", "same")
    expect(fold.locator("[data-inherited]").first).to_be_visible()
    # a divergence links to the model view of its step
    page.locator('[data-divergence-summary="first"] a[data-divergence-link="a"]').click()
    expect(page).to_have_url(f"{server}/sessions/session-fork/steps/2.1")


def test_a_long_comparison_loads_its_rows_a_window_at_a_time(server: str, page: Any) -> None:
    page.goto(f"{server}/compare?a=run-x&b=run-y")
    steps = page.locator("[data-compare-step]")
    first = steps.count()
    assert 0 < first < 80  # 40 turns of two steps each differ: the first window holds a few of them
    for _ in range(40):  # each window's loader fetches the next as it comes into view
        if steps.count() == 80:
            break
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        page.wait_for_timeout(150)
    expect(steps).to_have_count(80)
    expect(page.locator("[data-compare-next]")).to_have_count(0)
    expect(steps.last).to_have_attribute("data-step-a", "40.2")
