"""The team catalog's schema is numbered steps applied at start (app/store/migrations/postgresql/)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from dsh_inspect.store.schema import migrations

from tests.team.conftest import TeamStore


@pytest.mark.team
def test_processes_starting_together_migrate_a_new_database_once(team_store: TeamStore) -> None:
    import psycopg
    from dsh_inspect.store.pg_catalog import PostgresCatalog

    with ThreadPoolExecutor(4) as pool:
        catalogs = list(pool.map(lambda _: PostgresCatalog(team_store.store), range(4)))
    assert {c.version() for c in catalogs} == {0}
    with psycopg.connect(team_store.store) as conn:
        steps = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        assert steps == [(m.version, m.name) for m in migrations("postgresql")]
