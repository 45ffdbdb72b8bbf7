"""Serving the app on a socket bound once, before uvicorn starts (docs/product.md Interfaces: `serve`).

The port is then known, and held, from the start: `serve --port 0` and the test servers
take any free port, and nothing can take it between choosing it and listening on it.
A signal stops the server within seconds, whatever it is reading (`Server.handle_exit`).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
from functools import partial
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.supervisors import Multiprocess

from ..log.sqlite_store import stop_reads
from ..settings import Settings
from ..store.urls import masked
from .pauses import keep_full_collections_short

# Requests still running when a signal comes get this long to finish (a live tail never does), then are
# cancelled; past EXIT_SECONDS the process exits even while a thread still works on one, as a read no
# progress handler reaches (a long JSONL parse, say) would otherwise hold it until done.
GRACE_SECONDS = 3.0
EXIT_SECONDS = 6.0


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` (port 0: any free port); raises OSError when it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP said outright: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on the connections
    # of a socket that names it, and with Nagle on, a response of several packets waits ~40 ms for an ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def bound_port(sock: socket.socket) -> int:
    port: int = sock.getsockname()[1]
    return port


class Server(uvicorn.Server):
    """uvicorn's server, stopping within seconds of SIGTERM or Ctrl-C whatever it is reading."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit:
            stop_reads()  # a SQLite read in a worker thread stops at its next step: its request ends
            watchdog = threading.Timer(EXIT_SECONDS, _exit_now, (sig,))
            watchdog.daemon = True
            watchdog.start()
        super().handle_exit(sig, frame)


def _exit_now(sig: int) -> None:
    sys.stderr.write(f"dsh-inspect: still busy {EXIT_SECONDS:g} s after {signal.Signals(sig).name}; exiting now\n")
    sys.stderr.flush()
    os._exit(128 + sig)  # as a shell reports a process the signal ended


def server(app: FastAPI, **options: Any) -> uvicorn.Server:
    """A uvicorn server for `app`; run it with `server.run(sockets=[bind(...)])`."""
    return Server(uvicorn.Config(app, log_level="warning", **{"timeout_graceful_shutdown": GRACE_SECONDS, **options}))


def serve_workers(paths: list[str], settings: Settings, sock: socket.socket) -> None:
    """Serve `sock` from `settings.workers` uvicorn worker processes, each building its own app; they share
    the upload store as separate servers do (its catalog's version tells each of the others' changes).

    Each worker is handed the paths and settings (store URLs and all) with its start: uvicorn starts it afresh
    (multiprocessing's spawn) and sends it its configuration, this app factory with its arguments, pickled
    down a pipe only the two processes hold. Nothing of it is in any process's environment or command line,
    and no file holds it; a worker uvicorn starts again gets it the same way."""
    config = uvicorn.Config(
        partial(worker_app, paths, settings),
        factory=True,
        workers=settings.workers,
        log_level="warning",
        timeout_graceful_shutdown=round(GRACE_SECONDS),
    )
    mask_logs()  # uvicorn's handlers, set up by its Config
    Multiprocess(config, sockets=[sock]).run()


def worker_app(paths: list[str], settings: Settings) -> FastAPI:
    """One worker's app, from what `serve_workers` sent it."""
    from .app import create_app
    from .state import compile_templates

    mask_logs()  # this process's uvicorn handlers, set up before it loads the app
    keep_full_collections_short()
    app = create_app(list(paths), settings)
    compile_templates(app.state.web.templates)
    return app


class MaskedSecrets(logging.Filter):
    """A log record's text, traceback included, with every password in it masked (`store.urls.masked`): a
    driver's error may quote the connection string it was given."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = masked(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = masked(record.exc_text)
        if record.stack_info:
            record.stack_info = masked(record.stack_info)
        return True


def mask_logs() -> None:
    """What a `serve` process logs, with every password masked: its own warnings (and any library's) go to
    stderr as before, through a handler on the root logger in place of logging's last resort, and uvicorn's
    handlers mask too. Called again once uvicorn has set up its loggers; each handler is given the filter once."""
    root = logging.getLogger()
    if not root.handlers:
        stderr = logging.StreamHandler()  # "%(message)s": as the last resort wrote them
        stderr.setLevel(logging.WARNING)
        root.addHandler(stderr)
    for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access"):
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, MaskedSecrets) for f in handler.filters):
                handler.addFilter(MaskedSecrets())
