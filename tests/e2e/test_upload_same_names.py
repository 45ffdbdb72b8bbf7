"""dsh names every log it writes alike: several `session.jsonl.zstd` picked at once in the upload zone are
each stored, and each listed (issue 30: before, only the last one was)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.server import live_server
from tests.support.uploads import zstd_bytes

pytestmark = pytest.mark.browser

SESSIONS = ("named-alike-1", "named-alike-2", "named-alike-3", "named-alike-4")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server([], data_dir=str(tmp_path_factory.mktemp("data"))) as url:
        yield url


def test_logs_named_alike_picked_at_once_are_every_one_listed(page: Page, server: str, tmp_path: Path) -> None:
    picked = []
    for sid in SESSIONS:  # as dsh keeps them: each in its session's folder, each under the same name
        folder = tmp_path / sid
        folder.mkdir()
        (folder / "session.jsonl.zstd").write_bytes(zstd_bytes(tmp_path, sid))
        picked.append(str(folder / "session.jsonl.zstd"))
    page.goto(server + "/")
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="choose files…").click()
    chooser.value.set_files(picked)
    expect(page.locator("[data-upload-status]")).to_have_text(f"{len(SESSIONS)} of {len(SESSIONS)} files stored")
    page.goto(server + "/")
    for sid in SESSIONS:
        expect(page.locator("[data-session-list] a", has_text=sid)).to_have_count(1)
    page.goto(server + "/uploads")
    for sid in SESSIONS:  # the uploads page tells the four `session.jsonl.zstd` apart by their sessions
        expect(page.locator("main").get_by_role("link", name=sid, exact=True)).to_have_count(1)
