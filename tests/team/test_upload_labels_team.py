"""Labels of uploads on the team store (PostgreSQL and the object store): kept per upload by migration 0005, seen
by every process, added to by the same bytes sent again through another process, carried by an append."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from dsh_inspect.store import Stored, UploadStore
from dsh_inspect.store.schema import migrations

from tests.support.builders import T0
from tests.support.uploads import jsonl_bytes
from tests.support.uploads import put as stored_upload
from tests.team.conftest import TeamStore

pytestmark = pytest.mark.team


def put(store: UploadStore, data: bytes, *labels: str) -> Stored:
    """The shared `put`, its labels given one after another."""
    return stored_upload(store, data, labels=labels)


def close(store: UploadStore) -> None:
    store.catalog._connections.close()  # type: ignore[attr-defined]  # its pool, not left to the collector


def append(store: UploadStore, sid: str, whole: bytes, offset: int, *labels: str) -> Stored:
    receiving = store.receive()
    receiving.write(whole[offset:])
    prefix = hashlib.sha256(whole[:offset]).hexdigest()
    return store.append(sid, T0, offset, prefix, receiving.finish(), labels=labels)


def test_labels_are_kept_and_added_to_across_processes(
    team_store: TeamStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in team_store.env.items():
        monkeypatch.setenv(name, value)
    a, b = (UploadStore(tmp_path / name, catalog_url=team_store.store, blobs_url=team_store.blobs) for name in "ab")
    try:
        check_labels(a, b)
    finally:
        close(a)
        close(b)


def check_labels(a: UploadStore, b: UploadStore) -> None:
    short, long = jsonl_bytes("team-labels", turns=1), jsonl_bytes("team-labels", turns=2)
    first = put(a, short, "ci-1").upload
    assert first.labels == ("ci-1",)
    (history,) = b.sessions()
    assert history.labels == ("ci-1",), "another process reads them from the catalog"

    again = put(b, short, "ci-2")
    assert not again.created and again.upload.labels == ("ci-1", "ci-2")
    (history,) = a.sessions()
    assert history.labels == ("ci-1", "ci-2"), "the label moved the version every process watches"

    grown = append(a, "team-labels", long, len(short), "ci-3").upload
    assert grown.base == first.digest and grown.labels == ("ci-1", "ci-2", "ci-3")
    held = append(b, "team-labels", long, len(long), "ci-4")
    assert not held.created and held.upload.digest == grown.digest
    (history,) = a.sessions()
    assert history.labels == ("ci-1", "ci-2", "ci-3", "ci-4")
    assert [u.labels for u in b.catalog.newest(10)] == [("ci-1", "ci-2", "ci-3", "ci-4"), ("ci-1", "ci-2")]
    assert [u.labels for u in b.catalog.page(1).uploads] == [("ci-1", "ci-2", "ci-3", "ci-4")]


def test_a_team_catalog_of_schema_4_is_migrated_with_no_labels(team_store: TeamStore) -> None:
    import psycopg
    from dsh_inspect.store.pg_catalog import PostgresCatalog

    with psycopg.connect(team_store.store) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        for step in migrations("postgresql")[:4]:
            for statement in step.statements:
                conn.execute(statement.encode())
            conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (step.version, step.name))
        conn.execute(
            "INSERT INTO uploads (digest, name, size, carrier, media, uploaded_at) VALUES (%s, %s, 3, 'jsonl', 0, 1)",
            ("c" * 64, "old.jsonl"),
        )
    catalog = PostgresCatalog(team_store.store)
    try:
        (old,) = catalog.all()
    finally:
        catalog._connections.close()
    assert old.name == "old.jsonl" and old.labels == ()
