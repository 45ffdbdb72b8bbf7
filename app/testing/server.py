"""dsh-inspect for tests: a real server on a free loopback port (`live_server`), or the same app answering in
this process, behind an httpx client (`app_client`)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn

from ..settings import Settings
from ..web.app import create_app
from ..web.serving import bind, bound_port

# how often a test's server looks whether it is told to stop: uvicorn's own tenth of a second, paid at every
# stop of some 250 servers a run, was seconds of the suite
STOP_POLL_SECONDS = 0.01
# how long the requests a stop interrupts may take to end as their clients' disconnects (they take milliseconds)
STOP_GRACE_SECONDS = 1.0


class QuickStop(uvicorn.Server):
    """uvicorn's server as a test's: it stops within milliseconds of `should_exit`, without a grace period.

    A test's requests are answered by the time it stops its server; what is still open then (a live tail,
    a keep-alive connection) is closed, and ends as a client's disconnect."""

    async def main_loop(self) -> None:
        tick = 0
        while not await self.on_tick(tick):
            tick += 1
            await asyncio.sleep(STOP_POLL_SECONDS)

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        for listener in self.servers:
            listener.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
            # a response still under way (a live tail) sees its client leave and ends as it would then, rather than
            # being cancelled when the loop closes, which uvicorn logs as a traceback in the test's output
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.close()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STOP_GRACE_SECONDS
        while self.server_state.tasks and loop.time() < deadline:
            await asyncio.sleep(STOP_POLL_SECONDS)


@contextmanager
def live_server(paths: list[str], **settings: Any) -> Iterator[str]:
    """Serve `paths` (with optional `Settings` fields, e.g. `data_dir`); yields the base URL.

    The socket is bound once, on a port the system picks, and handed to uvicorn as it is."""
    sock = bind("127.0.0.1", 0)
    port = bound_port(sock)
    app = create_app(paths, Settings(port=port, **settings))
    uvicorn_server = QuickStop(uvicorn.Config(app, lifespan="off", log_level="warning"))
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


class InProcess(httpx.BaseTransport):
    """httpx's ASGI transport for a synchronous client: every request runs on one event loop, in a thread of
    its own, for the client's whole life, as a server's requests share its loop (what the app keeps on the
    loop, its locks and tasks, lasts from one request to the next)."""

    def __init__(self, app: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._asgi = httpx.ASGITransport(app, client=("127.0.0.1", 50000))  # a loopback client, as in a real run
        self._loop = loop

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # the body read here: the ASGI transport takes async streams only, a client's iterator is sync
        sent = httpx.Request(request.method, request.url, headers=request.headers, content=request.read())
        answer = asyncio.run_coroutine_threadsafe(self._answer(sent), self._loop)
        timeout = request.extensions.get("timeout", {}).get("read")
        try:
            status, headers, body = answer.result(timeout)
        except TimeoutError:
            answer.cancel()
            raise httpx.ReadTimeout(f"no answer within {timeout} s", request=request) from None
        return httpx.Response(status, headers=headers, content=body, request=request)

    async def _answer(self, request: httpx.Request) -> tuple[int, httpx.Headers, bytes]:
        response = await self._asgi.handle_async_request(request)
        return response.status_code, response.headers, await response.aread()


@contextmanager
def app_client(paths: list[str], **settings: Any) -> Iterator[httpx.Client]:
    """The app `live_server(paths, **settings)` would serve, answering in this process: an httpx client whose
    relative URLs go to it, with no socket and no server to start or stop.

    For what needs no real connection: a response arrives whole, so a stream that never ends (a live tail)
    or a client that goes away mid-response needs `live_server`."""
    config = Settings(**settings)
    app = create_app(paths, config)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="dsh-inspect-app", daemon=True)
    thread.start()
    try:
        # the address the app believes it serves: its Host check accepts it
        # 60 s, not httpx's 5: a cold page on a busy machine (a CI run's other worker, a browser) may take
        # seconds, which is no failure of the page; a request that hangs still fails, at this bound
        client = httpx.Client(transport=InProcess(app, loop), base_url=f"http://127.0.0.1:{config.port}", timeout=60)
        with client:
            yield client
    finally:
        asyncio.run_coroutine_threadsafe(_end_tasks(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


async def _end_tasks() -> None:
    """Cancel what the app left running on its loop (a search, a poll): it ends with the app."""
    rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)
