"""The access log: one JSON line per HTTP request, written once its answer has ended (a live tail when it
closes), by a thread of its own, so a slow disk or a pipe nobody reads never delays an answer.

Each line holds `time` (when the request came, ISO 8601 UTC), `method`, `route` (the route's path template,
`/sessions/{key}`, never the URL asked for, so no query string, and no token in one, is ever written; a path no
route matched is written as asked, without its query, cut to 200 characters), `status` (null when no answer was
begun: the client left or the server stopped first), `duration_ms`, `bytes` (of the body sent), `client` (its
address) and, with access control on, `identity`: the actor the request acted as (`token:NAME`, `user:EMAIL`,
`anonymous`), never a secret.

The middleware hands each line to a bounded queue (`logging.handlers.QueueHandler`) and a `QueueListener`
thread writes it. Should the queue fill (a disk that stalls, stderr piped to a reader that stopped), lines are
dropped, never waited for, and the next line that gets through says how many (`dropped`).
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import time
import weakref
from datetime import UTC, datetime
from functools import partial
from logging.handlers import QueueHandler, QueueListener
from typing import Any

import orjson
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..access import Identity

ROUTE_CHARS = 200  # a path no route matched is written this far
QUEUE_LINES = 10_000  # lines waiting for the writer at most; past it they are dropped
CLOSE_SECONDS = 2.0  # what the log's last lines may take to be written at exit
STDERR = 2


class AccessLogUnusable(Exception):
    """The access log's file cannot be opened for appending."""


class _Sink(logging.Handler):
    """Writes each line the listener hands it to the log's file descriptor (stderr's, or a file's opened for
    appending), in one `write`, so several worker processes' lines never mix. No Python buffer stands between:
    a write that a full pipe blocks holds no lock that the rest of the process, or its exit, would wait on.
    Only the listener's thread calls it, so it takes no lock, and flushing and closing do nothing."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def handle(self, record: logging.LogRecord) -> bool:
        self.emit(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        data = (record.getMessage() + "\n").encode()
        try:
            while data:
                data = data[os.write(self.fd, data) :]
        except OSError:  # a full disk, a closed stderr: the line is lost; serving goes on
            pass

    def flush(self) -> None:
        pass

    def close(self) -> None:
        super().close()  # only logging's own bookkeeping: the file is the writer's to close


class _Dropping(QueueHandler):
    """Puts a finished line on the queue, or drops it when the queue is full, counting it: never waits."""

    dropped = 0

    def prepare(self, record: logging.LogRecord) -> Any:
        return record  # the message is the finished line: nothing to format or copy

    def enqueue(self, record: logging.LogRecord) -> None:
        try:
            self.queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1


class _Listener(QueueListener):
    """The thread writing the queued lines, which can be stopped without waiting on a stalled write."""

    def __init__(self, lines: queue.Queue[logging.LogRecord | None], sink: _Sink) -> None:
        super().__init__(lines, sink)
        self.lines = lines

    def stop_within(self, seconds: float) -> None:
        """`stop`, waiting at most `seconds` for the lines still queued to be written (the rest are lost)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        try:
            self.lines.put(None, timeout=seconds)  # QueueListener's sentinel
        except queue.Full:
            return
        thread.join(seconds)


class AccessLogWriter:
    """Where an app's access log goes: stderr's file descriptor, or a file's it opened (`owned`). Its writing
    thread starts with the first line, in the process that serves (`serve --workers` builds an app in the
    parent only to check it)."""

    def __init__(self, fd: int, *, owned: bool) -> None:
        self.fd = fd
        self.queue: queue.Queue[logging.LogRecord | None] = queue.Queue(QUEUE_LINES)
        self.handler = _Dropping(self.queue)
        self.listener: _Listener | None = None
        self.closes_at_exit = False
        if owned:
            weakref.finalize(self, os.close, fd).atexit = False  # at exit the file closes with the process

    def write(self, entry: dict[str, Any]) -> None:
        """Queue `entry` as one JSON line; called on the event loop only."""
        if self.listener is None:
            self.listener = _Listener(self.queue, _Sink(self.fd))
            self.listener.start()
            if not self.closes_at_exit:  # a server run without its lifespan (the test servers) stops no other way
                atexit.register(self.close)
                self.closes_at_exit = True
        dropped = self.handler.dropped
        if dropped:
            entry = {**entry, "dropped": dropped}
        line = orjson.dumps(entry).decode()
        record = logging.makeLogRecord({"name": "dsh_inspect.access", "levelno": logging.INFO, "msg": line})
        self.handler.handle(record)
        if self.handler.dropped == dropped:  # queued, and with it the count of those before it: start again
            self.handler.dropped = 0

    def close(self) -> None:
        """Write what is queued (for at most CLOSE_SECONDS) and stop the writing thread."""
        if self.listener is not None:
            self.listener.stop_within(CLOSE_SECONDS)
            self.listener = None


def open_access_log(where: str | None) -> AccessLogWriter | None:
    """The writer `Settings.access_log` names: None or `off` none, `-` stderr, else a file opened for
    appending now (created private to this user), so a path that cannot be written stops `serve` at start.
    Raises AccessLogUnusable."""
    if where is None or where in ("", "off"):
        return None
    if where == "-":
        return AccessLogWriter(STDERR, owned=False)
    try:
        fd = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise AccessLogUnusable(f"cannot write the access log {where}: {exc.strerror or exc}") from None
    return AccessLogWriter(fd, owned=True)


def route_of(scope: Scope) -> str:
    """The route's path template (`/sessions/{key}`), or, for a path no route matched and for a mounted app
    (the static files), the path asked for, cut to ROUTE_CHARS. Never the query string."""
    route = scope.get("route")
    template = getattr(route, "path_format", None) or getattr(route, "path", None)
    if isinstance(template, str) and template and not isinstance(route, Mount):
        return template
    path = str(scope.get("path", ""))
    return path[:ROUTE_CHARS]


class AccessLog:
    """Plain ASGI middleware (not `BaseHTTPMiddleware`, which would hold a streamed answer): it counts what
    each HTTP response sends and logs the request once the answer has ended, however it ended."""

    def __init__(self, app: ASGIApp, *, log: AccessLogWriter | None, identities: bool) -> None:
        self.app = app
        self.log = log
        self.identities = identities  # access control is on: name who each request acted as

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        log = self.log
        if log is not None and scope["type"] == "lifespan":
            await self.app(scope, receive, partial(self.closing, log, send))
            return
        if log is None or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        came = time.time()
        clock = time.perf_counter()
        state = scope.setdefault("state", {})  # where the access dependency leaves the request's identity
        status: int | None = None
        sent = 0

        async def counting(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counting)
        except Exception:
            if status is None:
                status = 500  # what the server answers for it
            raise
        finally:
            client = scope.get("client")
            entry: dict[str, Any] = {
                "time": datetime.fromtimestamp(came, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "method": scope.get("method", ""),
                "route": route_of(scope),
                "status": status,
                "duration_ms": round((time.perf_counter() - clock) * 1000, 1),
                "bytes": sent,
                "client": client[0] if client else None,
            }
            if self.identities:
                identity = state.get("identity") if isinstance(state, dict) else None
                entry["identity"] = identity.actor if isinstance(identity, Identity) else None
            log.write(entry)

    @staticmethod
    async def closing(log: AccessLogWriter, send: Send, message: Message) -> None:
        """The lifespan's `send`: once the server has stopped, every request has ended and its line is queued;
        they are written before the process goes (a signal ends it straight after: no `atexit` then)."""
        if message["type"] in ("lifespan.shutdown.complete", "lifespan.shutdown.failed"):
            log.close()
        await send(message)
