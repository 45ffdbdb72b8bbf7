"""One Chromium per module, a fresh en-US 1680×1000 page per test that fails on page errors."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Error, Page, sync_playwright

CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_path() -> str:
    path = os.environ.get("DSH_INSPECT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.fail(f"Chromium not found at {path}: install Debian's chromium package (make test does)")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1680, "height": 1000}, locale="en-US", color_scheme="light")
    page = context.new_page()
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"console error: {message.text}")

    def on_page_error(error: Error) -> None:
        problems.append(f"page error: {error}")

    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    yield page
    context.close()
    assert not problems, problems
