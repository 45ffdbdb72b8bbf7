"""A real dsh-inspect server on a free loopback port, in a background thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..settings import Settings
from ..web.app import create_app
from ..web.serving import bind, bound_port, server


@contextmanager
def live_server(paths: list[str], **settings: Any) -> Iterator[str]:
    """Serve `paths` (with optional `Settings` fields, e.g. `data_dir`); yields the base URL.

    The socket is bound once, on a port the system picks, and handed to uvicorn as it is."""
    sock = bind("127.0.0.1", 0)
    port = bound_port(sock)
    app = create_app(paths, Settings(port=port, **settings))
    # open live-tail streams must not hold the test at shutdown
    uvicorn_server = server(app, lifespan="off", timeout_graceful_shutdown=2)
    thread = threading.Thread(target=uvicorn_server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not uvicorn_server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            sock.close()
            raise RuntimeError("dsh-inspect did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uvicorn_server.should_exit = True
        thread.join(10)
        sock.close()
