"""Upload limits against a real server process: each refusal names its setting, and the
server's peak memory (VmHWM) stays far below what the bombs would expand to."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.bombs import zip_bomb, zstd_bomb
from tests.support.process import ServeProcess, serve_process
from tests.support.uploads import jsonl_bytes, sqlite_bytes

pytestmark = pytest.mark.slow  # a `serve` process whose memory is measured

MIB = 1 << 20
BOMB = 1024 * MIB  # what each bomb expands to
HEADROOM_KIB = 160 * 1024  # allowed growth of peak memory over the idle server's


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    data_dir = tmp_path_factory.mktemp("data")
    settings = [("max_upload_mb", 4), ("max_decompressed_mb", 32), ("max_sessions_per_upload", 3)]
    with serve_process([], data_dir, *settings) as process:
        yield process


@pytest.fixture(scope="module")
def baseline(server: ServeProcess) -> int:
    return server.memory_kib("VmRSS")


def refused(server: ServeProcess, path: Path | bytes, name: str) -> dict:
    data = path if isinstance(path, bytes) else path.read_bytes()
    response = httpx.post(f"{server.url}/api/uploads", params={"name": name}, content=data, timeout=120)
    assert response.status_code == 413, response.text
    return response.json()


def test_an_oversize_upload_is_refused_with_its_setting(server: ServeProcess, baseline: int) -> None:
    body = refused(server, bytes(5 * MIB), "huge.jsonl")
    assert body["error"]["setting"] == "max_upload_mb"
    assert body["detail"].startswith("huge.jsonl: refused, the upload is 5 MiB, larger than 4 MiB")
    assert "raise it with: dsh-inspect serve --setting max_upload_mb 16" in body["detail"]


def test_a_zstd_bomb_is_refused_early(server: ServeProcess, baseline: int, tmp_path: Path) -> None:
    bomb = zstd_bomb(tmp_path / "bomb.jsonl.zstd", BOMB)
    assert bomb.stat().st_size < 100_000
    body = refused(server, bomb, "bomb.jsonl.zstd")
    assert body["error"]["setting"] == "max_decompressed_mb"
    assert "bomb.jsonl.zstd: refused, the zstd frame at byte" in body["detail"]
    assert "decompresses past the limit of 32 MiB" in body["detail"]
    assert "--setting max_decompressed_mb 128" in body["detail"]
    assert server.memory_kib("VmHWM") - baseline < HEADROOM_KIB


def test_a_zip_bomb_is_refused_early(server: ServeProcess, baseline: int, tmp_path: Path) -> None:
    bomb = zip_bomb(tmp_path / "bomb.zip", BOMB)
    assert bomb.stat().st_size < 2 * MIB
    body = refused(server, bomb, "bomb.zip")
    assert body["error"]["setting"] == "max_decompressed_mb"
    assert "the ZIP member 'session.jsonl' decompresses past the limit of 32 MiB" in body["detail"]
    assert server.memory_kib("VmHWM") - baseline < HEADROOM_KIB


def test_too_many_sessions_are_refused(server: ServeProcess, tmp_path: Path) -> None:
    body = refused(server, sqlite_bytes(tmp_path, ["a", "b", "c", "d"]), "store.sqlite")
    assert body["error"]["setting"] == "max_sessions_per_upload"
    assert "holds 4 sessions; at most 3" in body["detail"]


def test_nothing_refused_was_kept_and_a_small_upload_still_works(server: ServeProcess) -> None:
    assert httpx.get(f"{server.url}/api/uploads").json()["uploads"] == []
    ok = httpx.post(f"{server.url}/api/uploads", params={"name": "ok.jsonl"}, content=jsonl_bytes("ok"))
    assert ok.status_code == 201
