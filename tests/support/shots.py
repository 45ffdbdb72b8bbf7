"""Screenshots of browser tests, for a person to look at: taken only when `DSH_INSPECT_SHOTS` names a folder
(`DSH_INSPECT_SHOTS=/tmp/shots pytest -m browser ...`), so that an ordinary run spends nothing on them."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Page

FOLDER = "DSH_INSPECT_SHOTS"


def shot(page: Page, name: str, *, full_page: bool = False) -> None:
    """The page as it shows now, as `{name}.png` under the folder (`name` may hold a subfolder: the issue's)."""
    folder = os.environ.get(FOLDER)
    if not folder:
        return
    path = Path(folder) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=full_page)
