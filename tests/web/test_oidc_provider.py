"""The OpenID Connect provider the sign-in tests start (tests/support/oidc_provider.py) is a real one: it
publishes its discovery document, takes a password on its login form, and completes the authorization-code
flow with PKCE for the dsh-inspect client, signing an ID token (groups included) with a key of its JWKS."""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tests.support.oidc_provider import CLIENT_ID, CLIENT_SECRET, Provider, oidc_provider, sign_in_form

pytestmark = pytest.mark.slow  # an OIDC provider of its own

with warnings.catch_warnings():
    from authlib.deprecate import AuthlibDeprecationWarning  # whose import turns them all on

    # Authlib's notes that its httpx client and authlib.jose move elsewhere: nothing these tests act on
    warnings.simplefilter("ignore", AuthlibDeprecationWarning)
    from authlib.common.security import generate_token
    from authlib.integrations.httpx_client import OAuth2Client
    from authlib.jose import JsonWebKey, JsonWebToken

SCOPE = "openid email profile groups"


class _Callback(BaseHTTPRequestHandler):
    """The relying party's redirect URI: it only has to answer, the test reads the code off the URL."""

    def do_GET(self) -> None:
        body = b"callback reached"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def callback() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Callback)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/auth/callback"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def provider(callback: str) -> Iterator[Provider]:
    with oidc_provider([callback]) as running:
        yield running


def _discovery(provider: Provider) -> dict[str, object]:
    document: dict[str, object] = httpx.get(f"{provider.issuer}/.well-known/openid-configuration").json()
    return document


def _rp(callback: str) -> OAuth2Client:
    return OAuth2Client(
        CLIENT_ID,
        CLIENT_SECRET,
        token_endpoint_auth_method="client_secret_basic",
        scope=SCOPE,
        redirect_uri=callback,
        code_challenge_method="S256",
    )


def _authorize(rp: OAuth2Client, provider: Provider, verifier: str, **extra: str) -> tuple[str, str]:
    """The URL a browser is sent to for signing in (PKCE's challenge made of `verifier`), and its state."""
    url, state = rp.create_authorization_url(
        str(_discovery(provider)["authorization_endpoint"]), code_verifier=verifier, **extra
    )
    return url, state


def test_discovery_names_the_issuer_pkce_and_the_groups_scope(provider: Provider) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", provider.issuer)
    assert provider.issuer == f"http://127.0.0.1:{provider.port}"
    document = _discovery(provider)
    assert document["issuer"] == provider.issuer
    assert "S256" in document["code_challenge_methods_supported"]  # type: ignore[operator]
    assert "groups" in document["scopes_supported"]  # type: ignore[operator]
    assert "RS256" in document["id_token_signing_alg_values_supported"]  # type: ignore[operator]


def test_alice_signs_in_with_pkce_and_her_id_token_carries_her_groups(provider: Provider, callback: str) -> None:
    document = _discovery(provider)
    verifier, nonce = generate_token(48), generate_token(20)
    with _rp(callback) as rp, httpx.Client(timeout=10) as browser:
        start, state = _authorize(rp, provider, verifier, nonce=nonce)
        back = sign_in_form(browser, start, "alice")
        assert back.status_code == 200
        assert str(back.url).startswith(callback + "?")
        assert back.url.params["state"] == state
        token = rp.fetch_token(
            str(document["token_endpoint"]), authorization_response=str(back.url), state=state, code_verifier=verifier
        )
        keys = JsonWebKey.import_key_set(httpx.get(str(document["jwks_uri"])).json())
        claims = JsonWebToken(["RS256"]).decode(
            token["id_token"],
            keys,
            claims_options={
                "iss": {"essential": True, "value": provider.issuer},
                "aud": {"essential": True, "value": CLIENT_ID},
                "nonce": {"essential": True, "value": nonce},
            },
        )
        claims.validate()
        assert claims.header["alg"] == "RS256"
        assert claims["sub"] == "alice"
        assert claims["email"] == "alice@example.test"
        assert claims["name"] == "Alice Example"
        assert claims["preferred_username"] == "alice"
        assert claims["groups"] == ["team-a"]
        userinfo = rp.get(str(document["userinfo_endpoint"])).json()
        assert userinfo["sub"] == "alice"
        assert userinfo["groups"] == ["team-a"]


def test_a_code_without_its_verifier_is_refused(provider: Provider, callback: str) -> None:
    document = _discovery(provider)
    verifier = generate_token(48)
    with _rp(callback) as rp, httpx.Client(timeout=10) as browser:
        start, _ = _authorize(rp, provider, verifier)
        back = sign_in_form(browser, start, "dave")
        code = back.url.params["code"]
        refused = httpx.post(
            str(document["token_endpoint"]),
            data={"grant_type": "authorization_code", "code": code, "redirect_uri": callback},
            auth=(CLIENT_ID, CLIENT_SECRET),
        )
        assert refused.status_code == 400
        assert refused.json()["error"] == "invalid_grant"


def test_a_wrong_password_gets_the_form_again_with_an_error(provider: Provider, callback: str) -> None:
    with _rp(callback) as rp, httpx.Client(timeout=10) as browser:
        start, _ = _authorize(rp, provider, generate_token(48))
        form = browser.get(start, follow_redirects=True)
        assert form.status_code == 200
        assert str(form.url).startswith(provider.issuer + "/interaction/")
        assert re.search(r"<label[^>]*>Username</label>", form.text)
        assert re.search(r"<label[^>]*>Password</label>", form.text)
        assert re.search(r"<button[^>]*>Continue</button>", form.text)
        assert "Sign in" not in form.text  # never the app's own button's name
        action = re.search(r'action="([^"]+)"', form.text)
        assert action
        wrong = {"username": "alice", "password": "bob-password"}
        again = browser.post(form.url.join(action.group(1)), data=wrong, follow_redirects=True)
        assert again.status_code == 401
        assert 'id="error"' in again.text
        assert 'name="username"' in again.text
        assert 'name="password"' in again.text


def test_a_redirect_uri_not_given_at_start_is_refused(provider: Provider, callback: str) -> None:
    elsewhere = callback.replace("/auth/callback", "/elsewhere")
    with _rp(elsewhere) as rp:
        start, _ = _authorize(rp, provider, generate_token(48))
    refused = httpx.get(start)
    assert refused.status_code == 400
    assert "redirect_uri" in refused.text
