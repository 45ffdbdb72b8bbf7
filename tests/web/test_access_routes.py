"""Who may do what (docs/decisions/0020-access-control.md), on a real server: one table names every route's
permission, and every route answers each role as that table says; tokens are shown once and kept as hashes;
wrong tokens are limited per client; a server bound beyond loopback never starts open by accident."""

from __future__ import annotations

import contextlib
import io
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dsh_inspect.access import ROLES
from dsh_inspect.cli import main
from dsh_inspect.settings import Settings
from dsh_inspect.web.access import MOUNTS, ROUTES
from dsh_inspect.web.app import create_app
from starlette.routing import Mount

from tests.support.access_walk import values_for, walk
from tests.support.process import PROJECT, serve_process
from tests.support.server import live_server
from tests.support.uploads import jsonl_bytes


def routes_of(app: Any) -> Iterator[tuple[str, str]]:
    """(method, path) of every route the app answers, through included routers; mounts as ("MOUNT", path)."""
    for route in app.routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from routes_of(inner)
        elif isinstance(route, Mount):
            yield "MOUNT", route.path
        else:
            for method in getattr(route, "methods", None) or ():
                if method != "HEAD":
                    yield method, route.path


def test_the_access_table_names_every_route_and_only_routes(tmp_path: Path) -> None:
    app = create_app([], Settings(data_dir=str(tmp_path / "data"), require_auth=True))
    found = set(routes_of(app))
    routes = {r for r in found if r[0] != "MOUNT"}
    assert sorted(routes - set(ROUTES)) == [], "routes the access table does not name: add each to ROUTES"
    assert sorted(set(ROUTES) - routes) == [], "rows of the access table that name no route"
    assert {path for kind, path in found if kind == "MOUNT"} == set(MOUNTS)


def secret_of(data_dir: Path, name: str, role: str, *more: str) -> str:
    """`dsh-inspect token create`, as an admin runs it (its `main`, in this process: a process for each token
    would cost more than the tests that use them): the secret is the last line of its output."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["token", "create", name, "--role", role, "--data-dir", str(data_dir), *more])
    assert code == 0, err.getvalue()
    return out.getvalue().strip().splitlines()[-1]


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """A server with access control on, one session served from disk and one uploaded, and a token per role."""
    data = tmp_path / "data"
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "served.jsonl").write_bytes(jsonl_bytes("served", 2, cwd="/work/alpha"))
    secrets = {role: secret_of(data, role, role) for role in ROLES}
    with live_server([str(logs)], data_dir=str(data), require_auth=True) as url:
        yield url, data, secrets


def test_every_route_answers_each_role_as_the_table_says(guarded: tuple[str, Path, dict[str, str]]) -> None:
    url, _, secrets = guarded
    admin = {"Authorization": f"Bearer {secrets['admin']}"}
    with httpx.Client(base_url=url, timeout=60) as client:
        made = client.post("/api/uploads", params={"name": "session.jsonl"}, content=jsonl_bytes("up"), headers=admin)
        assert made.status_code == 201, made.text
        values = values_for("served", made.json()["upload"]["digest"])
        identities: dict[Any, str | None] = {None: None, **secrets}
        problems = list(walk(client, values, identities))
    assert problems == []


@pytest.mark.slow  # four `token` processes
def test_a_token_is_shown_once_kept_as_a_hash_listed_and_revoked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    secret = secret_of(data, "ci", "member", "--project", "/work/alpha", "--expires", "7")
    assert secret.startswith("dshi_") and len(secret) > 40
    catalog = (data / "catalog.sqlite3").read_bytes() + b"".join(p.read_bytes() for p in data.glob("catalog*-wal"))
    assert secret.encode() not in catalog, "the secret itself is kept nowhere"
    with sqlite3.connect(data / "catalog.sqlite3") as conn:
        assert conn.execute("SELECT role, projects FROM tokens WHERE name = 'ci'").fetchone() == (
            "member",
            '["/work/alpha"]',
        )
    run = [sys.executable, "-m", "dsh_inspect", "token"]
    listed = subprocess.run([*run, "list", "--data-dir", str(data)], capture_output=True, text=True, check=True)
    assert "ci" in listed.stdout and secret not in listed.stdout
    revoked = subprocess.run(
        [*run, "revoke", "ci", "--data-dir", str(data)], capture_output=True, text=True, check=False
    )
    assert revoked.returncode == 0
    again = subprocess.run([*run, "revoke", "ci", "--data-dir", str(data)], capture_output=True, text=True, check=False)
    assert again.returncode == 1 and "no usable token" in again.stderr


def test_a_revoked_token_is_refused_at_its_next_request(guarded: tuple[str, Path, dict[str, str]]) -> None:
    url, _, secrets = guarded
    admin = {"Authorization": f"Bearer {secrets['admin']}"}
    made = httpx.post(f"{url}/api/tokens", json={"name": "short-lived", "role": "viewer"}, headers=admin)
    assert made.status_code == 201
    viewer = {"Authorization": f"Bearer {made.json()['secret']}"}
    assert httpx.get(f"{url}/api/sessions", headers=viewer).status_code == 200
    assert httpx.delete(f"{url}/api/tokens/short-lived", headers=admin).status_code == 200
    assert httpx.get(f"{url}/api/sessions", headers=viewer).status_code == 401


def test_a_member_deletes_its_own_uploads_only(guarded: tuple[str, Path, dict[str, str]]) -> None:
    url, _, secrets = guarded
    admin, member = ({"Authorization": f"Bearer {secrets[r]}"} for r in ("admin", "member"))

    def upload(headers: dict[str, str], session_id: str) -> str:
        made = httpx.post(
            f"{url}/api/uploads", params={"name": "s.jsonl"}, content=jsonl_bytes(session_id), headers=headers
        )
        assert made.status_code == 201, made.text
        digest: str = made.json()["upload"]["digest"]
        return digest

    theirs, mine = upload(admin, "admins"), upload(member, "members")
    refused = httpx.delete(f"{url}/api/uploads/{theirs}", headers=member)
    assert refused.status_code == 403 and "only the uploads it made" in refused.json()["detail"]
    assert httpx.delete(f"{url}/api/uploads/{mine}", headers=member).status_code == 200
    audit = httpx.get(f"{url}/api/audit", params={"action": "delete"}, headers=admin).json()["entries"]
    assert [(e["actor"], e["target"], e["outcome"], e["status"]) for e in audit] == [
        ("token:member", mine, "ok", 200),
        ("token:member", theirs, "denied", 403),
    ]
    assert httpx.get(f"{url}/api/audit", headers=member).status_code == 403


def test_wrong_tokens_are_limited_per_client(guarded: tuple[str, Path, dict[str, str]]) -> None:
    url, _, secrets = guarded
    statuses = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for n in range(1000):
            wrong = f"dshi_{n:043d}"
            statuses.append(client.get("/api/sessions", headers={"Authorization": f"Bearer {wrong}"}).status_code)
        blocked = client.get("/api/sessions", headers={"Authorization": f"Bearer {secrets['viewer']}"})
    assert statuses[:10] == [401] * 10 and set(statuses[10:]) == {429}
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1
    # another client is not held back by this one's failures
    other = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(base_url=url, transport=other, timeout=30) as client:
        assert client.get("/api/sessions", headers={"Authorization": f"Bearer {secrets['viewer']}"}).status_code == 200
    admin = {"Authorization": f"Bearer {secrets['admin']}"}
    entries: list[dict[str, Any]] = []
    with httpx.Client(base_url=url, transport=httpx.HTTPTransport(local_address="127.0.0.3"), timeout=30) as client:
        page: str | None = "/api/audit?outcome=denied&limit=5"
        while page:
            found = client.get(page, headers=admin).json()
            entries += found["entries"]
            page = found["next"]
    # each refused token is recorded (the limit bounds them); the requests past the limit, once a minute
    assert {e["client"] for e in entries} == {"127.0.0.1"}
    assert sum(e["status"] == 401 for e in entries) == 10 and sum(e["status"] == 429 for e in entries) == 1


def test_a_browser_signs_in_with_a_token_and_out_again(guarded: tuple[str, Path, dict[str, str]]) -> None:
    url, _, secrets = guarded
    with httpx.Client(base_url=url, timeout=30) as browser:
        asked = browser.get("/sessions/served")
        assert asked.status_code == 303 and asked.headers["location"] == "/auth/sign-in?next=/sessions/served"
        wrong = browser.post("/auth/sign-in", data={"token": "dshi_" + "x" * 43, "next": "/sessions/served"})
        assert wrong.status_code == 401 and "data-sign-in-failed" in wrong.text
        signed = browser.post("/auth/sign-in", data={"token": secrets["viewer"], "next": "/sessions/served"})
        assert signed.status_code == 303 and signed.headers["location"] == "/sessions/served"
        cookie = signed.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        page = browser.get("/sessions/served")
        assert page.status_code == 200 and 'data-identity="token:viewer"' in page.text
        assert browser.get("/tokens").status_code == 403
        assert browser.post("/auth/logout").status_code == 303
        assert browser.get("/sessions/served").status_code == 303
        # a sign-in never sends the browser to another site
        elsewhere = browser.post("/auth/sign-in", data={"token": secrets["viewer"], "next": "//evil.example/"})
        assert elsewhere.headers["location"] == "/"


def test_an_address_no_route_answers_needs_an_identity_too(guarded: tuple[str, Path, dict[str, str]]) -> None:
    url, _, secrets = guarded
    assert httpx.get(f"{url}/api/no-such-thing").status_code == 401
    viewer = {"Authorization": f"Bearer {secrets['viewer']}"}
    assert httpx.get(f"{url}/api/no-such-thing", headers=viewer).status_code == 404
    page = httpx.get(f"{url}/sessions/servd", headers=viewer)  # one letter off: the page suggests the session
    assert page.status_code == 404 and "/sessions/served" in page.text
    metrics = {"Authorization": f"Bearer {secrets['metrics']}"}
    hidden = httpx.get(f"{url}/sessions/servd/steps", headers=metrics)
    assert hidden.status_code == 403


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dsh_inspect", "serve", *args],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.slow  # a `serve` process
def test_a_server_beyond_loopback_never_starts_open_by_accident(tmp_path: Path) -> None:
    refused = serve("--host", "0.0.0.0", "--port", "0", "--data-dir", str(tmp_path / "data"))
    assert refused.returncode == 2
    assert "--require-auth" in refused.stderr and "--no-auth" in refused.stderr and "serving on" not in refused.stderr


@pytest.mark.slow  # two `serve` processes
def test_an_open_server_says_so_on_every_page(tmp_path: Path) -> None:
    with serve_process([], tmp_path / "data", options=["--host", "0.0.0.0", "--no-auth"]) as open_server:
        port = open_server.url.rsplit(":", 1)[1]
        page = httpx.get(f"http://127.0.0.1:{port}/uploads")
        assert page.status_code == 200 and "data-open-access" in page.text
    with serve_process([], tmp_path / "data") as loopback:
        assert "data-open-access" not in httpx.get(f"{loopback.url}/uploads").text


def test_loopback_127_addresses_are_loopback() -> None:
    from dsh_inspect.settings import loopback

    assert loopback("127.0.0.1") and loopback("127.8.9.10") and loopback("::1") and loopback("localhost")
    assert not loopback("0.0.0.0") and not loopback("::") and not loopback("10.0.0.5")
    assert not loopback(socket.gethostname()) or socket.gethostname() == "localhost"


@pytest.mark.slow  # a live tail held until the revocation reaches it
def test_a_live_stream_ends_once_its_token_is_revoked(guarded: tuple[str, Path, dict[str, str]]) -> None:
    url, _, secrets = guarded
    admin = {"Authorization": f"Bearer {secrets['admin']}"}
    made = httpx.post(f"{url}/api/tokens", json={"name": "watcher", "role": "viewer"}, headers=admin).json()
    watcher = {"Authorization": f"Bearer {made['secret']}"}
    with httpx.stream("GET", f"{url}/sessions/served/live", headers=watcher, timeout=30) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()
        assert next(lines) == ": connected"
        assert httpx.delete(f"{url}/api/tokens/watcher", headers=admin).status_code == 200
        started = time.monotonic()
        for _ in lines:  # the stream ends by itself, within seconds
            assert time.monotonic() - started < 20
    assert time.monotonic() - started < 20
    assert httpx.get(f"{url}/sessions/served/live", headers=watcher).status_code == 401


@pytest.mark.slow  # a `serve` process
def test_a_guarded_server_no_token_can_enter_says_how_to_make_one(tmp_path: Path) -> None:
    args = [sys.executable, "-m", "dsh_inspect", "serve", "--port", "0", "--require-auth"]
    process = subprocess.Popen(
        [*args, "--data-dir", str(tmp_path / "data")], cwd=PROJECT, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        said = [process.stderr.readline() for _ in range(2)]
    finally:
        process.terminate()
        process.wait(10)
        if process.stderr:
            process.stderr.close()
    assert "no token can sign in yet" in said[0] and "dsh-inspect token create NAME --role admin" in said[0]
    assert "serving on" in said[1]


def test_requests_without_any_identity_cost_the_audit_trail_one_entry_a_minute(
    guarded: tuple[str, Path, dict[str, str]],
) -> None:
    url, _, secrets = guarded
    with httpx.Client(base_url=url, timeout=30) as client:
        assert {client.get("/api/sessions").status_code for _ in range(300)} == {401}
    admin = {"Authorization": f"Bearer {secrets['admin']}"}
    denied = httpx.get(f"{url}/api/audit", params={"actor": "anonymous", "outcome": "denied"}, headers=admin)
    assert [(e["action"], e["status"]) for e in denied.json()["entries"]] == [("GET /api/sessions", 401)]


def test_a_bad_token_on_the_sign_in_page_is_nobody_not_the_local_user(
    guarded: tuple[str, Path, dict[str, str]],
) -> None:
    url, _, _ = guarded
    page = httpx.get(f"{url}/auth/sign-in", headers={"Authorization": "Bearer dshi_" + "x" * 43})
    assert page.status_code == 200 and "data-identity" not in page.text and "data-tokens-link" not in page.text


def test_live_tails_per_client_are_capped(tmp_path: Path) -> None:
    (tmp_path / "one.jsonl").write_bytes(jsonl_bytes("one"))
    with live_server([str(tmp_path)], live_streams_per_client=2) as url, httpx.Client(timeout=30) as client:
        streams = [client.stream("GET", f"{url}/sessions/one/live") for _ in range(2)]
        # each line iterator is kept: a dropped one closes its connection, and the server counts it gone
        lines = [s.__enter__().iter_lines() for s in streams]
        assert [next(line) for line in lines] == [": connected", ": connected"]
        third = httpx.get(f"{url}/sessions/one/live", timeout=30)
        assert third.status_code == 429 and "live_streams_per_client" in third.text
        other = httpx.HTTPTransport(local_address="127.0.0.2")  # another client has its own
        with (
            httpx.Client(transport=other, timeout=30) as elsewhere,
            elsewhere.stream("GET", f"{url}/sessions/one/live") as s,
        ):
            assert s.status_code == 200
        for s in streams:
            s.__exit__(None, None, None)


def test_a_browser_whose_token_was_revoked_is_signed_out_not_held_back(
    guarded: tuple[str, Path, dict[str, str]],
) -> None:
    url, _, secrets = guarded
    admin = {"Authorization": f"Bearer {secrets['admin']}"}
    made = httpx.post(f"{url}/api/tokens", json={"name": "laptop", "role": "viewer"}, headers=admin).json()
    with httpx.Client(base_url=url, timeout=30) as browser:
        assert browser.post("/auth/sign-in", data={"token": made["secret"], "next": "/"}).status_code == 303
        assert httpx.delete(f"{url}/api/tokens/laptop", headers=admin).status_code == 200
        assert browser.get("/uploads").status_code == 303  # sent to sign in, the dead cookie dropped
        assert "dsh_inspect_token" not in browser.cookies
        for _ in range(20):  # a page's many requests afterwards carry no cookie: no failed attempts pile up
            assert browser.get("/uploads").status_code == 303
        again = browser.post("/auth/sign-in", data={"token": secrets["viewer"], "next": "/uploads"})
        assert again.status_code == 303 and browser.get("/uploads").status_code == 200
