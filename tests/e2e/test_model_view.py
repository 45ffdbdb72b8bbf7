"""From a transcript row to what the model read, to a message's identity, and back, in Chromium."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.request_logs import compaction_between_calls, write_log
from tests.support.server import live_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("logs")
    write_log(root / "compaction" / "session.jsonl", compaction_between_calls().events, "compaction")
    with live_server([str(root)]) as url:
        yield url


def test_a_transcript_row_opens_its_model_view_and_an_identity_page_and_comes_back(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/compaction")
    row = page.locator('[data-chat-flow-kind="assistant-step"]').filter(has_text="You read alpha.")
    row.locator("[data-step-link]").click()

    expect(page).to_have_url(re.compile(r"/sessions/compaction/steps/2\.1$"))
    expect(page.locator("[data-call]")).to_have_count(2)
    expect(page.locator('[data-call="1"]')).to_have_attribute("data-outcome", "failed")
    answered = page.locator("[data-call][data-answered]")
    expect(answered.locator("[data-outcome-label]")).to_have_text("Answered")
    expect(page.locator("[data-request-diff]").first).to_contain_text("Compaction")
    messages = answered.locator(".mv-message")
    expect(messages).to_have_count(2)
    expect(messages.nth(0)).to_have_attribute("data-role", "user")
    expect(messages.nth(0)).to_have_attribute("data-source-kind", "plugin")

    # a message's body loads when its row opens, and closes again
    prompt = messages.nth(1).locator("[data-disclosure-row]")
    prompt.click()
    expect(prompt).to_have_attribute("aria-expanded", "true")
    expect(messages.nth(1).locator("[data-message-body]")).to_contain_text("Now summarize what you read")
    prompt.press("Enter")
    expect(messages.nth(1).locator("[data-message-body]")).to_have_count(0)

    checkpoint_id = messages.nth(0).get_attribute("data-message-id")
    assert checkpoint_id
    messages.nth(0).locator("[data-identity-link]").click()
    expect(page.locator("[data-identity]")).to_have_attribute("data-message-id", checkpoint_id)
    expect(page.locator("[data-shadows] [data-identity-link]")).to_have_count(4)
    expect(page.locator("[data-requests] [data-step-link]")).to_have_text(["Turn 2 step 1, call 2"])

    page.locator("[data-back-to-transcript]").click()
    expect(page).to_have_url(re.compile(r"/sessions/compaction#msg-"))
    target = page.locator(f'[id="msg-{checkpoint_id}"]')
    expect(target).to_be_in_viewport()

    page.go_back()
    expect(page.locator("[data-identity]")).to_be_visible()
    page.go_back()
    expect(page).to_have_url(re.compile(r"/steps/2\.1$"))
    expect(page.locator("[data-model-view]")).to_be_visible()


def test_the_budget_chart_leads_to_a_step(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/compaction")
    page.locator("[data-budget-link]").click()
    chart = page.locator("[data-budget-chart] svg[data-budget-plot]")
    expect(chart).to_be_visible()
    expect(chart.locator("[data-marker]")).to_have_count(1)
    page.locator('[data-bar="2.1"] rect').first.click()
    expect(page).to_have_url(re.compile(r"/steps/2\.1$"))


def test_a_tool_rows_identity_link_opens_its_result_message(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/compaction")
    row = page.locator('[data-chat-flow-kind="tool-call"]')
    row.locator("[data-disclosure-row]").click()
    shown = row.locator("[data-row-message]")
    expect(shown).to_be_visible()
    result_id = shown.inner_text()
    row.locator("[data-identity-link]").click()

    expect(page).to_have_url(re.compile(r"/sessions/compaction/messages/"))
    identity = page.locator("[data-identity]")
    expect(identity).to_have_attribute("data-message-id", result_id)
    expect(page.locator('[data-carrier="message"]').first.locator(".tag")).to_have_text("tool/result")
