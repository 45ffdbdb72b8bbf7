"""Pooled connections to one PostgreSQL database, shared by the team catalog and the team search index.

Every call is bounded (docs/decisions/0022-failing-dependencies.md): a connection is made within
`Waits.connect`, a statement is answered within `Waits.statement` (PostgreSQL's own `statement_timeout`, and
the client's wait too, for a server that is stopped and answers nothing), and a request waits at most
`Waits.connect` for a free connection of the bounded pool. Past any of them the caller gets Unavailable,
never a hung thread. The pool checks a connection before handing it out, so one a restarted server broke is
replaced, not failed on: a stale connection costs its request nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .unavailable import Role, Unavailable

if TYPE_CHECKING:
    import psycopg

# psycopg_pool reports each failed attempt to connect at warning level, with the server's address: our own
# answer (a 503 naming the role) and log line say it once
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)


@dataclass(frozen=True, slots=True)
class Waits:
    """How long a database call may take, in seconds, and how many connections a process opens at most."""

    statement: float = 10.0
    connect: float = 5.0
    connections: int = 10


DEFAULT_WAITS = Waits()


class Connections:
    """Autocommit connections to `url`, for `role`, from a bounded pool (each `transaction()` is explicit);
    a broken one, or one left inside a transaction, is discarded instead of kept."""

    def __init__(self, url: str, role: Role, waits: Waits) -> None:
        import psycopg  # the `team` extra
        from psycopg_pool import ConnectionPool, PoolTimeout

        self.role: Role = role
        self.waits = waits
        self._errors: tuple[type[BaseException], ...] = (psycopg.OperationalError, PoolTimeout)
        self._pool = ConnectionPool(
            url,
            connection_class=_bounded(waits.statement),
            kwargs={
                "autocommit": True,
                "connect_timeout": max(1, round(waits.connect)),
                "options": f"-c statement_timeout={int(waits.statement * 1000)}",
            },
            min_size=1,
            max_size=waits.connections,
            timeout=waits.connect,
            check=ConnectionPool.check_connection,
            reconnect_timeout=0,  # keep trying while the server is down; requests meanwhile answer 503
            open=False,
        )
        self._pool.open(wait=False)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection, returned to the pool afterwards; raises Unavailable when the database does not answer
        in time, or answers that it cannot work (psycopg's OperationalError: a cancelled statement, no room for
        another connection, a full disk); an error in what was asked (a constraint, bad SQL) stays itself."""
        try:
            with self._pool.connection() as conn:
                yield conn
        except self._errors as exc:
            raise Unavailable(self.role, str(exc).strip()) from exc

    @contextmanager
    def unbounded(self, conn: psycopg.Connection[Any]) -> Iterator[None]:
        """Statements on `conn` waiting as long as they must: taking a lock another process holds while it
        stores an upload (minutes, for a large one)."""
        conn.execute("SET statement_timeout = 0")
        bounded: Any = conn
        bounded.deadline = None
        try:
            yield
        finally:
            bounded.deadline = self.waits.statement
            if not conn.closed:
                conn.execute(f"SET statement_timeout = {int(self.waits.statement * 1000)}")

    def ping(self) -> None:
        """One round trip; raises Unavailable."""
        with self.connection() as conn:
            conn.execute("SELECT 1")

    def close(self) -> None:
        self._pool.close(timeout=1)


def _bounded(seconds: float) -> type[psycopg.Connection[Any]]:
    """A connection class whose every wait on the server ends after `deadline` seconds (None: no end): the
    client-side bound a stopped server needs, as it never cancels a statement itself. A statement it cuts
    leaves the connection in an unknown state, so it is closed (and the pool discards it)."""
    import psycopg

    class Bounded(psycopg.Connection[Any]):
        deadline: float | None = seconds

        def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
            try:
                return super().wait(gen, interval, timeout if timeout is not None else self.deadline)
            except psycopg.OperationalError:
                if self.pgconn.transaction_status == psycopg.pq.TransactionStatus.ACTIVE:
                    self.pgconn.finish()  # cut off mid-statement: nothing more may be sent on it
                raise

    return Bounded
