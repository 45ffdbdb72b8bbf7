"""What `dsh-inspect push` says when it cannot do it all (docs/decisions/0024-push.md): exit 2 for a usage error or a
server it cannot reach or that refuses its token, exit 1 when the server refused a file (named, with the
server's reason and the setting to raise), and with access control on, what each token may push."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.process import PROJECT
from tests.support.server import live_server
from tests.support.upload_model import log_bytes
from tests.support.uploads import jsonl_bytes
from tests.web.test_access_routes import secret_of
from tests.web.test_push_cli import MIB, big_log, closed_port, json_of, push, push_env, pushed, raw, twin

pytestmark = pytest.mark.slow  # `dsh-inspect push` processes, one retrying an unreachable server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_an_unreachable_server_exits_2_after_trying_again(home: Path, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_bytes(log_bytes("nowhere", 1, 0))
    url = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    done = push([log], url, home, "--json")
    took = time.monotonic() - started
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"dsh-inspect push: {url} did not answer" in done.stderr
    said = json_of(done)
    assert (said["sent"], said["bytes"]) == (0, 0) and "did not answer" in said["error"]
    assert took >= 6.5, "tried again after 1, 2 and 4 s before giving up"


@pytest.mark.parametrize(
    ("more", "said"),
    [
        (["--to", "localhost:8000"], "--to 'localhost:8000': give the server's URL"),
        (["--to", "http://127.0.0.1:9", "--token-file", "/nonexistent/token"], "--token-file:"),
    ],
    ids=["to without a scheme", "token file missing"],
)
def test_a_usage_error_exits_2_and_says_why(more: list[str], said: str, home: Path, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_bytes(log_bytes("usage", 1, 0))
    done = subprocess.run(
        [sys.executable, "-m", "dsh_inspect", "push", str(log), *more],
        cwd=PROJECT,
        env=push_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert said in done.stderr


def test_a_path_that_does_not_exist_exits_2(home: Path, tmp_path: Path) -> None:
    done = push([tmp_path / "missing"], f"http://127.0.0.1:{closed_port()}", home)
    assert done.returncode == 2
    assert f"{tmp_path / 'missing'}: no such file or folder" in done.stderr


def test_what_the_server_refuses_exits_1_naming_the_file_and_the_setting(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    small, big = folder / "small.jsonl", folder / "big.jsonl"
    small.write_bytes(big_log("small", 1, 0))
    big.write_bytes(big_log("big", 3, 700_000))
    assert big.stat().st_size > MIB
    with live_server([], data_dir=str(tmp_path / "data"), max_upload_mb=1) as url:
        done = push([folder], url, home, "--json")
        assert done.returncode == 1, (done.stdout, done.stderr)
        said = json_of(done)
        assert said["sent"] == 1
        [refused] = said["refused"]
        assert (refused["path"], refused["status"]) == (str(big), 413)
        assert "max_upload_mb" in refused["reason"]
        assert raw(url, "small") == small.read_bytes() and raw(url, "big") is None

        big.unlink()
        small.write_bytes(big_log("small", 2, 600_000))  # an append within the limit
        assert pushed([folder], url, home)["sent"] == 1
        held = small.read_bytes()
        small.write_bytes(big_log("small", 3, 600_000))  # an append that would make the session too large
        done = push([folder], url, home)
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert f"refused: {small}:" in done.stderr and "max_upload_mb" in done.stderr
        assert "1 refused" in done.stdout
        assert raw(url, "small") == held, "the server keeps what it held"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A server with access control on, and a token per role plus one scoped to /work/alpha."""
    data = tmp_path_factory.mktemp("guarded") / "data"
    secrets = {role: secret_of(data, role, role) for role in ("admin", "member", "viewer")}
    secrets["alpha"] = secret_of(data, "alpha", "member", "--project", "/work/alpha")
    with live_server([], data_dir=str(data), require_auth=True) as url:
        yield url, secrets


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_with_access_control_a_token_pushes_and_none_is_refused(
    guarded: tuple[str, dict[str, str]], home: Path, tmp_path: Path
) -> None:
    url, secrets = guarded
    admin = bearer(secrets["admin"])
    log = tmp_path / "session.jsonl"
    log.write_bytes(log_bytes("guarded", 1, 0))

    nobody = push([log], url, home)
    assert nobody.returncode == 2
    assert "refused the token" in nobody.stderr and "send an API token" in nobody.stderr
    wrong = push([log], url, home, token="dshi_not-a-token")
    assert wrong.returncode == 2 and "the token is not valid" in wrong.stderr
    viewer = push([log], url, home, token=secrets["viewer"])
    assert viewer.returncode == 1, (viewer.stdout, viewer.stderr)  # refused, as for a store or a ZIP
    assert "may not upload" in viewer.stderr, viewer.stderr
    assert raw(url, "guarded", admin) is None, "nothing was stored by a refused push"

    assert pushed([log], url, home, token=secrets["member"])["sent"] == 1
    assert raw(url, "guarded", admin) == log.read_bytes()
    token_file = tmp_path / "token"
    token_file.write_text(secrets["member"] + "\n")
    log.write_bytes(log_bytes("guarded", 2, 0))
    tally = pushed([log], url, home, "--token-file", str(token_file))
    assert tally["bytes"] == len(log_bytes("guarded", 2, 0)) - len(log_bytes("guarded", 1, 0))
    assert raw(url, "guarded", admin) == log.read_bytes()
    [version] = twin(url, "guarded", admin)["versions"]
    assert len(version["uploads"]) == 2


def test_a_token_scoped_to_a_project_pushes_that_projects_sessions_only(
    guarded: tuple[str, dict[str, str]], home: Path, tmp_path: Path
) -> None:
    url, secrets = guarded
    admin = bearer(secrets["admin"])
    folder = tmp_path / "logs"
    folder.mkdir()
    alpha, beta = folder / "alpha.jsonl", folder / "beta.jsonl"
    alpha.write_bytes(jsonl_bytes("in-alpha", 1, cwd="/work/alpha"))
    beta.write_bytes(jsonl_bytes("in-beta", 1, cwd="/work/beta"))
    done = push([folder], url, home, "--json", token=secrets["alpha"])
    assert done.returncode == 1, (done.stdout, done.stderr)
    said = json_of(done)
    assert (said["sessions"], said["sent"]) == (2, 1)
    [refused] = said["refused"]
    assert (refused["path"], refused["status"]) == (str(beta), 403)
    assert "/work/beta" in refused["reason"]
    assert raw(url, "in-alpha", admin) == alpha.read_bytes()
    assert raw(url, "in-beta", admin) is None

    alpha.write_bytes(jsonl_bytes("in-alpha", 2, cwd="/work/alpha"))
    again = push([folder], url, home, "--json", token=secrets["alpha"])
    assert again.returncode == 1
    assert [r["path"] for r in json_of(again)["refused"]] == [str(beta)]
    assert raw(url, "in-alpha", admin) == alpha.read_bytes(), "its own project's log grew on the server"
    assert len(twin(url, "in-alpha", admin)["versions"]) == 1
