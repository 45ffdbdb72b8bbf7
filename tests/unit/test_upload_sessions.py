"""Uploads as a team sends them (docs/decisions/0018-session-versions.md), on the embedded store: sessions
named alike, the same bytes twice, a session growing upload by upload, a diverging copy, deletes. Hypothesis
drives sequences of them through the app, answering in process; after each step what it lists, finds and serves
equals what the sequence implies (tests/support/upload_model.py). The team store runs the same in tests/team."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from tests.support.server import app_client
from tests.support.upload_model import Step, run, steps


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with app_client([], data_dir=str(tmp_path_factory.mktemp("data"))) as client:
        yield client


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=steps)
def test_every_upload_is_listed_found_and_served_as_the_sequence_implies(
    server: httpx.Client, sequence: list[Step]
) -> None:
    run([server], sequence)
