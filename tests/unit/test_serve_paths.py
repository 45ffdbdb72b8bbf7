"""What `serve` reads from disk (issue 30, item 4): one person's server shows the demo sessions when given no
path; a team server shows the team's sessions only, the demo too only with `--demo`."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from dsh_inspect.cli import default_paths, demo_path, main, run_serve, served_paths
from dsh_inspect.demo.generate import SESSIONS
from dsh_inspect.settings import Settings


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `$DSH_HOME` whose `sessions/` exists: one person's own sessions on this machine."""
    (tmp_path / "dsh" / "sessions").mkdir(parents=True)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    return tmp_path / "dsh" / "sessions"


def test_the_paths_served(home: Path) -> None:
    demo = str(SESSIONS)
    assert demo_path() == demo
    assert default_paths() == [demo, str(home)]
    assert served_paths([], team=False, demo=False) == [demo, str(home)], "`make run`: the demo, and one's own"
    assert served_paths([], team=False, demo=True) == [demo, str(home)]
    assert served_paths([], team=True, demo=False) == [], "a team server: the team's uploads only"
    assert served_paths([], team=True, demo=True) == [demo]
    assert served_paths(["logs"], team=False, demo=False) == ["logs"]
    assert served_paths(["logs"], team=True, demo=True) == ["logs", demo]
    assert served_paths([demo], team=False, demo=True) == [demo], "never twice"


class Stop(Exception):
    pass


def serve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str], **env: str) -> tuple[int, list[str], Any]:
    """`dsh-inspect serve …` (with `env` set) up to building the app: the paths and settings it was built with
    (the app itself is not made, so no PostgreSQL or object store is reached)."""
    built: dict[str, Any] = {}

    def create_app(paths: list[str], config: Any) -> Any:
        built.update(paths=paths, config=config)
        raise Stop

    monkeypatch.setattr("dsh_inspect.web.app.create_app", create_app)
    monkeypatch.delenv("DSH_INSPECT_STORE", raising=False)
    monkeypatch.delenv("DSH_INSPECT_BLOBS", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    code = main(["serve", "--port", "0", "--data-dir", str(tmp_path / "data"), *argv])
    return code, built["paths"], built["config"]


def test_a_team_server_given_no_path_serves_no_demo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, home: Path
) -> None:
    team = ["--store", "postgresql://inspect@db.internal:5432/inspect", "--blobs", "s3://dsh-sessions/uploads"]
    code, paths, config = serve(monkeypatch, tmp_path, team)
    assert code == 2 and paths == [] and config.store == team[1] and config.blobs == team[3]
    assert serve(monkeypatch, tmp_path, [*team, "--demo"])[1] == [str(SESSIONS)]
    assert serve(monkeypatch, tmp_path, team[:2])[1] == [], "either of the two makes a team server"
    assert serve(monkeypatch, tmp_path, team[2:])[1] == []
    assert serve(monkeypatch, tmp_path, [], DSH_INSPECT_STORE=team[1])[1] == [], "as the environment names it"


def test_one_persons_server_still_shows_the_demo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, home: Path) -> None:
    assert serve(monkeypatch, tmp_path, [])[1] == [str(SESSIONS), str(home)]
    logs = tmp_path / "logs"
    logs.mkdir()
    assert serve(monkeypatch, tmp_path, [str(logs)])[1] == [str(logs)]
    assert serve(monkeypatch, tmp_path, [str(logs), "--demo"])[1] == [str(logs), str(SESSIONS)]


def test_run_serve_takes_demo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, home: Path) -> None:
    seen: list[list[str]] = []

    def create_app(paths: list[str], config: Any) -> Any:
        seen.append(paths)
        raise Stop

    monkeypatch.setattr("dsh_inspect.web.app.create_app", create_app)
    err = io.StringIO()
    assert run_serve([], Settings(port=0, data_dir=str(tmp_path), store="sqlite:///x"), demo=True, err=err) == 2
    assert seen == [[str(SESSIONS)]]
