"""What the team catalog's processes tell each other (docs/decisions/0024-push.md): each change to the catalog
(`catalog_state.version` moving) also sends `NOTIFY dsh_inspect_catalog` in its transaction, and each process
that follows sessions live listens on one connection of its own. A live page then asks the catalog's version
only when a notice came (or, should the listener be down, at every poll, as without it), instead of four
times a second per page.
"""

from __future__ import annotations

import threading
import time

CHANNEL = "dsh_inspect_catalog"
RETRY_SECONDS = 1.0  # a listener whose connection broke connects again after this long


class CatalogNotices:
    """A daemon thread listening on `CHANNEL`; `heard()` counts the notices, None while it is not listening."""

    def __init__(self, url: str, connect_seconds: float) -> None:
        self.url = url
        self.connect_seconds = connect_seconds
        self._heard = 0
        self._listening = False
        self._lock = threading.Lock()
        threading.Thread(target=self._listen, name="catalog-notices", daemon=True).start()

    def heard(self) -> int | None:
        with self._lock:
            return self._heard if self._listening else None

    def _listen(self) -> None:
        import psycopg

        while True:
            try:
                wait = max(1, round(self.connect_seconds))
                with psycopg.connect(self.url, autocommit=True, connect_timeout=wait) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    with self._lock:  # what changed while it was not listening is not known: ask once more
                        self._heard += 1
                        self._listening = True
                    for _ in conn.notifies():  # waits for each, until the connection breaks
                        with self._lock:
                            self._heard += 1
            except psycopg.Error:
                pass
            with self._lock:
                self._listening = False
            time.sleep(RETRY_SECONDS)
