"""The upload store's version model without HTTP (docs/decisions/0018-session-versions.md): an upload that
extends a stored one keeps only its new bytes, plain or zstd; a delete of an upload another extends hides it
and keeps its bytes until the last upload that needs them goes; nothing else is ever a base."""

from __future__ import annotations

from pathlib import Path

from dsh_inspect.store import UploadStore

from tests.support.builders import T0, header
from tests.support.uploads import events, jsonl_bytes, put
from tests.support.writers import batches_of, jsonl_batch, write_zstd, zstd_frame


def stored_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in (root / "blobs").rglob("*") if p.is_file())


def download(store: UploadStore, digest: str) -> bytes:
    upload = store.upload(digest)
    assert upload is not None
    return b"".join(store.chunks(upload))


def test_a_growing_log_is_stored_once_and_each_upload_still_reads_whole(tmp_path: Path) -> None:
    store = UploadStore(tmp_path / "data")
    grown = [jsonl_bytes("grows", turns=n) for n in (1, 2, 3)]
    digests = [put(store, data).upload.digest for data in grown]
    assert stored_bytes(tmp_path / "data") == len(grown[-1]), "each upload kept only the bytes after the last"
    uploads = [store.upload(d) for d in digests]
    assert [u.base for u in uploads if u] == [None, digests[0], digests[1]]
    assert [download(store, d) for d in digests] == grown
    (history,) = store.sessions()
    assert [[s.digest for s in v] for v in history.versions] == [digests], "one version, three uploads"
    assert history.current.digest == digests[-1] and history.first.digest == digests[0]
    assert store.fetch(digests[1]).read_bytes() == grown[1], "an earlier upload read as it stood"


def test_a_zstd_log_that_gained_frames_extends_the_one_before(tmp_path: Path) -> None:
    store = UploadStore(tmp_path / "data")
    everything = events(3)
    short = write_zstd(tmp_path / "a.zstd", header("framed"), batches_of(everything[:12], 5)).read_bytes()
    long = short + b"".join(zstd_frame(jsonl_batch(b)) for b in batches_of(everything[12:], 5))  # dsh appended
    first, second = put(store, short, "session.jsonl.zstd"), put(store, long, "session.jsonl.zstd")
    assert second.upload.base == first.upload.digest and second.upload.carrier == "jsonl-zstd"
    assert stored_bytes(tmp_path / "data") == len(long)
    assert download(store, second.upload.digest) == long


def test_a_copy_that_differs_before_its_end_is_a_version_of_its_own(tmp_path: Path) -> None:
    store = UploadStore(tmp_path / "data")
    a = put(store, jsonl_bytes("forks", turns=2)).upload
    repaired = jsonl_bytes("forks", turns=2)[:-40] + b'"repaired"}\n'
    b = put(store, repaired).upload
    (history,) = store.sessions()
    assert [[s.digest for s in v] for v in history.versions] == [[a.digest], [b.digest]]
    assert history.current.digest == b.digest, "the newest upload is what the session shows"


def test_only_the_same_session_is_a_base(tmp_path: Path) -> None:
    store = UploadStore(tmp_path / "data")
    put(store, jsonl_bytes("reused", turns=1))
    other_run = put(store, jsonl_bytes("reused", turns=2, createdAt=T0 + 1)).upload
    assert other_run.base is None, "the same id created at another time is another session"
    assert len(store.sessions()) == 2


def test_a_deleted_base_is_hidden_until_nothing_extends_it(tmp_path: Path) -> None:
    root = tmp_path / "data"
    store = UploadStore(root)
    grown = [jsonl_bytes("deleted", turns=n) for n in (1, 2)]
    base, top = (put(store, data).upload.digest for data in grown)
    assert store.delete(base)
    assert store.upload(base) is None and [u.digest for u in store.uploads()] == [top], "listed nowhere"
    assert not store.delete(base), "a hidden upload is deleted already"
    assert download(store, top) == grown[1], "its bytes stay: the later upload starts with them"
    (history,) = UploadStore(root).sessions()  # a restart's sweep keeps every part still needed
    assert [[s.digest for s in v] for v in history.versions] == [[top]]
    again = put(store, grown[0])
    assert again.created and store.upload(base) is not None, "the same bytes again show the upload again"
    assert store.delete(base) and store.delete(top)
    assert store.uploads() == [] and stored_bytes(root) == 0, "the last delete took the hidden base with it"
    assert not [p for p in (root / "assembled").rglob("*") if p.is_file()], "and every assembled copy"
