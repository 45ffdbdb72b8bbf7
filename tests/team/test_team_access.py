"""Access control across the processes of one server, on both stores (docs/decisions/0020-access-control.md):
a token made by the CLI is known to every process; the route table holds under every role; a token revoked
through one process is refused by the other at its next request; the secret is kept nowhere; and a token for
project A cannot reach project B by key, search, compare, live stream, download or a guessed upload digest."""

from __future__ import annotations

import subprocess
import sys

import httpx
import orjson

from tests.support.access_walk import values_for, walk
from tests.support.builders import LogBuilder, header
from tests.support.process import PROJECT
from tests.team.conftest import Lane

ROLES = ("admin", "member", "viewer", "metrics")
PHRASE_B = "beta-only-phrase-7f3a"


def create_token(lane: Lane, name: str, role: str, *more: str) -> str:
    """`dsh-inspect token create` against the lane's catalog, as `serve` names it; the secret (last line)."""
    team = lane.team
    where = ["--data-dir", str(lane.data_dir("cli"))] + (["--store", team.store] if team else [])
    done = subprocess.run(
        [sys.executable, "-m", "dsh_inspect", "token", "create", name, "--role", role, *where, *more],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**(team.env if team else {}), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def log_bytes(session_id: str, cwd: str, prompt: str = "Read a.txt please") -> bytes:
    b = LogBuilder(7)
    b.turn(1, prompt)
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id, cwd=cwd), *b.events])


def upload(url: str, secret: str, session_id: str, cwd: str, prompt: str = "Read a.txt please") -> httpx.Response:
    body = log_bytes(session_id, cwd, prompt)
    return httpx.post(f"{url}/api/uploads", params={"name": "session.jsonl"}, content=body, headers=bearer(secret))


def catalog_text(lane: Lane) -> bytes:
    """Every byte the catalog keeps: the SQLite file (and its log), or a dump of the team database's tables."""
    if lane.team is None:
        folder = lane.data_dir("a")
        return b"".join(p.read_bytes() for p in sorted(folder.glob("catalog.sqlite3*")))
    import psycopg

    with psycopg.connect(lane.team.store) as conn:
        rows = conn.execute("SELECT name, digest, role, projects, created_by FROM tokens").fetchall()
        audit = conn.execute("SELECT actor, action, target FROM audit").fetchall()
    return repr((rows, audit)).encode()


def test_two_processes_share_tokens_roles_and_revocation(lane: Lane) -> None:
    secrets = {role: create_token(lane, role, role) for role in ROLES}
    options = ["--require-auth"]
    with lane.start("a", options=options) as a, lane.start("b", options=options) as b:
        made = upload(b.url, secrets["member"], "alpha-one", "/work/alpha")
        assert made.status_code == 201, made.text
        key = made.json()["upload"]["sessions"][0]["key"]
        values = values_for(key, made.json()["upload"]["digest"])
        with httpx.Client(base_url=a.url, timeout=120) as client:
            problems = list(walk(client, values, {None: None, **secrets}))
        assert problems == []

        # a token made through one process's page of tokens, used on the other, revoked on the first
        admin = bearer(secrets["admin"])
        created = httpx.post(f"{a.url}/api/tokens", json={"name": "ci", "role": "member"}, headers=admin)
        assert created.status_code == 201
        ci = created.json()["secret"]
        assert upload(b.url, ci, "alpha-two", "/work/alpha").status_code == 201
        assert httpx.delete(f"{a.url}/api/tokens/ci", headers=admin).status_code == 200
        assert upload(b.url, ci, "alpha-three", "/work/alpha").status_code == 401
        assert httpx.get(f"{b.url}/api/sessions", headers=bearer(ci)).status_code == 401

    kept = catalog_text(lane)
    for secret in [*secrets.values(), ci]:
        assert secret.encode() not in kept, "a token's secret is kept nowhere, only its hash"


def test_a_token_for_project_a_never_reaches_project_b(lane: Lane) -> None:
    admin = create_token(lane, "admin", "admin")
    alpha = create_token(lane, "alpha", "viewer", "--project", "/work/alpha")
    alpha_member = create_token(lane, "alpha-up", "member", "--project", "/work/alpha")
    metrics = create_token(lane, "watch", "metrics")
    with lane.start("a", options=["--require-auth"]) as a, lane.start("b", options=["--require-auth"]) as b:
        mine = upload(a.url, admin, "alpha-session", "/work/alpha").json()["upload"]
        theirs = upload(a.url, admin, "beta-session", "/work/beta", PHRASE_B).json()["upload"]
        b_key, b_digest, a_key = theirs["sessions"][0]["key"], theirs["digest"], mine["sessions"][0]["key"]
        as_alpha = bearer(alpha)
        missing_key = "no-such-session"
        for url in (a.url, b.url):

            def get(path: str, **params: str) -> httpx.Response:
                return httpx.get(f"{url}{path}", params=params, headers=as_alpha, timeout=60)  # noqa: B023

            # by key, every page and twin of it answers as for a session never loaded
            for path in (
                "/sessions/{}",
                "/api/sessions/{}",
                "/api/sessions/{}/rows",
                "/sessions/{}/steps",
                "/sessions/{}/raw",
                "/sessions/{}/live",
            ):
                hidden, absent = get(path.format(b_key)), get(path.format(missing_key))
                assert hidden.status_code == absent.status_code == 404, path
                # the same answer, word for word, but for the key asked for
                assert hidden.text.replace(b_key, "KEY") == absent.text.replace(missing_key, "KEY"), path
            # by a guessed upload digest
            for path in ("/uploads/{}", "/api/uploads/{}", "/uploads/{}/raw"):
                assert get(path.format(b_digest)).status_code == 404, path
            assert httpx.delete(f"{url}/api/uploads/{b_digest}", headers=bearer(alpha_member)).status_code == 404
            # in lists, search and compare
            for path in ("/api/sessions", "/api/uploads", "/", "/uploads"):
                listed = get(path)
                assert listed.status_code == 200 and b_key not in listed.text and b_digest not in listed.text, path
                assert a_key in listed.text, path
            found = get("/api/search", q=PHRASE_B)
            assert found.status_code == 200 and PHRASE_B not in found.text.replace(f'"{PHRASE_B}"', "", 1)
            assert b_key not in found.text
            assert (
                get("/api/compare", a=a_key, b=b_key).status_code == get("/api/compare", a=a_key, b="nope").status_code
            )
            # the 404 page's suggestion never names it
            near = get(f"/sessions/{b_key[:-1]}")
            assert near.status_code == 404 and b_key not in near.text
        # an upload of another project's session is refused, never re-labelled
        refused = upload(b.url, alpha_member, "beta-sneaked", "/work/beta")
        assert refused.status_code == 403 and "/work/beta" in refused.json()["detail"]
        assert refused.json()["error"]["code"] == "project"
        # the same bytes as B's stored upload: refused the same way, saying nothing of what is stored
        again = httpx.post(
            f"{b.url}/api/uploads",
            params={"name": "session.jsonl"},
            content=log_bytes("beta-session", "/work/beta", PHRASE_B),
            headers=bearer(alpha_member),
        )
        assert again.status_code == 403
        # metrics: the list's numbers, never a body
        watch = bearer(metrics)
        listed = httpx.get(f"{a.url}/api/sessions", headers=watch)
        assert listed.status_code == 200 and PHRASE_B not in listed.text
        for path in (f"/api/sessions/{b_key}", f"/api/sessions/{b_key}/rows", f"/sessions/{b_key}/raw", "/api/search"):
            assert httpx.get(f"{a.url}{path}", params={"q": "x"}, headers=watch).status_code == 403, path
