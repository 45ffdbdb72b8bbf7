"""The verdict has one JSON shape: `check --json` gives each session's as its JSON twin does."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
from dsh_inspect.cli import run_check
from dsh_inspect.model.rules import DSH_RELEASE

from tests.support.builders import header, two_turns
from tests.support.server import app_client


def write(path: Path, lines: list[bytes]) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_the_json_twin_gives_the_verdict_as_check_json_does(tmp_path: Path) -> None:
    events = [orjson.dumps(e) for e in two_turns().events]
    end = next(e["seq"] for e in two_turns().events if e["type"] == "turn/end")
    # refused, located: garbage after turn 1's end, and turn 2 after it (committed corruption)
    write(
        tmp_path / "broken" / "session.jsonl",
        [orjson.dumps(header("broken")), *events[: end + 1], b"{garbage", *events[end + 1 :]],
    )
    # repaired: its final turn left open
    write(tmp_path / "open" / "session.jsonl", [orjson.dumps(header("open-turn")), *events[:-1]])
    out = io.StringIO()
    assert run_check([str(tmp_path)], as_json=True, out=out, err=io.StringIO()) == 1
    checked = {s["id"]: s["verdict"] for s in orjson.loads(out.getvalue())["sessions"]}
    with app_client([str(tmp_path)]) as client:
        twins = {key: client.get(f"/api/sessions/{key}").json()["verdict"] for key in checked}
    assert twins == checked
    broken, repaired = checked["broken"], checked["open-turn"]
    assert (broken["category"], broken["accepted"], broken["dsh"]) == ("refused", False, DSH_RELEASE)
    assert broken["location"].startswith(str(tmp_path / "broken" / "session.jsonl")) and broken["repairs"] == []
    assert (repaired["category"], repaired["accepted"]) == ("repaired", True)
    assert "closed the open final turn" in repaired["repairs"][0]
