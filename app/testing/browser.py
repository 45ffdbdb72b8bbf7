"""Launching Debian's Chromium for Playwright (its own browser download cannot run here), and how a test's
page opens in it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
VIEWPORT = {"width": 1680, "height": 1000}
HIDE_SCROLLBARS = "--hide-scrollbars"  # one of Playwright's default arguments for a headless Chromium


def chromium_path() -> str | None:
    """`$DSH_INSPECT_CHROMIUM`, else `chromium` on PATH, else Debian's /usr/bin/chromium."""
    for candidate in (os.environ.get("DSH_INSPECT_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


@dataclass(frozen=True, slots=True)
class PageSettings:
    """How a test's page opens: the `dsh_browser` marker's arguments."""

    locale: str = "en-US"
    viewport: tuple[int, int] = (VIEWPORT["width"], VIEWPORT["height"])
    color_scheme: Literal["light", "dark"] = "light"
    scrollbars: bool = False  # drawn (and taking their width), as on a desktop, or hidden

    @classmethod
    def of(cls, asked: Mapping[str, Any]) -> PageSettings:
        """The settings a marker asked for (its keyword arguments), checked: they come from a test's code."""
        settings = cls(**asked)
        size: Any = settings.viewport
        if not (isinstance(size, tuple) and len(size) == 2 and all(isinstance(n, int) and n > 0 for n in size)):
            raise ValueError(f"viewport must be (width, height) in pixels, not {size!r}")
        scheme: Any = settings.color_scheme
        if scheme not in ("light", "dark"):
            raise ValueError(f"color_scheme must be 'light' or 'dark', not {scheme!r}")
        locale: Any = settings.locale
        if not isinstance(locale, str) or not locale:
            raise ValueError(f"locale must be a language tag such as 'zh-CN', not {locale!r}")
        return settings

    def context_options(self) -> dict[str, Any]:
        width, height = self.viewport
        return {
            "viewport": {"width": width, "height": height},
            "locale": self.locale,
            "color_scheme": self.color_scheme,
        }


class Chromiums:
    """The Chromiums of a test session, launched when first asked for: scrollbars hidden, or drawn."""

    def __init__(self, playwright: Any) -> None:
        self._playwright = playwright
        self._browsers: dict[bool, Any] = {}

    def browser(self, *, scrollbars: bool) -> Any:
        if scrollbars not in self._browsers:
            path = chromium_path()
            if path is None:
                raise RuntimeError("no Chromium found: install Debian's chromium package or set DSH_INSPECT_CHROMIUM")
            self._browsers[scrollbars] = self._playwright.chromium.launch(
                executable_path=path,
                args=list(CHROMIUM_ARGS),
                ignore_default_args=[HIDE_SCROLLBARS] if scrollbars else None,
            )
        return self._browsers[scrollbars]

    def close_contexts_on(self, url: str) -> None:
        """Close every context with a page open on `url` (a server about to stop)."""
        for browser in self._browsers.values():
            for context in browser.contexts:
                if any(page.url.startswith(url) for page in context.pages):
                    context.close()

    def close(self) -> None:
        for browser in self._browsers.values():
            browser.close()
        self._browsers.clear()
