"""Each client's share of a process's time (issue 33): charged by processor sharing, so a client pays for the
time it took from others, not for the time it waited behind them; refused until its charges age out."""

from __future__ import annotations

import pytest
from dsh_inspect.access import shares
from dsh_inspect.access.shares import ServerShares


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    ticking = Clock()
    monkeypatch.setattr(shares.time, "monotonic", ticking)
    return ticking


def test_requests_in_flight_together_share_each_second(clock: Clock) -> None:
    counted = ServerShares(seconds_per_minute=10)
    a = counted.begin("a")  # alone for 1 s
    clock.now += 1
    b = counted.begin("b")  # then with b for 2 s
    clock.now += 2
    assert counted.end("a", a) == pytest.approx(2.0)
    clock.now += 1  # b alone for its last second
    assert counted.end("b", b) == pytest.approx(2.0)


def test_a_client_waiting_behind_many_is_charged_its_part(clock: Clock) -> None:
    counted = ServerShares(seconds_per_minute=10)
    heavy = [counted.begin("abuser") for _ in range(9)]
    reader = counted.begin("reader")
    clock.now += 5  # a page that took 5 s among nine others took half a second from them
    assert counted.end("reader", reader) == pytest.approx(0.5)
    assert counted.retry_after("reader") is None
    clock.now += 9  # the nine go on, among themselves
    assert sum(counted.end("abuser", began) for began in heavy) == pytest.approx(13.5)
    assert counted.retry_after("abuser") is not None


def test_a_client_past_its_share_waits_until_enough_has_aged_out(clock: Clock) -> None:
    counted = ServerShares(seconds_per_minute=3)
    for _ in range(2):  # 2 s at t=0, 2 s at t=10
        began = counted.begin("abuser")
        clock.now += 2
        counted.end("abuser", began)
        clock.now += 8
    reader = counted.begin("reader")  # somebody else wants the server meanwhile
    # at t=20 it has been charged 4 s in the minute: over by 1 until the first 2 s age out at t=62
    assert counted.retry_after("abuser") == 42
    assert counted.retry_after("reader") is None
    counted.end("reader", reader)
    clock.now += 42
    assert counted.retry_after("abuser") is None


def test_a_client_alone_is_never_held_back(clock: Clock) -> None:
    """Past its share, a client is refused only while another has asked in the last CONTENDED seconds."""
    counted = ServerShares(seconds_per_minute=1)
    began = counted.begin("other")
    clock.now += 0.1
    counted.end("other", began)
    began = counted.begin("script")
    clock.now += 5
    counted.end("script", began)
    assert counted.retry_after("script") is not None  # the other asked 5 s ago
    clock.now += shares.CONTENDED
    assert counted.retry_after("script") is None  # nobody else since: the server is its own
    began = counted.begin("other")
    assert counted.retry_after("script") is not None  # until somebody else asks
    counted.end("other", began)
