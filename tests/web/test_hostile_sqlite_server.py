"""Hostile SQLite files through a real `dsh-inspect serve` process (issue 15): a folder holding a `sessions`
view that never ends and damaged stores still starts, lists them as refused and answers every page; such
an upload answers within seconds and leaves no temp file; SIGTERM stops the server within seconds, even in
the middle of a read."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from dsh_inspect.web.serving import EXIT_SECONDS, GRACE_SECONDS

from tests.support.hostile_sqlite import (
    INTERIOR_INDEX,
    btree_pages,
    dsh_store,
    long_store,
    recursive_view_store,
    root_page,
    shift_dividers,
)
from tests.support.process import PROJECT, ServeProcess, serve_process

pytestmark = pytest.mark.slow  # `serve` processes and their signals

ANSWER_SECONDS = 10  # generous: each of these answers in well under a second


def timed_get(url: str) -> httpx.Response:
    start = time.monotonic()
    response = httpx.get(url, timeout=30)
    took = time.monotonic() - start
    assert took < ANSWER_SECONDS, f"{url} took {took:.1f} s"
    return response


def index_damaged(path: Path) -> Path:
    """The damage behind issue 15's IndexError: lookups by seq through the index miss rows its walk meets."""
    dsh_store(path, ("damaged",), turns=60)
    (interior,) = [
        n
        for n, kind in btree_pages(path.read_bytes(), root_page(path, "sqlite_autoindex_events_1"))
        if kind == INTERIOR_INDEX
    ]
    shift_dividers(path, interior)
    return path


@pytest.fixture(scope="module")
def hostile_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    dsh_store(folder / "good.sqlite", ("good",))
    recursive_view_store(folder / "view.sqlite")
    index_damaged(folder / "damaged.sqlite")
    cut = dsh_store(folder / "cut.sqlite", ("cut",), turns=30)
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    return folder


@pytest.fixture(scope="module")
def server(hostile_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with serve_process([str(hostile_folder)], tmp_path_factory.mktemp("data")) as served:
        yield served


def sessions_by_path(server: ServeProcess) -> dict[str, dict]:  # type: ignore[type-arg]
    listed = timed_get(f"{server.url}/api/sessions").json()["sessions"]
    return {Path(s["path"].split("#")[0]).name: s for s in listed}


def test_serve_starts_over_a_folder_of_hostile_stores_and_lists_each(server: ServeProcess) -> None:
    listed = sessions_by_path(server)
    assert set(listed) == {"good.sqlite", "view.sqlite", "damaged.sqlite", "cut.sqlite"}
    verdicts = {
        name: timed_get(f"{server.url}/api/sessions/{s['key']}").json()["verdict"] for name, s in listed.items()
    }
    assert verdicts["good.sqlite"]["category"] == "accepted"
    assert verdicts["view.sqlite"]["category"] == "refused"
    assert "sessions is a view, not a table" in verdicts["view.sqlite"]["reason"]
    assert verdicts["damaged.sqlite"]["category"] == "refused"
    assert verdicts["cut.sqlite"]["category"] == "refused"
    assert "database disk image is malformed" in verdicts["cut.sqlite"]["reason"]


def test_every_page_of_a_hostile_store_answers(server: ServeProcess) -> None:
    for name, session in sessions_by_path(server).items():
        key = session["key"]
        for path in ("", "/steps", "/facts", "?from=100", "/events/5", "/rows"):
            response = timed_get(f"{server.url}/sessions/{key}{path}")
            assert response.status_code < 500, (name, path, response.status_code)
        page = timed_get(f"{server.url}/sessions/{key}")
        assert page.status_code == 200, name
    view = sessions_by_path(server)["view.sqlite"]
    assert "sessions is a view, not a table" in timed_get(f"{server.url}/sessions/{view['key']}/facts").text


def test_the_damaged_store_shows_what_it_can_read(server: ServeProcess) -> None:
    session = sessions_by_path(server)["damaged.sqlite"]
    body = timed_get(f"{server.url}/api/sessions/{session['key']}").json()
    assert body["events"] > 100
    assert body["verdict"]["location"]
    for seq in range(0, body["events"], 37):  # each event is read again from the store, one by one
        assert timed_get(f"{server.url}/api/sessions/{session['key']}/events/{seq}").status_code == 200


def test_an_upload_of_a_recursive_view_answers_at_once_and_leaves_no_temp_file(
    server: ServeProcess, hostile_folder: Path, tmp_path: Path
) -> None:
    data_dir = Path(server.announcement.split("uploads kept in ")[1].rstrip(")\n"))
    for name in ("view.sqlite", "damaged.sqlite", "cut.sqlite"):
        start = time.monotonic()
        response = httpx.post(
            f"{server.url}/api/uploads", params={"name": name}, content=(hostile_folder / name).read_bytes(), timeout=60
        )
        took = time.monotonic() - start
        assert took < ANSWER_SECONDS, f"uploading {name} took {took:.1f} s"
        assert response.status_code in (201, 422), (name, response.status_code, response.text)
        assert not list((data_dir / "tmp").glob("*.part")), f"{name} left a temp file"
        if response.status_code == 201:
            for session in response.json()["upload"]["sessions"]:
                assert session["verdict"] == "refused", (name, session)
                assert timed_get(server.url + session["url"]).status_code == 200
    uploaded = httpx.get(f"{server.url}/api/uploads").json()["uploads"]
    view = next(u for u in uploaded if u["name"] == "view.sqlite")
    (session,) = view["sessions"]
    reason = timed_get(f"{server.url}/api/sessions/{session['key']}").json()["verdict"]["reason"]
    assert "sessions is a view, not a table" in reason


def test_sigterm_stops_the_server_within_seconds_in_the_middle_of_a_store_read(tmp_path: Path) -> None:
    """The read of a long store (some 20 s here) stops at its next step: the request ends, and the server
    with it, as a signal ends a process (no fallback exit needed)."""
    folder = tmp_path / "long"
    folder.mkdir()
    long_store(folder / "long.sqlite", 120_000)
    with serve_process([str(folder)], tmp_path / "data") as served, ThreadPoolExecutor(1) as pool:
        reading = pool.submit(httpx.get, f"{served.url}/api/sessions/long", timeout=120)
        deadline = time.monotonic() + 30
        while not served.holds_open(folder / "long.sqlite"):  # the server opens the store to read it
            assert not reading.done() and time.monotonic() < deadline, "the store's read never began"
            time.sleep(0.01)
        assert not reading.done(), "the read must still be running when the signal comes"
        start = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        code = served.process.wait(30)
        took = time.monotonic() - start
        assert took < 10, f"the server took {took:.1f} s to stop"
        assert code == -signal.SIGTERM, served.said()
        with pytest.raises(httpx.HTTPError):
            reading.result(30).raise_for_status()


BUSY_SERVER = """
import sys, threading, time
from fastapi import FastAPI
from dsh_inspect.web.serving import bind, bound_port, server

app = FastAPI()
started = threading.Event()

@app.get("/busy")
def busy() -> None:
    started.set()
    while True:  # a read no progress handler reaches: pure Python, never done
        time.sleep(0.01)

@app.get("/started")
def is_started() -> bool:
    return started.is_set()

sock = bind("127.0.0.1", 0)
sock.listen()  # before the port is told: a request sent at once waits for uvicorn instead of being refused
print(bound_port(sock), flush=True)
server(app).run(sockets=[sock])
"""


@pytest.mark.parametrize(
    ("sig", "code", "within"),
    [
        # uvicorn cancels the request after the grace period and ends the process with the signal
        pytest.param(signal.SIGTERM, -signal.SIGTERM, GRACE_SECONDS, id="SIGTERM"),
        # Ctrl-C ends in a KeyboardInterrupt, and Python's exit would wait for the busy thread: the fallback exits
        pytest.param(signal.SIGINT, 128 + signal.SIGINT, EXIT_SECONDS, id="SIGINT"),
    ],
)
def test_a_request_that_never_ends_does_not_hold_the_exit(sig: int, code: int, within: float) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(BUSY_SERVER)],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        url = f"http://127.0.0.1:{int(process.stdout.readline())}"
        with ThreadPoolExecutor(1) as pool:
            pool.submit(httpx.get, f"{url}/busy", timeout=60)
            deadline = time.monotonic() + 30
            while not httpx.get(f"{url}/started", timeout=5).json():
                assert time.monotonic() < deadline
                time.sleep(0.05)
            start = time.monotonic()
            process.send_signal(sig)
            assert process.wait(EXIT_SECONDS + 30) == code, process.stderr.read().decode()
            took = time.monotonic() - start
        assert took < within + 5, f"the server took {took:.1f} s to stop"
        if sig == signal.SIGINT:
            assert f"still busy {EXIT_SECONDS:g} s after SIGINT; exiting now" in process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
