"""A one-line counter on stderr while a command works through many files."""

from __future__ import annotations

from typing import TextIO


class Progress:
    """A one-line counter on stderr while many files are scanned."""

    def __init__(self, stream: TextIO, total: int, verb: str = "checking") -> None:
        self.stream = stream
        self.total = total
        self.verb = verb
        self.done = 0
        self.live = stream.isatty()

    def step(self, label: str) -> None:
        self.done += 1
        if self.total < 2:
            return
        line = f"{self.verb} {self.done}/{self.total}: {label}"
        if self.live:
            self.stream.write("\r\x1b[K" + line[-150:])
        elif self.done in (1, self.total) or self.done % 50 == 0:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live and self.total >= 2:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
