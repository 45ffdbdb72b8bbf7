"""The uploads page in Chromium (issue 30): uploads all named `session.jsonl` told apart by their sessions'
titles, times in the reader's zone, and a delete from the list that names what goes before it goes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.server import live_server
from tests.web.test_uploads_page import titled_log, upload

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server([], data_dir=str(tmp_path_factory.mktemp("data"))) as url:
        yield url


def test_an_upload_is_deleted_from_the_list_after_a_confirmation_naming_it(page: Page, server: str) -> None:
    with httpx.Client(base_url=server) as client:
        kept = upload(client, titled_log("keep-me", "Keep this one"))
        doomed = upload(client, titled_log("doomed-run", "Fix the flaky login test"))
    page.goto(f"{server}/uploads")
    rows = page.locator("[data-upload-list] tbody tr")
    expect(rows).to_have_count(2)
    row = page.locator(f"tr[data-upload='{doomed['digest']}']")
    # the title fills in once read, and the time is worded in the reader's zone
    expect(row.locator("a[data-session-title]")).to_have_text("Fix the flaky login test")
    expect(row.locator("time")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d$"))
    assert row.locator("time").get_attribute("data-local-time") is None

    row.get_by_role("button", name="Delete session.jsonl").click()
    dialog = page.get_by_role("dialog", name="Delete the upload “session.jsonl”?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Its bytes go, and with them its session, for everyone using this server:")
    expect(dialog.locator("[data-delete-sessions] li")).to_have_text(["Fix the flaky login test · doomed-run"])
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert httpx.get(f"{server}/api/uploads/{doomed['digest']}").status_code == 200, "a cancel deletes nothing"

    row.get_by_role("button", name="Delete session.jsonl").click()
    expect(dialog.locator("[data-delete-sessions] li")).to_have_text(["Fix the flaky login test · doomed-run"])
    dialog.get_by_role("button", name="Delete it").click()
    expect(rows).to_have_count(1)
    expect(page.locator(f"tr[data-upload='{kept['digest']}']")).to_be_visible()
    expect(page.locator("[data-uploads-count]")).to_have_text("1 upload")
    assert httpx.get(f"{server}/api/uploads/{doomed['digest']}").status_code == 404
    assert httpx.get(f"{server}/sessions/doomed-run").status_code == 404
    assert [s["id"] for s in httpx.get(f"{server}/api/sessions").json()["sessions"]] == ["keep-me"]


def test_logs_chosen_on_the_page_join_its_list(page: Page, server: str, tmp_path: Path) -> None:
    files = []
    for n, title in enumerate(["First of two", "Second of two"]):
        (tmp_path / str(n)).mkdir()
        files.append(tmp_path / str(n) / "session.jsonl")
        files[-1].write_bytes(titled_log(f"chosen-{n}", title))
    page.goto(f"{server}/uploads")
    expect(page.get_by_text("Nothing uploaded yet.")).to_be_visible()
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="choose files…").click()
    chooser.value.set_files([str(f) for f in files])
    expect(page.locator("[data-upload-status]")).to_have_text("2 of 2 files stored")
    titles = page.locator("[data-upload-list] a[data-session-title]")
    expect(titles).to_have_count(2)  # without a reload, titles read
    expect(page.locator("[data-upload-list] [data-summary-pending]")).to_have_count(0)
    assert sorted(titles.all_inner_texts()) == ["First of two", "Second of two"]
    expect(page.locator("[data-uploads-count]")).to_have_text("2 uploads")


def test_the_list_keeps_to_the_page_at_a_phone_width_in_either_theme_and_language(
    browser: Browser, server: str
) -> None:
    with httpx.Client(base_url=server) as client:
        for n in range(3):
            title = "为缓存层添加单元测试 " * (n + 1)
            upload(client, titled_log(f"narrow-{n}-with-a-rather-long-session-identifier", title))
    for locale, scheme in (("en-US", "light"), ("zh-CN", "dark")):
        context = browser.new_context(viewport={"width": 390, "height": 844}, locale=locale, color_scheme=scheme)
        page = context.new_page()
        page.goto(f"{server}/uploads")
        expect(page.locator("[data-upload-list] [data-summary-pending]")).to_have_count(0)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, "nothing runs off the side"
        title = page.locator(".page-title").bounding_box()
        for row in page.locator("[data-upload-list] tbody tr").all():
            box = row.bounding_box()
            assert title and box and box["x"] == title["x"] and box["x"] + box["width"] <= 390 - 16
            name = row.locator("[data-upload-name]").bounding_box()
            delete = row.locator("button[data-upload-delete]").bounding_box()
            assert name and delete and delete["y"] < name["y"] + name["height"], "its delete beside its name"
        context.close()
