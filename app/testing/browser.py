"""Launching Debian's Chromium for Playwright (its own browser download cannot run here)."""

from __future__ import annotations

import os
import shutil

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


def chromium_path() -> str | None:
    """`$DSH_INSPECT_CHROMIUM`, else `chromium` on PATH, else Debian's /usr/bin/chromium."""
    for candidate in (os.environ.get("DSH_INSPECT_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.path.exists(candidate):
            return candidate
    return None
