"""The embedded catalog pages its uploads newest first, each page where the last ended (issue 30)."""

from __future__ import annotations

from pathlib import Path

from dsh_inspect.store.catalog import SqliteCatalog

from tests.support.catalog_pages import check_pages


def test_the_embedded_catalog_pages_its_uploads(tmp_path: Path) -> None:
    check_pages(SqliteCatalog(tmp_path / "catalog.sqlite3"))
