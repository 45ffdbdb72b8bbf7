"""A live page follows a pushed session whichever process received the append (docs/decisions/0024-push.md),
on real PostgreSQL and SeaweedFS: process A's open live tail sends the rows appended through process B within
two seconds; PostgreSQL's notices tell A of the change, so its tail does not ask the catalog at every poll."""

from __future__ import annotations

import hashlib
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.support.builders import T0
from tests.support.live_stream import live_tail
from tests.support.process import serve_process
from tests.support.upload_model import log_bytes, phrase
from tests.team.conftest import TeamStore

pytestmark = pytest.mark.team


def test_a_page_on_one_process_follows_appends_through_the_other(team_store: TeamStore, tmp_path: Path) -> None:
    with ExitStack() as stack:
        a, b = (
            stack.enter_context(serve_process([], tmp_path / n, options=team_store.options, env=team_store.env))
            for n in ("a", "b")
        )
        before = log_bytes("followed", 2, 0)
        sent = httpx.post(f"{b.url}/api/uploads", params={"name": "session.jsonl"}, content=before, timeout=60)
        assert sent.status_code == 201, sent.text
        with live_tail(a.url, "followed") as stream:
            for turns in (3, 4):
                now = log_bytes("followed", turns, 0)
                appended = httpx.post(
                    f"{b.url}/api/pushes/followed",
                    params={"created": T0},
                    content=now[len(before) :],
                    headers={"Upload-Offset": str(len(before)), "If-Match": f'"{hashlib.sha256(before).hexdigest()}"'},
                    timeout=60,
                )
                assert appended.status_code == 201, appended.text
                began, rows = time.monotonic(), ""
                while phrase("followed", 0, turns) not in rows:  # the rows that changed first, then the new turn's
                    rows = stream.until("rows")
                    assert time.monotonic() - began < 2.0, f"A's page had not shown B's append after 2 s: {rows}"
                before = now
        raw = httpx.get(f"{a.url}/sessions/followed/raw", timeout=60)
        assert raw.content == before, "A serves the session as B received it, byte for byte"
