"""A token scoped to one project searches the team's uploads (real PostgreSQL and SeaweedFS) and finds only
its project's rows, counted without the others' (docs/decisions/0020-access-control.md): the team index counts
every upload it holds, so what a scoped search shows and counts is settled in the web layer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.support.builders import LogBuilder, header
from tests.support.process import PROJECT, serve_process
from tests.team.conftest import TeamStore

pytestmark = pytest.mark.team

SHARED = "The file says"  # a phrase of a row in each session


def log_bytes(session_id: str, cwd: str, prompt: str) -> bytes:
    log = LogBuilder()
    log.turn(1, prompt)
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id, cwd=cwd), *log.events])


def token(team: TeamStore, data_dir: Path, name: str, role: str, *projects: str) -> str:
    """`dsh-inspect token create`, on the catalog `serve` names: the secret is the last line it prints."""
    done = subprocess.run(
        [sys.executable, "-m", "dsh_inspect", "token", "create", name, "--role", role, "--data-dir", str(data_dir)]
        + ["--store", team.store]
        + [arg for p in projects for arg in ("--project", p)],
        cwd=PROJECT,
        env={**os.environ, **team.env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_a_scoped_search_of_uploads_shows_and_counts_only_its_projects_rows(
    team_store: TeamStore, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    admin = {"Authorization": f"Bearer {token(team_store, data, 'admin', 'admin')}"}
    alpha = {"Authorization": f"Bearer {token(team_store, data, 'alpha', 'viewer', '/srv/proj-alpha')}"}
    options = [*team_store.options, "--require-auth"]
    with serve_process([], data, options=options, env=team_store.env) as server:

        def search(headers: dict[str, str], q: str) -> dict[str, Any]:
            response = httpx.get(f"{server.url}/api/search", params={"q": q}, headers=headers, timeout=120)
            assert response.status_code == 200, response.text
            found: dict[str, Any] = response.json()
            return found

        for sid, cwd, prompt in (
            ("up-alpha", "/srv/proj-alpha", "Tidy the ocelot ledger"),
            ("up-zulu", "/srv/proj-zulu", "Sort the pangolin archive"),
        ):
            sent = httpx.post(
                f"{server.url}/api/uploads",
                params={"name": f"{sid}.jsonl"},
                content=log_bytes(sid, cwd, prompt),
                headers=admin,
                timeout=120,
            )
            assert sent.status_code == 201, sent.text
        every, mine = search(admin, SHARED), search(alpha, SHARED)
        assert {h["key"] for h in every["hits"]} == {"up-alpha", "up-zulu"} and every["sessions"] == 2
        assert {h["key"] for h in mine["hits"]} == {"up-alpha"} and mine["sessions"] == 1
        assert mine["total"] * 2 == every["total"], "the hidden upload's rows are not counted"
        assert search(admin, "pangolin")["sessions"] == 1
        hidden = search(alpha, "pangolin")
        assert (hidden["total"], hidden["sessions"], hidden["hits"]) == (0, 0, [])
        assert "zulu" not in httpx.get(f"{server.url}/search", params={"q": SHARED}, headers=alpha).text
