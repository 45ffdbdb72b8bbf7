"""A page's live tail (`/sessions/{key}/live`), opened as the page opens it and read event by event."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.support.rows import attrs


class Stream:
    """The events of one page's live tail, read as they come."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.iter_lines()

    def connected(self) -> bool:
        return next(self._lines) == ": connected"

    def next(self) -> tuple[str, str]:
        event, data = "", []
        for line in self._lines:
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data:"):
                data.append(line.removeprefix("data:").removeprefix(" "))
            elif not line and event:
                return event, "\n".join(data)
        raise AssertionError("the live tail ended")

    def until(self, event: str) -> str:
        """The data of the next `event`, the ones before it skipped (generous waits: a poll is 0.25 s)."""
        for _ in range(50):
            name, data = self.next()
            if name == event:
                return data
        raise AssertionError(f"no {event!r} event")


@contextmanager
def live_tail(server: str, key: str) -> Iterator[Stream]:
    """The live tail of `key`'s page, opened as the page would open it."""
    page = httpx.get(f"{server}/sessions/{key}")
    assert page.status_code == 200
    (url,) = attrs(page.text, "[data-live]", "sse-connect")
    with httpx.stream("GET", f"{server}{url}", timeout=httpx.Timeout(30)) as response:
        stream = Stream(response)
        assert stream.connected()
        yield stream
