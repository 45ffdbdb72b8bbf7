"""The suite's browser fixtures: the plugin's Chromium, a `page` per test that fails on page errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def browser(dsh_chromium: Any) -> Any:
    return dsh_chromium


@pytest.fixture
def page(chromium_page: Any) -> Iterator[Any]:
    return chromium_page
