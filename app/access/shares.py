"""Each client's share of a server process's time (issue 33), so one client asking without pause for what
costs most cannot slow everyone else's pages.

Processor sharing: while n requests are in flight in the process, each is charged 1/n of every second, so a
client is charged for the time it took from the others, not for the time it waited behind them (a reader
whose page was slow because the server was busy is charged little for it). A client whose charges over the
trailing minute pass its share is refused until enough of them age out, but only while others want the
process too (a request of another client in flight, or charged in the last CONTENDED seconds): one person with
a script on a server of their own is never held back for no one.

Counted per process, as the other quotas are: two processes give a client two shares, each of one process.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

WINDOW = 60.0  # seconds over which a client's charges are summed
SLOT = 1.0  # charges ending within this many seconds of each other are kept as one (at most 60 a client)
CONTENDED = 10.0  # seconds after another client's request ended during which the process is wanted by others
KEPT_CLIENTS = 10_000  # past this many clients charged in the window, the least recent are forgotten first


class ServerShares:
    def __init__(self, seconds_per_minute: float) -> None:
        self.seconds_per_minute = seconds_per_minute
        self._lock = threading.Lock()
        self._in_flight: Counter[str] = Counter()  # requests in flight, by client
        self._served = 0.0  # seconds of server time charged to each request in flight since the process began
        self._at = time.monotonic()  # when `_served` was last brought up to date
        self._charges: OrderedDict[str, deque[list[float]]] = OrderedDict()  # per client, [when, seconds]

    def begin(self, client: str) -> float:
        """A request of `client` begins; the mark `end` takes."""
        with self._lock:
            self._catch_up(time.monotonic())
            self._in_flight[client] += 1
            return self._served

    def end(self, client: str, began: float) -> float:
        """The request that `begin` gave `began` has ended: its share of the time it was in flight is charged
        to `client`; that charge, in seconds."""
        now = time.monotonic()
        with self._lock:
            self._catch_up(now)
            self._in_flight[client] -= 1
            if not self._in_flight[client]:
                del self._in_flight[client]
            charge = self._served - began
            charges = self._charges.pop(client, None) or deque()
            if charges and now - charges[-1][0] < SLOT:
                charges[-1][1] += charge
            else:
                charges.append([now, charge])
            self._charges[client] = charges  # last in the order: the most recently charged
            while len(self._charges) > KEPT_CLIENTS:  # forgetting a client only ever favours it
                self._charges.popitem(last=False)
            return charge

    def retry_after(self, client: str) -> int | None:
        """None while `client` is within its share; else the seconds until enough of its charges age out."""
        now = time.monotonic()
        with self._lock:
            charges = self._charges.get(client)
            if charges is None:
                return None
            while charges and charges[0][0] <= now - WINDOW:
                charges.popleft()
            over = sum(seconds for _, seconds in charges) - self.seconds_per_minute
            if over <= 0 or not self._contended(client, now):
                return None
            for when, seconds in charges:  # oldest first: the charges that age out first
                over -= seconds
                if over <= 0:
                    return max(1, math.ceil(when + WINDOW - now))
            return math.ceil(WINDOW)  # not reached: the charges summed past the share

    def _contended(self, client: str, now: float) -> bool:
        """Whether another client wants the process: a request of its in flight, or one ended a moment ago."""
        if any(other != client for other in self._in_flight):
            return True
        for other in reversed(self._charges):  # the most recently charged first
            if other != client:
                charges = self._charges[other]
                return bool(charges) and charges[-1][0] > now - CONTENDED
        return False

    def _catch_up(self, now: float) -> None:
        flying = self._in_flight.total()
        if flying:
            self._served += (now - self._at) / flying
        self._at = now


class ClientSlots:
    """At most `per_client` requests of one client at work at once; its others wait their turn, uncharged. A
    client opening forty requests at once (or forty live tails) would otherwise take every worker thread of
    the process, and everyone else's pages would queue behind it. One event loop per process: no lock."""

    def __init__(self, per_client: int) -> None:
        self.per_client = per_client
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._asking: Counter[str] = Counter()

    @asynccontextmanager
    async def slot(self, client: str) -> AsyncIterator[None]:
        slots = self._slots.get(client)
        if slots is None:
            slots = self._slots[client] = asyncio.Semaphore(self.per_client)
        self._asking[client] += 1
        try:
            async with slots:
                yield
        finally:
            self._asking[client] -= 1
            if not self._asking[client]:  # forgotten once idle: a semaphore per client ever seen would grow
                del self._asking[client], self._slots[client]
