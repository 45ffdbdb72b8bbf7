"""Serving the app on a socket bound once, before uvicorn starts (PRODUCT.md Interfaces: `serve`).

The port is then known, and held, from the start: `serve --port 0` and the test servers
take any free port, and nothing can take it between choosing it and listening on it.
"""

from __future__ import annotations

import socket
from typing import Any

import uvicorn
from fastapi import FastAPI


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


def server(app: FastAPI, **options: Any) -> uvicorn.Server:
    """A uvicorn server for `app`; run it with `server.run(sockets=[bind(...)])`."""
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", **options))
