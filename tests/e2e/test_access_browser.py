"""Access control as a person meets it in Chromium (docs/decisions/0020-access-control.md): sent to sign in,
signed in with a token, an admin making a token in the page (its secret shown once) and revoking it, a
revoked token signing its browser out, and a viewer who sees no upload or delete controls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dsh_inspect.access import Tokens
from dsh_inspect.store import UploadStore
from dsh_inspect.testing.plugin import PAGE_WATCH
from playwright.sync_api import Page, expect

from tests.support.server import live_server
from tests.support.uploads import jsonl_bytes

pytestmark = pytest.mark.browser


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    data = tmp_path / "data"
    tokens = Tokens(UploadStore(data).access)
    secrets = {role: tokens.create(role, role)[1] for role in ("admin", "viewer")}
    with live_server([], data_dir=str(data), require_auth=True) as url:
        made = httpx.post(
            f"{url}/api/uploads",
            params={"name": "session.jsonl"},
            content=jsonl_bytes("guarded-session"),
            headers={"Authorization": f"Bearer {secrets['admin']}"},
        )
        assert made.status_code == 201
        yield url, secrets


def sign_in(page: Page, url: str, secret: str, where: str = "/") -> None:
    page.goto(url + where)
    expect(page).to_have_url(f"{url}/auth/sign-in?next={where}")
    page.get_by_label("API token").fill(secret)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(url + where)


def test_an_admin_makes_a_token_in_the_page_and_revokes_it(page: Page, guarded: tuple[str, dict[str, str]]) -> None:
    url, secrets = guarded
    sign_in(page, url, secrets["admin"], "/uploads")
    expect(page.locator("[data-identity]")).to_have_text("Signed in as token:admin (admin) · every project")
    page.locator("[data-tokens-link]").click()
    page.get_by_label("Name", exact=True).fill("laptop")
    page.get_by_label("Role").select_option("viewer")
    page.get_by_role("button", name="Create a token").click()
    secret = page.locator("[data-token-secret]").inner_text()
    assert secret.startswith("dshi_")
    assert httpx.get(f"{url}/api/sessions", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    page.goto(url + "/tokens")  # shown once: never again
    expect(page.locator("[data-token-secret]")).to_have_count(0)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke token laptop").click()
    expect(page.locator('[data-token="laptop"]')).to_have_attribute("data-token-usable", "false")
    assert httpx.get(f"{url}/api/sessions", headers={"Authorization": f"Bearer {secret}"}).status_code == 401
    page.goto(url + "/audit?action=token.revoke")
    expect(page.locator("[data-audit-entry]")).to_have_count(1)


def test_a_viewer_reads_but_is_offered_no_upload_or_delete(page: Page, guarded: tuple[str, dict[str, str]]) -> None:
    url, secrets = guarded
    sign_in(page, url, secrets["viewer"], "/uploads")
    expect(page.locator("[data-uploads-region] tr[data-upload]")).to_have_count(1)
    expect(page.locator("[data-upload-zone]")).to_have_count(0)
    expect(page.locator("[data-upload-delete]")).to_have_count(0)
    expect(page.locator("[data-tokens-link]")).to_have_count(0)


def test_a_revoked_token_signs_its_browser_out(
    page: Page, guarded: tuple[str, dict[str, str]], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url, secrets = guarded
    sign_in(page, url, secrets["viewer"], "/")
    expect(page.locator("[data-summary-pending]")).to_have_count(0)  # the list's own requests are done
    Tokens(UploadStore(tmp_path / "data").access).revoke("viewer")
    # the list's next refresh (a script's request, refused with 401) takes the whole page to sign in
    expect(page).to_have_url(f"{url}/auth/sign-in?next=/", timeout=15_000)
    expect(page.get_by_label("API token")).to_be_visible()
    # Chromium logs the refused request itself as a console error: expected here, and only that one
    watch = request.node.stash[PAGE_WATCH]
    assert all("status of 401" in p for p in watch.problems), watch.problems
    watch.problems.clear()


def test_a_member_is_offered_the_delete_of_its_own_uploads_only(
    page: Page, guarded: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, _ = guarded
    _, secret = Tokens(UploadStore(tmp_path / "data").access).create("member", "member")
    made = httpx.post(
        f"{url}/api/uploads",
        params={"name": "mine.jsonl"},
        content=jsonl_bytes("members-own"),
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert made.json()["upload"]["uploadedBy"] == "token:member"
    sign_in(page, url, secret, "/uploads")
    expect(page.locator("[data-uploads-region] tr[data-upload]")).to_have_count(2)
    expect(page.locator("[data-upload-delete]")).to_have_count(1)
    expect(page.locator(f'tr[data-upload="{made.json()["upload"]["digest"]}"] [data-upload-delete]')).to_have_count(1)
