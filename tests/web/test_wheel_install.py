"""A built wheel, installed without the checkout beside it, serves pages: templates/ and static/ (kept at
the repo root) travel as data files into <prefix>/share/dsh-inspect, the demo sessions as package data.

Builds offline (`pip wheel --no-build-isolation --no-index`, setuptools>=77 from the `test` extra) from a copy
of the sources, installs the wheel with `--no-deps` into a fresh venv that borrows this venv's dependencies
(one path line in a .pth, so this venv's editable `app` finder stays inactive), and runs it from outside
the repo. About 5 s.
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

pytestmark = pytest.mark.wheel

PROJECT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "app", "templates", "static")

CHECK = textwrap.dedent('''
    import json
    import app
    from fastapi.testclient import TestClient
    from app.cli import default_paths
    from app.web.app import create_app
    from app.web.state import ASSETS, compile_templates

    paths = default_paths()
    application = create_app(paths)
    compile_templates(application.state.web.templates)
    client = TestClient(application, base_url="http://127.0.0.1")
    css = client.get("/static/inspect.css")
    listing = client.get("/api/sessions").json()
    key = next(s["key"] for s in listing["sessions"] if "demo-tools" in s["key"])
    page = client.get(f"/sessions/{key}")
    print(json.dumps({"app": app.__file__, "assets": str(ASSETS), "paths": paths,
                      "css": [css.status_code, css.headers.get("content-type", ""), len(css.text)],
                      "page": [page.status_code, "inspect.css" in page.text, "demo-tools" in page.text]}))
''')


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    environ |= {"PIP_DISABLE_PIP_VERSION_CHECK": "1", **(env or {})}
    done = subprocess.run([str(a) for a in args], check=False, cwd=cwd, env=environ, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"{args[:4]} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_a_built_wheel_serves_pages_outside_the_checkout(tmp_path: Path) -> None:
    setuptools = _version("setuptools")
    if setuptools < (77,):
        pytest.skip("an offline wheel build needs setuptools>=77 in this venv (pip install -e '.[test]')")

    src = tmp_path / "src"  # a copy: an in-tree build would leave build/ and egg-info in the checkout
    for name in SOURCES:
        if (PROJECT / name).is_dir():
            shutil.copytree(PROJECT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(PROJECT / name, src / name)
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", dist, src, cwd=tmp_path)
    (wheel,) = dist.glob("dsh_inspect-*.whl")

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel,
         cwd=tmp_path)
    purelib = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                        cwd=tmp_path).stdout.strip())
    (purelib / "zz_project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    # Every template and static file of the checkout is installed (data-files do not recurse:
    # a new templates/ folder needs its own line in pyproject.toml).
    share = venv / "share" / "dsh-inspect"
    for folder in ("templates", "static"):
        assert _files(share / folder) == _files(src / folder), f"{folder}/ differs from the installed copy"
    assert _files(purelib / "app" / "demo" / "sessions") == _files(src / "app" / "demo" / "sessions")

    home = tmp_path / "home"  # no ~/.dsh/sessions: only the bundled demo sessions are served
    home.mkdir()
    env = {"HOME": str(home), "DSH_HOME": str(home / ".dsh")}
    out = json.loads(_run(python, "-c", CHECK, cwd=home, env=env).stdout.strip().splitlines()[-1])
    assert Path(out["app"]).resolve().is_relative_to(purelib.resolve()), out["app"]
    assert Path(out["assets"]).resolve() == share.resolve()
    assert [Path(p).resolve() for p in out["paths"]] == [(purelib / "app" / "demo" / "sessions").resolve()]
    status, kind, size = out["css"]
    assert status == 200 and kind.startswith("text/css") and size > 1000
    assert out["page"] == [200, True, True]


def _version(name: str) -> tuple[int, ...]:
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        return ()
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
