"""Short garbage-collection pauses for a serving process (issue 33; docs/decisions/0045-frozen-survivors.md).

A server process keeps up to `cache_mb` of sessions read as Python objects. Each full (generation 2)
collection walks every object the collector tracks, and holds the interpreter's lock while it does. In the
load test that took 250–350 ms, every few seconds while uploads came and went, and every request of the
process waited it out. So after each full collection, what survived it is frozen (`gc.freeze`), and later
collections walk only what was made since. Every `THAW_SECONDS` the frozen objects are handed back, so the
next full collection can reclaim cycles that became garbage among them in the meantime. That gives one long
pause in that time instead of dozens. Objects that are not in a cycle are freed as before, frozen or not:
freezing only hides them from the cycle collector.
"""

from __future__ import annotations

import gc
import threading
import time
from typing import Any

THAW_SECONDS = 300.0

_started = threading.Lock()
_running: list[FrozenSurvivors] = []


class FrozenSurvivors:
    """Freezes what each full collection leaves, and hands it all back every `thaw_seconds`. Its thread does
    both, outside the collection that set it off."""

    def __init__(self, thaw_seconds: float = THAW_SECONDS) -> None:
        self.thaw_seconds = thaw_seconds
        self._collected = threading.Event()  # a full collection has ended since the last freeze
        self.freezes = 0
        self.thaws = 0

    def start(self) -> None:
        gc.callbacks.append(self._heard)
        threading.Thread(target=self._keep, name="dsh-inspect-gc", daemon=True).start()

    def _heard(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info.get("generation") == 2:
            self._collected.set()

    def _keep(self) -> None:
        thawed = time.monotonic()
        while True:
            collected = self._collected.wait(timeout=max(0.0, thawed + self.thaw_seconds - time.monotonic()))
            if time.monotonic() - thawed >= self.thaw_seconds:
                gc.unfreeze()  # the next full collection walks everything again, and frees dead cycles
                self.thaws += 1
                thawed = time.monotonic()
                self._collected.clear()
            elif collected:
                self._collected.clear()
                gc.freeze()
                self.freezes += 1


def keep_full_collections_short(thaw_seconds: float = THAW_SECONDS) -> FrozenSurvivors:
    """Started once per process, by what serves (`serve` and each of its workers); the one running."""
    with _started:
        if not _running:
            survivors = FrozenSurvivors(thaw_seconds)
            survivors.start()
            _running.append(survivors)
        return _running[0]
