"""A built wheel, installed without the checkout beside it, is a package other projects can live with.

The repository keeps its layout in app/; the wheel installs the package `dsh_inspect`, with templates/
and static/ (kept at the repo root) as data files in <prefix>/share/dsh-inspect and the demo sessions as
package data. So a project with its own `app/` package (most FastAPI projects) keeps importing its own
`app`, and pytest loads the `dsh_inspect` plugin beside it, whether run as `pytest` or `python -m pytest`.

Builds offline (`pip wheel --no-build-isolation --no-index`, setuptools>=77 from the `test` extra) from a
copy of the sources, installs the wheel with `--no-deps` into a fresh venv that borrows this venv's
dependencies (one path line in a .pth: a path added that way has its own .pth files ignored, so this
venv's editable finder stays inactive there) and gives it the `pytest` script pip would have written.
About 15 s, a Chromium included.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from dsh_inspect.testing.browser import chromium_path

pytestmark = pytest.mark.wheel  # in Chromium too: its lane is the one that builds and installs the wheel

PROJECT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "app", "templates", "static")

CHECK = textwrap.dedent("""
    import json
    import dsh_inspect
    from fastapi.testclient import TestClient
    from dsh_inspect.cli import default_paths
    from dsh_inspect.web.app import create_app
    from dsh_inspect.web.state import ASSETS, compile_templates

    paths = default_paths()
    application = create_app(paths)
    compile_templates(application.state.web.templates)
    client = TestClient(application, base_url="http://127.0.0.1")
    css = client.get("/static/inspect.css")
    listing = client.get("/api/sessions").json()
    key = next(s["key"] for s in listing["sessions"] if "demo-tools" in s["key"])
    page = client.get(f"/sessions/{key}")
    print(json.dumps({"package": dsh_inspect.__file__, "assets": str(ASSETS), "paths": paths,
                      "css": [css.status_code, css.headers.get("content-type", ""), len(css.text)],
                      "page": [page.status_code, "inspect.css" in page.text, "demo-tools" in page.text]}))
""")

# A small FastAPI project of someone else's: its own `app` package, its own tests, and a browser test
# that uses the plugin's fixtures without a conftest.py or a -p flag.
FOREIGN = {
    "pyproject.toml": """
        [project]
        name = "their-service"
        version = "1.0"

        [tool.pytest.ini_options]
        pythonpath = ["."]
        addopts = "--strict-markers -p no:cacheprovider"
    """,
    "app/__init__.py": "",
    "app/main.py": """
        from fastapi import FastAPI

        app = FastAPI()


        @app.get("/health")
        def health() -> dict[str, str]:
            return {"status": "ok"}
    """,
    "app/testing.py": """
        GREETING = "their own app.testing"
    """,
    "tests/test_their_app.py": """
        from fastapi.testclient import TestClient

        from app.main import app
        from app.testing import GREETING


        def test_their_own_app_package_is_the_one_imported():
            assert TestClient(app).get("/health").json() == {"status": "ok"}
            assert GREETING == "their own app.testing"
    """,
    "tests/test_seeded_history.py": """
        import pytest
        from playwright.sync_api import expect

        EVENTS = [
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": "user/message", "surfaceOp": "append",
             "data": {"id": "m-1", "role": "user", "content": [{"type": "text", "text": "hello from {{cwd}}"}],
                      "source": {"kind": "user"}}},
            {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
        ]


        @pytest.mark.dsh_root(compression="none")
        def test_a_recorded_history_reads_in_chromium(seed_session, chromium_page):
            chromium_page.goto(seed_session(EVENTS, placeholders={"cwd": "/srv/their-service"}))
            expect(chromium_page.locator("[data-user-text]")).to_have_text("hello from /srv/their-service")
    """,
    # Upstream-style scenarios (dsh's own web e2e lane), ported onto the plugin's builders and goldens.
    "tests/fixtures/seed.jsonl": """
        {"type":"session","version":0,"id":"{{sessionId}}","createdAt":1784974100747,"cwd":"{{cwd}}/workspace"}
        {"type":"turn/start","data":{"turn":1}}
        {"type":"user/message","data":{"id":"m-1","role":"user","content":[{"type":"text","text":"Read a.txt"}],\
"source":{"kind":"user","rpcId":"{{rpcId}}"}},"surfaceOp":"append"}
        {"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}
    """,
    "tests/goldens/answer.txt": """
        The file says alpha.
    """,
    "tests/test_upstream_scenarios.py": """
        import pytest
        from playwright.sync_api import expect

        from dsh_inspect.testing import SeedError, events as ev


        def test_seeded_history_takes_live_instructions(seed_session, append_events, chromium_page):
            url = seed_session("fixtures/seed.jsonl", cwd="/srv/their-service")
            chromium_page.goto(url)
            expect(chromium_page.locator("[data-user-text]")).to_have_text("Read a.txt")
            append_events(url, [ev.instructions("<system-reminder>Be brief.</system-reminder>", "AGENTS.md")])
            expect(chromium_page.get_by_role("button", name="Context injection AGENTS.md", exact=True)).to_be_visible()


        @pytest.mark.dsh_browser(viewport=(390, 844), color_scheme="dark")
        def test_a_tool_round_reads_on_a_phone(seed_session, chromium_page, text_golden):
            chromium_page.goto(seed_session([
                ev.turn_start(), ev.step_start(), ev.prompt("Read a.txt"),
                *ev.tool_use("read", {"file_path": "a.txt"}, "alpha"),
                ev.step_end(), ev.step_start(), ev.answer("The file says alpha.", reasoning="It said alpha."),
                ev.step_end(), ev.turn_end(),
            ]))
            answer = chromium_page.get_by_text("The file says alpha.")
            expect(answer).to_be_visible()
            assert chromium_page.evaluate("document.documentElement.scrollWidth") <= 390
            text_golden(answer.inner_text(), "goldens/answer.txt")


        def test_an_event_dsh_would_refuse_fails_at_seed_time(seed_session):
            no_id = {"type": "user/message", "surfaceOp": "append",
                     "data": {"role": "user", "content": [], "source": {"kind": "user"}}}
            with pytest.raises(SeedError, match="event 1 [(]user/message[)]"):
                seed_session([ev.turn_start(), no_id, ev.turn_end()])
    """,
}

# The console script pip writes for pytest's `console_scripts` entry point (`--no-deps` wrote none).
PYTEST_SCRIPT = """#!{python}
import sys
from pytest import console_main
if __name__ == "__main__":
    sys.exit(console_main())
"""


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    environ |= {"PIP_DISABLE_PIP_VERSION_CHECK": "1", **(env or {})}
    done = subprocess.run(
        [str(a) for a in args], check=False, cwd=cwd, env=environ, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, f"{args[:4]} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(venv, its purelib, the copied sources): a wheel built from a copy of the checkout, installed alone."""
    if _version("setuptools") < (77,):
        pytest.fail("an offline wheel build needs setuptools>=77 in this venv (pip install -e '.[test]')")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"  # a copy: an in-tree build would leave build/ and egg-info in the checkout
    for name in SOURCES:
        if (PROJECT / name).is_dir():
            shutil.copytree(PROJECT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(PROJECT / name, src / name)
    dist = tmp / "dist"
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-w",
        dist,
        src,
        cwd=tmp,
    )
    (wheel,) = dist.glob("dsh_inspect-*.whl")
    venv = tmp / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp)
    python = venv / "bin" / "python"
    _run(
        sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel, cwd=tmp
    )
    purelib = Path(
        _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp).stdout.strip()
    )
    (purelib / "zz_project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = venv / "bin" / "pytest"
    script.write_text(PYTEST_SCRIPT.format(python=python))
    script.chmod(0o755)
    return venv, purelib, src


def test_the_wheel_installs_dsh_inspect_and_nothing_named_app(installed: tuple[Path, Path, Path]) -> None:
    venv, purelib, src = installed
    assert not (purelib / "app").exists()
    package = purelib / "dsh_inspect"
    # every module of app/ is in the package (pyproject.toml names each subpackage), py.typed beside them
    assert {f for f in _files(package) if f.endswith(".py")} == {f for f in _files(src / "app") if f.endswith(".py")}
    assert (package / "py.typed").is_file()
    # Every template and static file of the checkout is installed (data-files do not recurse:
    # a new templates/ folder needs its own line in pyproject.toml).
    share = venv / "share" / "dsh-inspect"
    for folder in ("templates", "static"):
        assert _files(share / folder) == _files(src / folder), f"{folder}/ differs from the installed copy"
    assert _files(package / "demo" / "sessions") == _files(src / "app" / "demo" / "sessions")
    entry_points = (next(purelib.glob("dsh_inspect-*.dist-info")) / "entry_points.txt").read_text()
    assert "dsh-inspect = dsh_inspect.cli:main" in entry_points
    assert "dsh_inspect = dsh_inspect.testing.plugin" in entry_points


def test_the_installed_package_serves_pages_outside_the_checkout(
    installed: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    venv, purelib, _ = installed
    home = tmp_path / "home"  # no ~/.dsh/sessions: only the bundled demo sessions are served
    home.mkdir()
    env = {"HOME": str(home), "DSH_HOME": str(home / ".dsh")}
    out = json.loads(_run(venv / "bin" / "python", "-c", CHECK, cwd=home, env=env).stdout.strip().splitlines()[-1])
    assert Path(out["package"]).resolve().is_relative_to(purelib.resolve()), out["package"]
    assert Path(out["assets"]).resolve() == (venv / "share" / "dsh-inspect").resolve()
    assert [Path(p).resolve() for p in out["paths"]] == [(purelib / "dsh_inspect" / "demo" / "sessions").resolve()]
    status, kind, size = out["css"]
    assert status == 200 and kind.startswith("text/css") and size > 1000
    assert out["page"] == [200, True, True]
    version = _run(venv / "bin" / "python", "-m", "dsh_inspect", "check", "--help", cwd=home, env=env)
    assert "dsh-inspect check" in version.stdout


@pytest.mark.parametrize("runner", ["pytest", "python -m pytest"])
def test_a_project_with_its_own_app_package_runs_its_plugin_tests(
    installed: tuple[Path, Path, Path], tmp_path: Path, runner: str
) -> None:
    if chromium_path() is None:
        pytest.fail("no Chromium: install Debian's chromium package (make test does)")
    venv, _, _ = installed
    project = tmp_path / "their-service"
    for name, text in FOREIGN.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(textwrap.dedent(text).lstrip())
    command = [venv / "bin" / "pytest"] if runner == "pytest" else [venv / "bin" / "python", "-m", "pytest"]
    done = _run(*command, "-v", cwd=project, env={"HOME": str(tmp_path)})
    assert "test_their_own_app_package_is_the_one_imported PASSED" in done.stdout, done.stdout
    assert "test_a_recorded_history_reads_in_chromium PASSED" in done.stdout, done.stdout
    assert "test_an_event_dsh_would_refuse_fails_at_seed_time PASSED" in done.stdout, done.stdout
    assert "5 passed" in done.stdout, done.stdout


def _version(name: str) -> tuple[int, ...]:
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        return ()
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
