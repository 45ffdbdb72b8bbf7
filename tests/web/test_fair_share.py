"""Each client's share of the server's time (issue 33, `server_seconds_per_minute`): a client that has taken
its share is refused with 429, `Retry-After` and the setting named, after a pause, while another client
wants the server; that client, and the health probes, are answered at once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.server import live_server
from tests.support.uploads import jsonl_bytes

pytestmark = pytest.mark.slow  # a share of 1 s a minute, taken and waited out in real time


def slowly(body: bytes, seconds: float) -> Iterator[bytes]:
    """`body` sent in ten parts over `seconds`: a request the server holds that long."""
    step = len(body) // 10 + 1
    for start in range(0, len(body), step):
        time.sleep(seconds / 10)
        yield body[start : start + step]


def test_a_client_past_its_share_is_refused_and_others_are_not(tmp_path: Path) -> None:
    with live_server([], data_dir=str(tmp_path / "data"), server_seconds_per_minute=1) as url:
        # alone in the server for 1.5 s: past a share of 1 s a minute
        made = httpx.post(
            f"{url}/api/uploads", params={"name": "a.jsonl"}, content=slowly(jsonl_bytes("a"), 1.5), timeout=30
        )
        assert made.status_code == 201
        # alone on the server, it is not held back for no one
        assert httpx.get(f"{url}/api/sessions", timeout=30).status_code == 200
        with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2")) as other:
            assert other.get(f"{url}/api/sessions").status_code == 200  # somebody else wants the server now
            asked = time.monotonic()
            refused = httpx.get(f"{url}/api/sessions", timeout=30)
            assert time.monotonic() - asked >= 1  # a client asking again at once is slowed down
            assert refused.status_code == 429
            assert refused.json()["error"]["setting"] == "server_seconds_per_minute"
            assert "server_seconds_per_minute" in refused.json()["detail"]
            assert 50 <= int(refused.headers["retry-after"]) <= 60
            assert httpx.get(f"{url}/healthz").status_code == 200  # the probes are never refused
            listed = other.get(f"{url}/api/sessions")  # the other is answered as before
            assert listed.status_code == 200
            assert [s["id"] for s in listed.json()["sessions"]] == ["a"]


def test_a_live_tail_is_refused_past_the_share_and_its_open_time_is_not_charged(tmp_path: Path) -> None:
    with live_server([], data_dir=str(tmp_path / "data"), server_seconds_per_minute=1) as url:
        made = httpx.post(f"{url}/api/uploads", params={"name": "a.jsonl"}, content=jsonl_bytes("a"), timeout=30)
        key = made.json()["upload"]["sessions"][0]["key"]
        with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2")) as other:
            # a tail's open time is not charged: held 1.5 s, it leaves its client within a share of 1 s
            with other.stream("GET", f"{url}/sessions/{key}/live", timeout=30) as tail:
                assert tail.status_code == 200
                time.sleep(1.5)
            assert other.get(f"{url}/api/sessions").status_code == 200
            # past the share (a slow upload), it may not open one while somebody else wants the server
            slow = other.post(
                f"{url}/api/uploads", params={"name": "b.jsonl"}, content=slowly(jsonl_bytes("b"), 1.5), timeout=30
            )
            assert slow.status_code == 201
            assert httpx.get(f"{url}/api/sessions", timeout=30).status_code == 200
            refused = other.get(f"{url}/sessions/{key}/live", timeout=30)
            assert refused.status_code == 429
            assert refused.json()["error"]["setting"] == "server_seconds_per_minute"
            assert 1 <= int(refused.headers["retry-after"]) <= 60
