"""Signing in through a real OpenID Connect provider, headless (docs/decisions/0021-sign-in.md): what the
session cookie grants, a sign-in the provider did not vouch for (refused, audited, limited), a provider that
does not answer (503 naming it, tokens still working), and `serve` refusing a sign-in half configured."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dsh_inspect.access import Tokens
from dsh_inspect.store import UploadStore
from dsh_inspect.web.sign_in import SECRET_ENV

from tests.support.oidc_provider import (
    CLIENT_ID,
    CLIENT_SECRET,
    TEAM_B,
    client_secret,
    free_port,
    oidc_provider,
    sign_in_form,
    team_logs,
)
from tests.support.process import PROJECT
from tests.support.server import live_server
from tests.support.uploads import jsonl_bytes

pytestmark = pytest.mark.slow  # an OIDC provider (Node) or a `serve` process each

ACCESS_FILE = '[groups.team-a]\nrole = "member"\nprojects = ["/a"]\n'


@pytest.fixture
def secret() -> Iterator[None]:
    with client_secret():
        yield


@pytest.mark.usefixtures("secret")
def test_a_person_signed_in_reaches_their_projects_and_a_forged_answer_is_refused(tmp_path: Path) -> None:
    logs, access = team_logs(tmp_path)
    port = free_port()
    options = {"oidc_issuer": f"http://127.0.0.1:{port}", "oidc_client_id": CLIENT_ID, "access_file": str(access)}
    with (
        live_server([str(logs)], data_dir=str(tmp_path / "data"), **options) as url,
        oidc_provider([f"{url}/auth/callback"], port=port),
    ):
        with httpx.Client(timeout=30) as browser:
            landed = sign_in_form(browser, f"{url}/auth/login?next=/api/sessions", "alice")
            assert landed.status_code == 200 and str(landed.url) == f"{url}/api/sessions"
            assert [s["key"] for s in landed.json()["sessions"]] == ["team-a-session"]
            assert browser.get(f"{url}/api/sessions/team-b-session").status_code == 404
            assert browser.get(f"{url}/api/audit").status_code == 403  # a member administers nothing
            upload = browser.post(
                f"{url}/api/uploads", params={"name": "b.jsonl"}, content=jsonl_bytes("sneaked", cwd=TEAM_B)
            )
            assert upload.status_code == 403  # an upload to a project her groups do not grant
        # an answer the provider never gave: refused, audited, and counted against the client
        with httpx.Client(base_url=url, timeout=30) as stranger:
            for _ in range(10):
                forged = stranger.get("/auth/callback", params={"code": "made-up", "state": "made-up"})
                assert forged.status_code == 401 and "data-sign-in-refused" in forged.text
            assert stranger.get("/auth/callback", params={"code": "x", "state": "y"}).status_code == 429
            assert stranger.get("/auth/login").status_code == 429
        admin = Tokens(UploadStore(tmp_path / "data").access).create("root", "admin")[1]
        elsewhere = httpx.HTTPTransport(local_address="127.0.0.2")  # this client is held back by now
        with httpx.Client(transport=elsewhere, timeout=30) as client:
            asked = {"action": "sign-in"}
            trail = client.get(f"{url}/api/audit", params=asked, headers={"Authorization": f"Bearer {admin}"})
        outcomes = [(e["actor"], e["outcome"]) for e in trail.json()["entries"]]
        assert outcomes.count(("anonymous", "denied")) == 10 and ("user:alice@example.test", "ok") in outcomes


@pytest.mark.usefixtures("secret")
def test_a_provider_that_does_not_answer_is_named_and_tokens_still_work(tmp_path: Path) -> None:
    logs, access = team_logs(tmp_path)
    nobody = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    options = {"oidc_issuer": nobody, "oidc_client_id": CLIENT_ID, "access_file": str(access)}
    with live_server([str(logs)], data_dir=str(tmp_path / "data"), **options) as url:
        down = httpx.get(f"{url}/auth/login")
        assert down.status_code == 503 and f"the identity provider at {nobody} did not answer" in down.text
        viewer = Tokens(UploadStore(tmp_path / "data").access).create("ci", "viewer")[1]
        listed = httpx.get(f"{url}/api/sessions", headers={"Authorization": f"Bearer {viewer}"})
        assert listed.status_code == 200 and listed.json()["total"] == 2
        assert httpx.get(f"{url}/api/sessions").status_code == 401  # an issuer turns access control on


@pytest.mark.parametrize(
    ("options", "secret", "said"),
    [
        (["--oidc-issuer", "http://127.0.0.1:9"], CLIENT_SECRET, "--oidc-issuer needs --oidc-client-id"),
        (["--oidc-issuer", "http://127.0.0.1:9", "--oidc-client-id", CLIENT_ID], "", f"client secret in {SECRET_ENV}"),
        (["--access", "access.toml"], CLIENT_SECRET, "--access maps the groups of people signed in"),
        (
            ["--oidc-issuer", "http://127.0.0.1:9", "--oidc-client-id", CLIENT_ID, "--access", "missing.toml"],
            CLIENT_SECRET,
            "access file missing.toml",
        ),
    ],
)
def test_serve_refuses_a_sign_in_half_configured(tmp_path: Path, options: list[str], secret: str, said: str) -> None:
    (tmp_path / "access.toml").write_text(ACCESS_FILE)
    done = subprocess.run(
        [sys.executable, "-m", "dsh_inspect", "serve", "--port", "0", "--data-dir", str(tmp_path / "data"), *options],
        cwd=tmp_path,
        env={**os.environ, SECRET_ENV: secret, "PYTHONPATH": str(PROJECT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and said in done.stderr and "serving on" not in done.stderr
