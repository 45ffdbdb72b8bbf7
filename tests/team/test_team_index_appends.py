"""The team's search index follows appends (docs/decisions/0024-push.md), on real PostgreSQL and SeaweedFS: a
session pushed turn by turn keeps one `chain` of rows, each append writes only the rows it adds or changes
(the rows of earlier turns are the same row versions, PostgreSQL's `xmin` says so), every turn's words are
found, and an earlier state's words are found once."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.builders import T0
from tests.support.process import ServeProcess, serve_process
from tests.support.upload_model import log_bytes, phrase
from tests.team.conftest import TeamStore

pytestmark = pytest.mark.team

SEARCH_SECONDS = 60


def found(server: ServeProcess, q: str) -> dict[str, Any]:
    """The search's answer once nothing is pending (indexing is the worker's)."""
    deadline = time.monotonic() + SEARCH_SECONDS
    while True:
        answer = httpx.get(f"{server.url}/api/search", params={"q": q}, timeout=120)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        if not body.get("pending") or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def append(server: ServeProcess, before: bytes, after: bytes) -> None:
    answer = httpx.post(
        f"{server.url}/api/pushes/grew",
        params={"created": T0},
        content=after[len(before) :],
        headers={"Upload-Offset": str(len(before)), "If-Match": f'"{hashlib.sha256(before).hexdigest()}"'},
        timeout=120,
    )
    assert answer.status_code == 201, answer.text


def test_appends_write_only_their_rows_and_every_turn_is_found(team_store: TeamStore, tmp_path: Path) -> None:
    import psycopg  # the test-team extra: collecting the suite without it must not fail (`make test-fast`)

    with serve_process([], tmp_path / "a", options=team_store.options, env=team_store.env) as server:
        first = log_bytes("grew", 1, 0)
        answer = httpx.post(f"{server.url}/api/uploads", params={"name": "session.jsonl"}, content=first, timeout=120)
        assert answer.status_code == 201, answer.text
        assert found(server, phrase("grew", 0, 1))["total"] == 1
        with psycopg.connect(team_store.store) as conn:
            (chain,) = conn.execute("SELECT chain FROM search_sessions").fetchone() or (None,)
            rows_before = dict(conn.execute("SELECT key, xmin::text FROM search_rows WHERE chain = %s", (chain,)))
        before = first
        for turns in (2, 3):
            now = log_bytes("grew", turns, 0)
            append(server, before, now)
            before = now
            hits = found(server, phrase("grew", 0, turns))
            assert [h["key"] for h in hits["hits"]] == ["grew"], "the appended turn's words are found"
            assert found(server, phrase("grew", 0, 1))["total"] == 1, "the first turn's, once: no earlier state's"
        with psycopg.connect(team_store.store) as conn:
            sessions = conn.execute("SELECT chain, digest FROM search_sessions").fetchall()
            rows_after = dict(conn.execute("SELECT key, xmin::text FROM search_rows WHERE chain = %s", (chain,)))
        assert sessions == [(chain, hashlib.sha256(before).hexdigest())], "one chain, now the newest upload's"
        assert len(rows_after) > len(rows_before)
        untouched = [k for k, xmin in rows_before.items() if rows_after.get(k) == xmin]
        # the first turn's rows were written once, when it was uploaded: appends left them as they were (its last
        # row may draw on what comes after it, and is written again then)
        assert len(untouched) >= len(rows_before) - 1, (rows_before, rows_after)
