"""A team server's read cache: blobs streamed from the object store into `--data-dir/cache`, bounded by
`read_cache_mb`, the least recently read going first."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from dsh_inspect.store.blobs import Received
from dsh_inspect.store.s3_blobs import S3Blobs

from tests.team.conftest import TeamStore


def received(folder: Path, data: bytes) -> Received:
    temp = folder / f"upload-{os.getpid()}-{len(list(folder.iterdir()))}.part"
    temp.write_bytes(data)
    return Received(temp, hashlib.sha256(data).hexdigest(), len(data))


@pytest.mark.team
def test_the_read_cache_keeps_the_most_recently_read_within_its_bound(
    team_store: TeamStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in team_store.env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "tmp").mkdir()
    writer = S3Blobs(team_store.blobs, tmp_path / "writer-cache", cache_bytes=10_000)  # creates the bucket
    datas = [bytes([n]) * 1000 for n in range(3)]
    digests = []
    for data in datas:
        r = received(tmp_path / "tmp", data)
        writer.publish(r)
        digests.append(r.digest)
    reader = S3Blobs(team_store.blobs, tmp_path / "cache", cache_bytes=2_500)
    for digest, data in zip(digests, datas, strict=True):
        assert reader.fetch(digest).read_bytes() == data
    cached = sorted(p.name for p in (tmp_path / "cache").glob("*/*"))
    assert cached == sorted(digests[1:]), "the least recently read copy went; two fit in 2,500 bytes"
    reader.fetch(digests[1])  # read again: now the first of the two to stay
    assert reader.fetch(digests[0]).read_bytes() == datas[0], "a copy that went is streamed again"
    assert sorted(p.name for p in (tmp_path / "cache").glob("*/*")) == sorted([digests[0], digests[1]])
    assert b"".join(reader.chunks(digests[2])) == datas[2], "and any blob streams straight from the store"
