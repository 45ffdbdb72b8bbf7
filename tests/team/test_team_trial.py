"""README "Run it for a team" as written: `make team-trial`'s script starts PostgreSQL, SeaweedFS and two
processes, and two logs both named `session.jsonl` sent to them are listed by both."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.process import PROJECT

pytestmark = pytest.mark.team


def test_the_local_team_trial_lists_every_session_in_both_processes(team_servers: object) -> None:
    # `team_servers` only skips (or fails under CI) where PostgreSQL and SeaweedFS cannot start here
    done = subprocess.run(
        [sys.executable, "scripts/team_trial.py", "--check"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "both processes list both sessions" in done.stderr
