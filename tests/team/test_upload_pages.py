"""The team catalog pages its uploads as the embedded one does (issue 30)."""

from __future__ import annotations

import pytest

from tests.support.catalog_pages import check_pages
from tests.team.conftest import TeamStore


@pytest.mark.team
def test_the_team_catalog_pages_its_uploads(team_store: TeamStore) -> None:
    from dsh_inspect.store.pg_catalog import PostgresCatalog

    check_pages(PostgresCatalog(team_store.store))
