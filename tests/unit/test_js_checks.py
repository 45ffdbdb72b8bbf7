"""`make check`'s front-end step (tools/js/check.sh): Biome's lint, tsc's check of the JSDoc types and the
export bundle's freshness pass on static/ as committed, and each fails on an error planted in a copy of it,
naming the file and the line."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # Node's Biome and tsc over the front end, three times

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "tools" / "js" / "check.sh"


def check(static: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CHECK), str(static)], cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)


@pytest.fixture
def static(tmp_path: Path) -> Path:
    """A copy of static/, named static/ like the original (the bundle's comments name its modules so)."""
    return Path(shutil.copytree(ROOT / "static", tmp_path / "static"))


def plant(module: Path, line: str) -> int:
    """`line` added at the end of `module` (a module's imports may stand anywhere at its top level); its number."""
    lines = module.read_text(encoding="utf-8").splitlines()
    module.write_text("\n".join([*lines, line, ""]), encoding="utf-8")
    return len(lines) + 1


def test_the_committed_front_end_passes() -> None:
    done = check(ROOT / "static")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_wrong_argument_an_undefined_name_and_a_lint_error_fail_naming_their_lines(static: Path) -> None:
    # `grouped` takes a number (static/wording.js); `dshCount` was a window global, gone with the modules
    call = 'import { grouped } from "./wording.js"; export const planted = grouped("12");'
    wrong_type = plant(static / "search.js", call)
    undefined = plant(static / "folds.js", "export const count = dshCount(3);")
    debugger = plant(static / "upload.js", "debugger;")
    done = check(static)
    said = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"search.js({wrong_type}," in said and "Argument of type 'string' is not assignable" in said, said
    assert f"folds.js({undefined}," in said and "Cannot find name 'dshCount'" in said, said
    assert f"upload.js:{debugger}:" in said and "noDebugger" in said, said


def test_a_stale_export_bundle_fails(static: Path) -> None:
    inspect = static / "inspect.js"
    inspect.write_text(inspect.read_text(encoding="utf-8").replace('"Copied"', '"Copied!"'), encoding="utf-8")
    done = check(static)
    assert done.returncode != 0
    assert "export.bundle.js is not what tools/js/bundle.sh builds" in done.stdout, done.stdout + done.stderr
