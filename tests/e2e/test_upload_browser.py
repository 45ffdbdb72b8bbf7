"""Uploading in Chromium: the real file chooser, progress, landing on the session, stores, refusals, drops."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Error, Page, expect

from tests.support.server import live_server
from tests.support.uploads import jsonl_bytes, sqlite_bytes

pytestmark = pytest.mark.browser

# Records every state of the progress bar, before the page navigates away.
WATCH_PROGRESS = """
document.addEventListener("DOMContentLoaded", () => {
  const bar = document.querySelector("[data-upload-progress]");
  if (!bar) return;
  new MutationObserver(() => window.recordProgress(bar.hidden, Number(bar.value), Number(bar.max)))
    .observe(bar, { attributes: true });
});
"""


# Chromium logs every 4xx answer to an XMLHttpRequest; these tests provoke 422s on purpose.
REFUSAL = re.compile(r"^Failed to load resource: the server responded with a status of 422 ")


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """conftest's page, with the refusals these tests provoke allowed in the console."""
    context = browser.new_context(viewport={"width": 1680, "height": 1000}, locale="en-US", color_scheme="light")
    page = context.new_page()
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" and not REFUSAL.match(message.text):
            problems.append(f"console error: {message.text}")

    def on_page_error(error: Error) -> None:
        problems.append(f"page error: {error}")

    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    yield page
    context.close()
    assert not problems, problems


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server([], data_dir=str(tmp_path_factory.mktemp("data"))) as url:
        yield url


def choose(page: Page, *files: Path) -> None:
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="choose files…").click()
    assert chooser.value.is_multiple()
    chooser.value.set_files([str(f) for f in files])


def test_a_chosen_log_uploads_with_progress_and_lands_on_its_session(page: Page, server: str, tmp_path: Path) -> None:
    seen: list[tuple[bool, float, float]] = []
    page.expose_function("recordProgress", lambda hidden, value, top: seen.append((hidden, value, top)))
    page.add_init_script(WATCH_PROGRESS)
    log = tmp_path / "picked.jsonl"
    log.write_bytes(jsonl_bytes("picked-in-chromium", turns=40))
    page.goto(server + "/")
    choose(page, log)
    page.wait_for_url(re.compile(r"/sessions/picked-in-chromium$"))
    expect(page.locator("h1.page-title")).to_be_visible()
    assert "picked.jsonl" in page.locator(".session-head .path").inner_text()
    shown = [s for s in seen if not s[0]]
    assert shown, f"the progress bar never showed: {seen}"
    assert shown[-1][1] == shown[-1][2] == log.stat().st_size


def test_a_store_upload_lists_all_its_sessions(page: Page, server: str, tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    store.write_bytes(sqlite_bytes(tmp_path, ["store-a", "store-b", "store-c"]))
    page.goto(server + "/")
    choose(page, store)
    page.wait_for_url(re.compile(r"/uploads/[0-9a-f]{64}$"))
    links = page.locator("[data-upload-sessions] li a")
    expect(links).to_have_count(3)
    assert links.all_inner_texts() == ["store-a", "store-b", "store-c"]
    links.nth(1).click()
    page.wait_for_url(re.compile(r"/sessions/store-b$"))


def test_a_file_that_is_no_log_gets_its_message(page: Page, server: str, tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("remember to buy milk\n")
    page.goto(server + "/")
    choose(page, junk)
    alert = page.get_by_role("alert")
    expect(alert).to_have_text(re.compile(r"^notes\.txt is not a dsh session log: first line is not JSON"))
    expect(alert).to_contain_text("(notes.txt, line 1, byte 0)")
    assert page.url == server + "/"


def test_several_files_at_once_are_each_answered(page: Page, server: str, tmp_path: Path) -> None:
    good = tmp_path / "one.jsonl"
    good.write_bytes(jsonl_bytes("several-one"))
    other = tmp_path / "two.jsonl"
    other.write_bytes(jsonl_bytes("several-two"))
    bad = tmp_path / "three.jsonl"
    bad.write_bytes(b'{"jsonrpc":"2.0"}\n')
    page.goto(server + "/")
    choose(page, good, other, bad)
    status = page.locator("[data-upload-status]")
    expect(status).to_have_text("2 of 3 files stored")
    expect(page.locator("[data-upload-result='stored']")).to_have_count(2)
    expect(page.locator("[data-upload-result='refused']")).to_contain_text("three.jsonl")
    expect(page.locator("[data-session-list] a", has_text="several-two")).to_have_count(1)


def test_a_dropped_file_uploads_too(page: Page, server: str) -> None:
    page.goto(server + "/")
    page.evaluate(
        """() => {{
        const data = new DataTransfer();
        data.items.add(new File([{}], "dropped.jsonl"));
        document.querySelector("[data-upload-zone]").dispatchEvent(
            new DragEvent("drop", {{ dataTransfer: data, bubbles: true, cancelable: true }}));
    }}""".format(repr(jsonl_bytes("dropped-in").decode()))
    )
    page.wait_for_url(re.compile(r"/sessions/dropped-in$"))


def test_an_upload_is_deleted_from_its_page_after_a_confirmation(page: Page, server: str, tmp_path: Path) -> None:
    log = tmp_path / "doomed.jsonl"
    log.write_bytes(jsonl_bytes("doomed"))
    page.goto(server + "/")
    choose(page, log)
    page.wait_for_url(re.compile(r"/sessions/doomed$"))
    upload_url = page.request.get(f"{server}/api/sessions").json()
    digest = next(s["upload"] for s in upload_url["sessions"] if s["id"] == "doomed")
    page.goto(f"{server}/uploads/{digest}")
    page.get_by_role("button", name="Delete this upload").click()
    dialog = page.get_by_role("dialog", name="Delete the upload “doomed.jsonl”?")
    expect(dialog).to_be_visible()
    expect(dialog.locator("[data-delete-sessions] li")).to_have_text(["doomed"])
    dialog.get_by_role("button", name="Delete it").click()
    page.wait_for_url(re.compile(r"/uploads$"))
    assert page.request.get(f"{server}/api/uploads/{digest}").status == 404
