"""The team lane's servers: one PostgreSQL and one SeaweedFS for the whole run, a fresh database and
bucket for each test. They skip when the servers cannot start here, and fail under CI=true."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.team.servers import ObjectStore, Postgres, ServerMissing, postgres, seaweedfs


@dataclass(frozen=True, slots=True)
class TeamServers:
    postgres: Postgres
    objects: ObjectStore


@dataclass(frozen=True, slots=True)
class TeamStore:
    """What `serve` is given to run on the team store: the two URLs and the AWS variables."""

    store: str
    blobs: str
    env: dict[str, str]

    @property
    def options(self) -> list[str]:
        return ["--store", self.store, "--blobs", self.blobs]


@pytest.fixture(scope="session")
def team_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamServers]:
    with ExitStack() as stack:
        try:
            # outside pytest's own temp tree, which only its (root) user may enter: PostgreSQL runs as another
            pg_folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dsh-inspect-pg-")))
            pg = stack.enter_context(postgres(pg_folder))
            objects = stack.enter_context(seaweedfs(tmp_path_factory.mktemp("seaweedfs")))
        except ServerMissing as exc:
            if os.environ.get("CI") == "true":
                pytest.fail(f"the team lane's servers must start under CI: {exc}")
            pytest.skip(f"the team lane's servers cannot start here: {exc}")
        yield TeamServers(pg, objects)


@pytest.fixture
def team_store(team_servers: TeamServers) -> TeamStore:
    """A new database and a bucket not made yet: the store migrates the one and creates the other."""
    return TeamStore(
        team_servers.postgres.new_database(), team_servers.objects.new_bucket_url(), team_servers.objects.env()
    )
