"""The team lane's servers: one PostgreSQL and one SeaweedFS for the whole run, a fresh database and
bucket for each test. They skip when the servers cannot start here, and fail under CI=true."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.process import ServeProcess, serve_process
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


# The test-team extra's clients, which `make test-fast` does not install: without them the lane skips, and
# fails under CI=true, as it does without its servers.
TEAM_CLIENTS = ("psycopg", "psycopg_pool", "boto3")


@pytest.fixture(scope="session")
def team_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamServers]:
    with ExitStack() as stack:
        try:
            missing = [name for name in TEAM_CLIENTS if importlib.util.find_spec(name) is None]
            if missing:
                raise ServerMissing(f"no {', '.join(missing)}: pip install -e '.[test-team]' (`make test` does)")
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


@dataclass(frozen=True, slots=True)
class Lane:
    """How the processes of one test start: each its own data folder on the team store (nothing on a
    local disk is shared), one shared folder for the embedded store."""

    root: Path
    team: TeamStore | None

    def data_dir(self, name: str) -> Path:
        return self.root / (name if self.team else "shared")

    def start(
        self, name: str, *, by_environment: bool = False, options: Sequence[str] = ()
    ) -> AbstractContextManager[ServeProcess]:
        """`serve` (with more `options`) on this lane's store, named by `--store`/`--blobs` or by
        `DSH_INSPECT_STORE`/`_BLOBS`."""
        team = self.team
        if team is None:
            return serve_process([], self.data_dir(name), options=options)
        if by_environment:
            named = {"DSH_INSPECT_STORE": team.store, "DSH_INSPECT_BLOBS": team.blobs}
            return serve_process([], self.data_dir(name), options=options, env={**team.env, **named})
        return serve_process([], self.data_dir(name), options=[*team.options, *options], env=team.env)


@pytest.fixture(params=[pytest.param("team", marks=pytest.mark.team), "embedded"])
def lane(request: pytest.FixtureRequest, tmp_path: Path) -> Lane:
    team = request.getfixturevalue("team_store") if request.param == "team" else None
    return Lane(tmp_path, team)
