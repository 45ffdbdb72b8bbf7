"""A folder of pinned npm packages (its package.json and lock file), installed with `npm ci` once and again
whenever the lock file changes. Where npm cannot install them the test skips, saying why, except under
CI=true, where it fails (the oracle lane's dsh, the sign-in lane's OpenID Connect provider).

xdist's workers share the folder: one installs while the others wait on a lock file beside it, then find the
install done."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest


def unavailable(what: str, why: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is needed under CI=true: {why}")
    pytest.skip(f"{what} cannot be installed here: {why}")


def npm_ci(folder: Path, needed: tuple[Path, ...], what: str) -> None:
    """`npm ci` in `folder` unless what its lock file pins is there already (`needed` exist, the stamp agrees);
    one process at a time."""
    with (folder / ".npm-ci.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or when its process dies
        _npm_ci(folder, needed, what)


def _npm_ci(folder: Path, needed: tuple[Path, ...], what: str) -> None:
    stamp = folder / "node_modules" / ".lock-digest"
    digest = hashlib.sha256((folder / "package-lock.json").read_bytes() + (folder / "package.json").read_bytes())
    if all(p.exists() for p in needed) and stamp.exists() and stamp.read_text() == digest.hexdigest():
        return
    npm = shutil.which("npm")
    if npm is None:
        unavailable(what, "no npm on PATH to fetch it from the npm registry")
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    except subprocess.TimeoutExpired:
        unavailable(what, "npm ci took longer than 10 minutes")
    if done.returncode != 0 or not all(p.exists() for p in needed):
        unavailable(what, f"npm ci failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    stamp.write_text(digest.hexdigest())
