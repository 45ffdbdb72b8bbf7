"""Where the time went, where it is read: the session header, the session twin and `check --json` (issue 40)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from dsh_inspect.cli import run_check

from tests.support.rows import parse, select, text_of
from tests.support.server import app_client

HOME = Path("/work/shared/corpus/dsh-home/sessions")
COMPACTED = "session-2d63c78e-16f5-4333-ae51-0ea39805a2a6"  # three turns, a /compact between the second and third
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with app_client([str(HOME)]) as client:
        yield client


def checked(path: Path) -> dict:
    out = io.StringIO()
    run_check([str(path)], as_json=True, out=out, err=io.StringIO())
    (report,) = orjson.loads(out.getvalue())["sessions"]
    return report


def test_the_twin_gives_the_durations_check_json_gives(client: httpx.Client) -> None:
    twin = client.get(f"/api/sessions/{COMPACTED}").json()
    durations = twin["durations"]
    assert durations == checked(next(HOME.glob(f"*/{COMPACTED}")))["durations"]
    assert durations["wallMs"] == 25_863 and durations["clockBackwards"] == 0 and durations["openSpans"] == 0
    assert [s["key"] for s in durations["steps"]] == ["1.1", "1.2", "2.1", "3.1", "3.2"]
    assert durations["modelMs"] == sum(s["modelMs"] for s in durations["steps"])
    assert durations["idleMs"] > durations["modelMs"] + durations["toolMs"], "most of it was between turns"


def test_the_session_header_says_the_wall_model_and_tool_time(client: httpx.Client) -> None:
    figures = {
        el.get("data-timing"): text_of(el)
        for el in select(parse(client.get(f"/sessions/{COMPACTED}/facts").text), "[data-timing]")
    }
    assert figures == {"wall": "Wall time 25.9 s", "model": "model 145 ms", "tool": "tools 26 ms"}
    zh = {
        el.get("data-timing"): text_of(el)
        for el in select(parse(client.get(f"/sessions/{COMPACTED}/facts", headers=ZH).text), "[data-timing]")
    }
    assert zh["wall"] == "总耗时 25.9 秒"
