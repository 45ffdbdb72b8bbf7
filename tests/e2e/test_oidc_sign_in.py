"""People sign in through a real OpenID Connect provider on this machine (panva's `oidc-provider`, tests/oidc/),
in Chromium, and their groups decide what they see (docs/decisions/0021-sign-in.md): alice (team-a) only
team-a's sessions, bob (team-b) only team-b's, carol (a group mapped to nothing) nothing; signing out ends it;
an expired or tampered session cookie is refused, and an htmx partial asked for with one sends the page to
sign in."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from dsh_inspect.testing.plugin import PAGE_WATCH
from dsh_inspect.web.sign_in import SESSION_COOKIE, session_key
from itsdangerous import TimestampSigner
from playwright.sync_api import Page, expect

from tests.support.oidc_provider import (
    CLIENT_ID,
    CLIENT_SECRET,
    PASSWORDS,
    TEAM_A,
    client_secret,
    free_port,
    oidc_provider,
    team_logs,
)
from tests.support.server import live_server

pytestmark = pytest.mark.browser


@dataclass(frozen=True, slots=True)
class SignedServer:
    url: str
    issuer: str


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignedServer]:
    root = tmp_path_factory.mktemp("oidc")
    logs, access = team_logs(root)
    issuer = f"http://127.0.0.1:{free_port()}"
    settings = {"oidc_issuer": issuer, "oidc_client_id": CLIENT_ID, "access_file": str(access)}
    with (
        client_secret(),
        live_server([str(logs)], data_dir=str(root / "data"), **settings) as url,
        oidc_provider([f"{url}/auth/callback"], port=int(issuer.rsplit(":", 1)[1])),
    ):
        yield SignedServer(url, issuer)


def expected(request: pytest.FixtureRequest, status: int) -> None:
    """Chromium logs a page answered with an error status as a console error: here, the answer asserted."""
    watch = request.node.stash[PAGE_WATCH]
    assert all(f"status of {status}" in p for p in watch.problems), watch.problems
    watch.problems.clear()


@pytest.fixture(autouse=True)
def provider_favicon(page: Page, server: SignedServer) -> None:
    """The provider (not under test) has no favicon: Chromium's ask for one would be a console error whenever
    it lands before the provider's page is left, which depends on timing alone."""
    page.route(f"{server.issuer}/favicon.ico", lambda route: route.fulfill(status=204))


def sign_in(page: Page, server: SignedServer, user: str) -> None:
    page.goto(server.url + "/")
    expect(page).to_have_url(f"{server.url}/auth/sign-in?next=/")
    page.get_by_role("link", name="Sign in with your company account").click()
    expect(page).to_have_url(re.compile("^" + re.escape(server.issuer) + "/"))  # the provider's own page
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill(PASSWORDS[user])
    page.get_by_role("button", name="Continue").click()
    expect(page).to_have_url(server.url + "/")


def test_alice_sees_team_a_and_bob_team_b_only(
    page: Page, server: SignedServer, request: pytest.FixtureRequest
) -> None:
    sign_in(page, server, "alice")
    expect(page.locator("[data-identity]")).to_have_attribute("data-identity", "user:alice@example.test")
    expect(page.locator("[data-identity-projects]")).to_have_text(TEAM_A)
    expect(page.locator("[data-session-list] a", has_text="team-a-session")).to_have_count(1)
    expect(page.locator("[data-session-list] a", has_text="team-b-session")).to_have_count(0)
    page.goto(server.url + "/sessions/team-b-session")
    expect(page.locator("[data-missing]")).to_be_visible()  # hidden answers as missing
    expected(request, 404)
    page.locator("[data-sign-out]").click()
    expect(page).to_have_url(f"{server.url}/auth/sign-in")
    page.goto(server.url + "/")
    expect(page).to_have_url(f"{server.url}/auth/sign-in?next=/")  # signing out ended it
    page.context.clear_cookies()  # bob at his own browser: the provider's own sign-in of alice is not his
    sign_in(page, server, "bob")
    expect(page.locator("[data-session-list] a", has_text="team-b-session")).to_have_count(1)
    expect(page.locator("[data-session-list] a", has_text="team-a-session")).to_have_count(0)
    expect(page.locator("[data-upload-zone]")).to_have_count(0)  # a viewer of team-b uploads nothing


def test_a_person_whose_groups_map_to_nothing_sees_nothing(
    page: Page, server: SignedServer, request: pytest.FixtureRequest
) -> None:
    sign_in_anywhere = page.goto(server.url + "/auth/login?next=/")
    assert sign_in_anywhere is not None
    page.get_by_label("Username").fill("carol")
    page.get_by_label("Password").fill(PASSWORDS["carol"])
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("[data-refused]")).to_have_attribute("data-refused", "403")
    expect(page.locator("[data-refused-detail]")).to_contain_text("no group of theirs is granted anything")
    expect(page.locator("[data-identity-role]")).to_have_attribute("data-identity-role", "none")
    expected(request, 403)


def forged(server: SignedServer, person: dict[str, object], *, age: int = 0) -> str:
    """A session cookie as the server signs one, `age` seconds old (itsdangerous's timestamp)."""

    class Then(TimestampSigner):
        def get_timestamp(self) -> int:
            return super().get_timestamp() - age

    data = base64.b64encode(json.dumps({"person": person}).encode())
    return Then(session_key(CLIENT_SECRET)).sign(data).decode()


def test_an_expired_or_tampered_session_cookie_is_refused(server: SignedServer) -> None:
    dave = {"sub": "dave", "email": "dave@example.test", "name": "Dave", "groups": ["admins"], "at": 0}
    fresh = forged(server, dave)
    asked = {"HX-Request": "true", "HX-Current-URL": f"{server.url}/sessions/team-a-session"}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        client.cookies.set(SESSION_COOKIE, fresh)
        assert client.get("/api/sessions").status_code == 200  # a cookie the server signed, within its hours
    for cookie in (forged(server, dave, age=13 * 3600), fresh[:-2] + ("AA" if not fresh.endswith("AA") else "BB")):
        with httpx.Client(base_url=server.url, timeout=30) as client:
            client.cookies.set(SESSION_COOKIE, cookie)
            assert client.get("/api/sessions").status_code == 401
            page = client.get("/sessions/team-a-session")
            assert page.status_code == 303 and page.headers["location"].startswith("/auth/sign-in")
            partial = client.get("/sessions/team-a-session/rows", headers=asked)
            assert partial.status_code == 401
            assert partial.headers["hx-redirect"] == "/auth/sign-in?next=/sessions/team-a-session"


def test_sign_ins_are_in_the_audit_trail(page: Page, server: SignedServer) -> None:
    sign_in(page, server, "dave")  # team-a and admins: an admin of every project
    expect(page.locator("[data-audit-link]")).to_be_visible()
    page.goto(server.url + "/audit?action=sign-in")
    expect(page.locator('[data-audit-entry] td:text-is("user:dave@example.test")').first).to_be_visible()
    dave = page.context.cookies()
    assert any(c["name"] == SESSION_COOKIE and c["httpOnly"] and c["sameSite"] == "Lax" for c in dave)
