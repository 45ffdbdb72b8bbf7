"""Uploads as a team sends them, on the team store (real PostgreSQL and SeaweedFS) through two dsh-inspect
processes: sessions named alike, the same bytes twice, a session growing upload by upload, a diverging copy,
deletes, each step sent to one process and checked on both (tests/support/upload_model.py; the embedded store
runs the same in tests/unit/test_upload_sessions.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from tests.support.process import serve_process
from tests.support.upload_model import Step, run, steps
from tests.team.conftest import TeamStore

pytestmark = pytest.mark.team


@pytest.fixture
def servers(team_store: TeamStore, tmp_path: Path) -> Iterator[list[httpx.Client]]:
    with ExitStack() as stack:
        processes = [
            stack.enter_context(serve_process([], tmp_path / name, options=team_store.options, env=team_store.env))
            for name in ("a", "b")
        ]
        yield [stack.enter_context(httpx.Client(base_url=process.url)) for process in processes]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=steps)
def test_two_processes_list_find_and_serve_what_the_sequence_implies(
    servers: list[httpx.Client], sequence: list[Step]
) -> None:
    run(servers, sequence)
