"""Labels of uploads in the embedded store (issue 34: `dsh-inspect push --label`, a CI job's id): kept per upload
in the catalog, added to by the same bytes sent again, carried by an append from its base, and a session's are
those of every upload of it, which reach the registry's entries for the list to filter by."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from dsh_inspect.sessions.registry import Registry
from dsh_inspect.store import Stored, UploadStore
from dsh_inspect.store.catalog import LABEL_CHARS, label_problem, labels_of, with_labels
from dsh_inspect.store.schema import migrations

from tests.support.builders import T0
from tests.support.uploads import jsonl_bytes, received
from tests.support.uploads import put as stored_upload


def put(store: UploadStore, data: bytes, *labels: str, name: str = "session.jsonl") -> Stored:
    """The shared `put`, its labels given one after another."""
    return stored_upload(store, data, name, labels)


def append(store: UploadStore, sid: str, whole: bytes, offset: int, *labels: str) -> Stored:
    prefix = hashlib.sha256(whole[:offset]).hexdigest()
    return store.append(sid, T0, offset, prefix, received(store, whole[offset:]), labels=labels)


def test_an_upload_keeps_its_labels_and_reads_them_back(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    stored = put(store, jsonl_bytes("labelled"), "ci-1234", "nightly", "ci-1234")
    assert stored.created and stored.upload.labels == ("ci-1234", "nightly"), "each once, first given first"
    again = UploadStore(tmp_path)  # another process: read from the catalog
    found = again.upload(stored.upload.digest)
    assert found is not None and found.labels == ("ci-1234", "nightly")
    assert put(store, jsonl_bytes("plain")).upload.labels == ()


def test_the_same_bytes_again_add_their_labels_and_nothing_else(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    first = put(store, jsonl_bytes("rerun"), "ci-1").upload
    before = store.catalog.version()
    rerun = put(store, jsonl_bytes("rerun"), "ci-2", "ci-1")
    assert not rerun.created and rerun.upload.labels == ("ci-1", "ci-2")
    assert store.catalog.version() > before, "other processes see the label"
    found = store.upload(first.digest)
    assert found is not None and found.labels == ("ci-1", "ci-2") and found.uploaded_at == first.uploaded_at
    settled = store.catalog.version()
    assert put(store, jsonl_bytes("rerun"), "ci-2").upload.labels == ("ci-1", "ci-2")
    assert put(store, jsonl_bytes("rerun")).upload.labels == ("ci-1", "ci-2")
    assert store.catalog.version() == settled, "labels it has already change nothing"
    assert len(store.uploads()) == 1


def test_an_append_carries_its_bases_labels_and_its_own(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    short, long = jsonl_bytes("grows", turns=1), jsonl_bytes("grows", turns=2)
    base = put(store, short, "ci-1").upload
    grown = append(store, "grows", long, len(short), "ci-2")
    assert grown.created and grown.upload.base == base.digest
    assert grown.upload.labels == ("ci-1", "ci-2")
    again = append(store, "grows", long, len(short), "ci-3")
    assert not again.created and again.upload.labels == ("ci-1", "ci-2", "ci-3"), "the same append again labels it"
    found = store.upload(base.digest)
    assert found is not None and found.labels == ("ci-1",), "the base keeps its own"


def test_an_append_of_no_bytes_labels_the_upload_those_bytes_are(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    data = jsonl_bytes("held", turns=2)
    held = put(store, data, "ci-1").upload
    labelled = append(store, "held", data, len(data), "ci-2")
    assert not labelled.created and labelled.upload.digest == held.digest
    assert labelled.upload.labels == ("ci-1", "ci-2")
    assert [u.digest for u in store.uploads()] == [held.digest], "no upload was made"
    (history,) = store.sessions()
    assert history.labels == ("ci-1", "ci-2")


def test_a_whole_upload_that_extends_another_carries_its_labels_too(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    base = put(store, jsonl_bytes("whole", turns=1), "ci-1").upload
    grown = put(store, jsonl_bytes("whole", turns=2), "ci-2").upload
    assert grown.base == base.digest and grown.labels == ("ci-1", "ci-2")


def test_a_sessions_labels_are_those_of_every_upload_of_it(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    put(store, jsonl_bytes("versions", turns=2), "ci-1")
    repaired = jsonl_bytes("versions", turns=2)[:-40] + b'"repaired"}\n'
    put(store, repaired, "ci-2", "ci-1")  # a version of its own
    put(store, jsonl_bytes("other"), "ci-3")
    by_id = {h.current.header["id"]: h for h in store.sessions() if h.current.header}
    assert len(by_id["versions"].versions) == 2
    assert by_id["versions"].labels == ("ci-1", "ci-2")
    assert by_id["other"].labels == ("ci-3",)
    assert by_id["versions"].current.labels == ("ci-2", "ci-1"), "each listed upload says its own"


def test_labels_reach_the_registrys_entries_and_served_sessions_have_none(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    (served / "on-disk.jsonl").write_bytes(jsonl_bytes("on-disk"))
    store = UploadStore(tmp_path / "data")
    short, long = jsonl_bytes("entry", turns=1), jsonl_bytes("entry", turns=2)
    put(store, short, "ci-1")
    registry = Registry([str(served)], store)
    by_id = {e.session_id: e for e in registry.entries()}
    assert by_id["entry"].labels == ("ci-1",)
    assert by_id["on-disk"].labels == ()
    version = registry.version
    append(store, "entry", long, len(short), "ci-2")
    registry.refresh()
    (entry,) = [e for e in registry.entries() if e.session_id == "entry"]
    assert entry.labels == ("ci-1", "ci-2")
    assert registry.version > version, "a list made before the label is made again"
    earlier = [e for e in registry.uploaded() if e.as_of is not None]
    assert [e.labels for e in earlier] == [("ci-1", "ci-2")], "an earlier state is the same session"
    put(store, long, "ci-3")  # the same bytes again: labelled, nothing new
    registry.refresh()
    (entry,) = [e for e in registry.entries() if e.session_id == "entry"]
    assert entry.labels == ("ci-1", "ci-2", "ci-3")


def test_an_upload_deleted_and_sent_again_keeps_its_labels_and_gains_the_new(tmp_path: Path) -> None:
    store = UploadStore(tmp_path)
    short, long = jsonl_bytes("hidden", turns=1), jsonl_bytes("hidden", turns=2)
    base = put(store, short, "ci-1").upload
    put(store, long)
    assert store.delete(base.digest)  # extended by another: hidden
    assert store.upload(base.digest) is None
    shown = put(store, short, "ci-2").upload
    assert shown.digest == base.digest and shown.labels == ("ci-1", "ci-2")


def test_a_catalog_of_schema_4_is_migrated_with_no_labels(tmp_path: Path) -> None:
    digest = "b" * 64
    (tmp_path / "blobs" / "bb").mkdir(parents=True)
    (tmp_path / "blobs" / "bb" / digest).write_bytes(b"old")
    with sqlite3.connect(tmp_path / "catalog.sqlite3") as conn:
        for step in migrations("sqlite")[:4]:
            for statement in step.statements:
                conn.execute(statement)
        conn.execute("PRAGMA user_version = 4")
        conn.execute(
            "INSERT INTO uploads (digest, name, size, carrier, media, uploaded_at) VALUES (?, ?, 3, 'jsonl', 0, 1)",
            (digest, "old.jsonl"),
        )
    store = UploadStore(tmp_path)
    (old,) = store.uploads()
    assert old.name == "old.jsonl" and old.labels == ()
    with sqlite3.connect(tmp_path / "catalog.sqlite3") as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (len(migrations("sqlite")),)
        assert conn.execute("SELECT labels FROM uploads").fetchone() == ("[]",)


def test_the_rules_of_a_label() -> None:
    assert label_problem("ci-1234") is None
    assert label_problem("x" * LABEL_CHARS) is None
    assert label_problem("作业 42") is None
    assert label_problem("") is not None
    too_long = label_problem("x" * (LABEL_CHARS + 1))
    assert too_long is not None and "x" * 20 not in too_long, "never said back"
    for control in ("a\nb", "tab\t", "\x00", "del\x7f", "c1\x85"):
        assert label_problem(control) is not None, repr(control)
    assert with_labels(("a", "b"), ["b", "c", "a", "d"]) == ("a", "b", "c", "d")


@pytest.mark.parametrize("text", ["", "not json", "{}", '"a"', "[1, null]", '["a", 2, "b"]'])
def test_a_labels_column_that_is_no_array_of_strings_reads_as_what_strings_it_has(text: str) -> None:
    assert labels_of(text) == (("a", "b") if text == '["a", 2, "b"]' else ())
