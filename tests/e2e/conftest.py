"""The suite's browser fixtures: the plugin's Chromium, a `page` per test that fails on page errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

# How long an `expect` waits for what it asks before it fails, unless it says: Playwright's 5 s is short for a
# page that reads a long log first on a busy machine, and a browser test asserts what the page shows, not how
# fast (speed is measured by benchmarks/). A test passing waits no longer for it.
expect.set_options(timeout=10_000)


@pytest.fixture(scope="module")
def browser(dsh_chromium: Any) -> Any:
    return dsh_chromium


@pytest.fixture
def page(chromium_page: Any) -> Iterator[Any]:
    return chromium_page
