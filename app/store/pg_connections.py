"""Pooled connections to one PostgreSQL database, shared by the team catalog and the team search index."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg


class Connections:
    """Autocommit connections to `url`, kept for reuse (each `transaction()` is explicit); a broken one, or one
    left inside a transaction, is closed instead of kept."""

    def __init__(self, url: str) -> None:
        import psycopg  # the `team` extra

        self._psycopg = psycopg
        self.url = url
        self._idle: queue.LifoQueue[psycopg.Connection[Any]] = queue.LifoQueue()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            conn = self._idle.get_nowait()
        except queue.Empty:
            conn = self._psycopg.connect(self.url, autocommit=True)
        try:
            yield conn
        except BaseException:
            conn.close()
            raise
        if conn.closed or conn.info.transaction_status != self._psycopg.pq.TransactionStatus.IDLE:
            conn.close()
        else:
            self._idle.put(conn)

    def close(self) -> None:
        while not self._idle.empty():
            self._idle.get_nowait().close()
