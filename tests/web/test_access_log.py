"""The access log (`serve --access-log`): one JSON line per request, naming its route's template, never the URL
asked for, so nothing in a query string reaches it; with access control on, who asked."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from dsh_inspect.commands.tokens import run_token
from dsh_inspect.testing.server import live_server
from dsh_inspect.web.access_log import QUEUE_LINES, AccessLogWriter

from tests.support.process import serve_process
from tests.support.uploads import jsonl_bytes

SECRET = "s3cret-in-the-query"
FIELDS = ["time", "method", "route", "status", "duration_ms", "bytes", "client"]


def lines(path: Path, count: int, within: float = 10.0) -> list[dict[str, Any]]:
    """The log's lines once it holds at least `count` (they are written by a thread of their own)."""
    deadline = time.monotonic() + within
    while True:
        text = path.read_text() if path.exists() else ""
        if text.count("\n") >= count or time.monotonic() > deadline:
            assert text.endswith("\n") or not text, "whole lines only"
            return [json.loads(line) for line in text.splitlines()]
        time.sleep(0.05)


@pytest.mark.slow  # a `serve` process
def test_serve_logs_each_request_by_its_route_and_never_its_query(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "one.jsonl").write_bytes(jsonl_bytes("one"))
    log = tmp_path / "access.jsonl"
    began = datetime.now(UTC) - timedelta(seconds=1)
    with serve_process([str(logs)], tmp_path / "data", options=["--access-log", str(log)]) as server:
        asked = [
            ("GET", "/", 200),
            ("GET", "/no/such/page?token=" + SECRET, 404),
            ("GET", f"/api/sessions?token={SECRET}&q=one", 200),
            ("GET", "/sessions/one?at=3", 200),
            ("POST", f"/api/uploads?name=two.jsonl&token={SECRET}", 201),
        ]
        answers = []
        for method, path, status in asked:
            body = jsonl_bytes("two") if method == "POST" else None
            answer = httpx.request(method, server.url + path, content=body, timeout=60)
            assert answer.status_code == status, (path, answer.text)
            answers.append(answer)
        found = lines(log, 1 + len(asked))  # the one `serve_process` asked, waiting for the server, first
    assert SECRET not in log.read_text()
    mine = found[-len(asked) :]
    for line, (method, _, status), answer in zip(mine, asked, answers, strict=True):
        assert list(line) == FIELDS, "no identity without access control"
        assert (line["method"], line["status"], line["client"]) == (method, status, "127.0.0.1")
        assert line["bytes"] == len(answer.content)
        assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
        when = datetime.fromisoformat(line["time"].replace("Z", "+00:00"))
        assert line["time"].endswith("Z") and began <= when <= datetime.now(UTC)
    assert [line["route"] for line in mine] == [
        "/",
        "/no/such/page",  # no route: the path asked for, without its query
        "/api/sessions",
        "/sessions/{key}",
        "/api/uploads",
    ]
    assert [line["time"] for line in mine] == sorted(line["time"] for line in mine)


def test_an_unmatched_path_is_cut(tmp_path: Path) -> None:
    log = tmp_path / "access.jsonl"
    with live_server([], data_dir=str(tmp_path / "data"), access_log=str(log)) as url:
        assert httpx.get(f"{url}/{'x' * 5000}").status_code == 404
        (line,) = lines(log, 1)
    assert line["route"] == "/" + "x" * 199


def test_with_access_control_the_log_names_who_asked_and_never_the_token(tmp_path: Path) -> None:
    data = tmp_path / "data"
    made = io.StringIO()
    assert (
        run_token("create", data_dir=str(data), store=None, name="ci", role="viewer", out=made, err=io.StringIO()) == 0
    )
    token = made.getvalue().splitlines()[-1]
    log = tmp_path / "access.jsonl"
    with live_server([], data_dir=str(data), require_auth=True, access_log=str(log)) as url:
        assert httpx.get(f"{url}/api/sessions").status_code == 401
        signed = httpx.get(f"{url}/api/sessions?q=x", headers={"Authorization": f"Bearer {token}"})
        assert signed.status_code == 200
        assert httpx.get(f"{url}/api/sessions?token={token}").status_code == 401  # a token in the query: no
        found = lines(log, 3)
    assert [(line["route"], line["status"], line["identity"]) for line in found] == [
        ("/api/sessions", 401, "anonymous"),
        ("/api/sessions", 200, "token:ci"),
        ("/api/sessions", 401, "anonymous"),
    ]
    assert all(list(line) == [*FIELDS, "identity"] for line in found)
    assert token not in log.read_text() and token.split("_", 1)[-1] not in log.read_text()


def test_a_live_tail_is_logged_when_it_ends(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "one.jsonl").write_bytes(jsonl_bytes("one"))
    log = tmp_path / "access.jsonl"
    with live_server([str(logs)], data_dir=str(tmp_path / "data"), access_log=str(log)) as url:
        with httpx.stream("GET", f"{url}/sessions/one/live", timeout=30) as streaming:
            assert streaming.status_code == 200
            chunks = streaming.iter_bytes()  # kept: a dropped iterator would close the stream
            assert next(chunks).startswith(b": connected")
            time.sleep(0.3)
            assert "/live" not in (log.read_text() if log.exists() else ""), "not logged while it runs"
        found = lines(log, 1)
    (tail,) = found
    assert tail["route"] == "/sessions/{key}/live"
    assert tail["status"] == 200 and tail["bytes"] > 0 and tail["duration_ms"] >= 300


@pytest.mark.slow  # a `serve` process
def test_serve_logs_to_stderr_by_default_and_writes_the_last_lines_as_it_stops(tmp_path: Path) -> None:
    with serve_process([], tmp_path / "data") as server:
        assert httpx.get(f"{server.url}/api/sessions?token={SECRET}").status_code == 200
        server.process.terminate()  # SIGTERM: the lines still queued are written before the process goes
        assert server.process.wait(30) is not None
        deadline = time.monotonic() + 10
        while server.err.text().count('"route"') < 2 and time.monotonic() < deadline:  # its probe's, and ours
            time.sleep(0.05)
        said = server.err.text()
    found = [json.loads(line) for line in said.splitlines() if line.startswith("{")]
    assert len(found) == 2 and all(line["route"] == "/api/sessions" and line["status"] == 200 for line in found)
    assert SECRET not in said


def test_off_and_the_in_process_default_log_nothing(tmp_path: Path, capfd: Any) -> None:
    with live_server([], data_dir=str(tmp_path / "data")) as url:
        assert httpx.get(f"{url}/api/sessions").status_code == 200
    time.sleep(0.2)
    assert '"route"' not in capfd.readouterr().err


def test_a_log_nobody_reads_never_holds_a_request_and_says_what_it_dropped() -> None:
    """A pipe nobody reads (stderr piped to a reader that stopped): lines fill it, then the queue, then are
    dropped, each write returning at once; once the pipe is read again, the next line counts the dropped."""
    read_end, write_end = os.pipe()
    writer = AccessLogWriter(write_end, owned=False)
    total = QUEUE_LINES * 2
    start = time.monotonic()
    for n in range(total):
        writer.write({"n": n, "padding": "x" * 100})
    assert time.monotonic() - start < 5, "no write waited for the pipe"
    drained = bytearray()

    def drain() -> None:
        while chunk := os.read(read_end, 1 << 16):
            drained.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    deadline = time.monotonic() + 30
    while writer.queue.full() and time.monotonic() < deadline:
        time.sleep(0.01)
    writer.write({"n": "last"})
    writer.close()
    os.close(write_end)
    reader.join(30)
    os.close(read_end)
    found = [json.loads(line) for line in drained.decode().splitlines()]
    assert found[-1]["n"] == "last" and found[-1]["dropped"] > 0
    assert len(found) + sum(line.get("dropped", 0) for line in found) == total + 1, "every line written or counted"
    assert [line["n"] for line in found[:-1]] == sorted(line["n"] for line in found[:-1]), "in order"
