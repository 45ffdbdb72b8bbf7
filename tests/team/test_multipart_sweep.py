"""Incomplete multipart uploads of the team blobs (app/store/s3_sweep.py): what a process killed mid-put leaves
in the object store, aborted at start and on later uploads once older than the bound, never sooner, on the
test's real SeaweedFS. Where a failure is needed (a part that never arrives, a listing refused), an HTTP proxy
before SeaweedFS holds or refuses those requests and passes every other one through."""

from __future__ import annotations

import hashlib
import http.client
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson
import pytest
from dsh_inspect.store.blobs import Received
from dsh_inspect.store.s3_blobs import S3Blobs
from dsh_inspect.store.s3_sweep import STALE_AFTER_SECONDS

from tests.support.builders import LogBuilder, header
from tests.team.conftest import Lane, TeamStore

pytestmark = pytest.mark.team

Rule = Callable[[str, str], bool]  # (method, path with query) → whether it applies


def never(method: str, path: str) -> bool:
    return False


def upload_part(method: str, path: str) -> bool:
    return method == "PUT" and "partNumber" in parse_qs(urlsplit(path).query)


def list_multipart_uploads(method: str, path: str) -> bool:
    return method == "GET" and "uploads" in parse_qs(urlsplit(path).query, keep_blank_values=True)


@dataclass(frozen=True, slots=True)
class Proxy:
    endpoint: str
    held: threading.Event  # set once a request is being held


@contextmanager
def s3_proxy(upstream: str, *, hold: Rule = never, refuse: Rule = never, cut: Rule = never) -> Iterator[Proxy]:
    """An S3 endpoint that forwards every request to `upstream`, but holds those `hold` names (no answer until
    the proxy stops, as a store that stopped reading), answers those `refuse` names 403 AccessDenied (as a
    store whose policy does not grant them) and closes the connection on those `cut` names, unanswered."""
    target = urlsplit(upstream)
    held, released = threading.Event(), threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if hold(self.command, self.path):
                held.set()
                released.wait()
                self.close_connection = True
                return
            if cut(self.command, self.path):
                self.close_connection = True
                return
            if refuse(self.command, self.path):
                denied = b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>AccessDenied</Code>"
                denied += b"<Message>Access Denied</Message></Error>"
                self.send_response(403)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(denied)))
                self.end_headers()
                self.wfile.write(denied)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() != "expect"}  # this side said 100
            conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=60)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
            finally:
                conn.close()
            self.send_response(answer.status, answer.reason)
            for name, value in answer.getheaders():
                if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(name, value)
            length_said = answer.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", length_said or str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Proxy(f"http://127.0.0.1:{server.server_address[1]}", held)
    finally:
        released.set()
        server.shutdown()
        server.server_close()


def s3(team: TeamStore) -> Any:
    """A boto3 client straight to the test's SeaweedFS: what the test itself does and sees there."""
    import boto3

    env = team.env
    return boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name=env["AWS_DEFAULT_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
    )


def place(team: TeamStore) -> tuple[str, str]:
    bucket, prefix = team.blobs.removeprefix("s3://").split("/", 1)
    return bucket, prefix


def blob_key(prefix: str, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    return f"{prefix}/{digest[:2]}/{digest}"


def begin(client: Any, bucket: str, key: str) -> str:
    """A multipart upload begun and one part sent, never completed: what a process killed mid-put leaves."""
    upload_id: str = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    client.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=1, Body=b"p" * (5 * 1024 * 1024))
    return upload_id


def pending(client: Any, bucket: str) -> set[tuple[str, str]]:
    """(key, upload id) of every incomplete multipart upload in the bucket, whatever its prefix."""
    found = set()
    for page in client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket):
        found |= {(u["Key"], u["UploadId"]) for u in page.get("Uploads", ())}
    return found


def received(folder: Path, data: bytes) -> Received:
    folder.mkdir(exist_ok=True)
    temp = folder / f"upload-{len(list(folder.iterdir()))}.part"
    temp.write_bytes(data)
    return Received(temp, hashlib.sha256(data).hexdigest(), len(data))


def large_log(session_id: str, mib: int) -> bytes:
    """A plain session log of about `mib` MiB (a MiB prompt a turn): boto3 sends it in parts past 8 MiB."""
    b = LogBuilder()
    for turn in range(1, mib + 1):
        b.turn(turn, prompt=f"turn {turn}: " + "a long prompt " * 75_000)
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *b.events])


@pytest.fixture
def aws_env(team_store: TeamStore, monkeypatch: pytest.MonkeyPatch) -> TeamStore:
    """`S3Blobs` made in this process reads the standard AWS variables, as `serve` does."""
    for name, value in team_store.env.items():
        monkeypatch.setenv(name, value)
    return team_store


def test_a_server_killed_mid_put_leaves_an_upload_the_next_start_past_the_bound_aborts(
    aws_env: TeamStore, tmp_path: Path
) -> None:
    team = aws_env
    client = s3(team)
    bucket, prefix = place(team)
    data = large_log("cut-mid-put", 12)
    assert len(data) > 9 * 1024 * 1024
    # the server's object store answers everything but the parts of an upload: its put is cut between the
    # multipart upload's start and its end, when the process is killed
    with s3_proxy(team.env["AWS_ENDPOINT_URL"], hold=upload_part) as proxy:
        through_proxy = replace(team, env={**team.env, "AWS_ENDPOINT_URL": proxy.endpoint})
        with (
            Lane(tmp_path, through_proxy).start("a") as a,
            socket.create_connection((urlsplit(a.url).hostname, urlsplit(a.url).port)) as sock,
        ):
            sock.sendall(
                f"POST /api/uploads?name=big.jsonl HTTP/1.1\r\nHost: {urlsplit(a.url).netloc}\r\n"
                f"Content-Length: {len(data)}\r\n\r\n".encode()
                + data
            )
            deadline = time.monotonic() + 60
            while not (proxy.held.is_set() and pending(client, bucket)):
                assert a.process.poll() is None and time.monotonic() < deadline, "no multipart upload began"
                time.sleep(0.05)
            a.kill()
    left = pending(client, bucket)
    assert [key for key, _ in left] == [blob_key(prefix, data)], "the killed put left one incomplete upload"

    # others' incomplete uploads in the same bucket: outside the prefix, and under it but no blob's key
    foreign = {(key, begin(client, bucket, key)) for key in ("elsewhere/" + "ab" * 32, f"{prefix}/notes.txt")}

    with Lane(tmp_path, team).start("b") as b:  # the default bound: an upload begun seconds ago may be live
        assert httpx.get(f"{b.url}/api/uploads", timeout=60).json()["uploads"] == [], "nothing half-listed"
        assert left <= pending(client, bucket), "a recent upload is not aborted: another process may be at it"
    assert STALE_AFTER_SECONDS == 3600

    S3Blobs(team.blobs, tmp_path / "cache", 1 << 20, stale_after=0)  # a start with a bound of 0 s
    assert pending(client, bucket) == foreign, "the cut upload was aborted at start, nothing else"


def test_an_upload_younger_than_the_bound_is_kept_and_aborted_once_older(aws_env: TeamStore, tmp_path: Path) -> None:
    client = s3(aws_env)
    bucket, prefix = place(aws_env)
    client.create_bucket(Bucket=bucket)
    key = blob_key(prefix, b"in flight")
    upload_id = begin(client, bucket, key)
    begun = time.monotonic()

    S3Blobs(aws_env.blobs, tmp_path / "cache", 1 << 20)  # the default bound: an hour
    S3Blobs(aws_env.blobs, tmp_path / "cache", 1 << 20, stale_after=3)
    assert pending(client, bucket) == {(key, upload_id)}, "under 3 s old: kept at both starts"
    parts = client.list_parts(Bucket=bucket, Key=key, UploadId=upload_id)["Parts"]
    assert [p["PartNumber"] for p in parts] == [1], "its parts untouched: its process may still complete it"

    time.sleep(max(0.0, begun + 3.2 - time.monotonic()))
    S3Blobs(aws_env.blobs, tmp_path / "cache", 1 << 20, stale_after=3)
    assert pending(client, bucket) == set(), "over 3 s old: aborted at the next start"


def test_an_upload_sweeps_again_once_the_interval_has_passed(aws_env: TeamStore, tmp_path: Path) -> None:
    client = s3(aws_env)
    bucket, prefix = place(aws_env)
    blobs = S3Blobs(aws_env.blobs, tmp_path / "cache", 1 << 20, stale_after=0, sweep_every=3)
    swept_at = time.monotonic()  # its start swept (the bucket was empty)
    left = blob_key(prefix, b"left by a process killed after this one started")
    upload_id = begin(client, bucket, left)

    first = received(tmp_path / "tmp", b"first upload")
    blobs.publish(first)
    assert time.monotonic() - swept_at < 3, "the test was too slow to publish within the interval"
    assert pending(client, bucket) == {(left, upload_id)}, "within the interval, an upload sweeps nothing"

    time.sleep(max(0.0, swept_at + 3.1 - time.monotonic()))
    second = received(tmp_path / "tmp", b"second upload")
    blobs.publish(second)
    assert pending(client, bucket) == set(), "the first upload after the interval swept again"
    objects = {o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/")["Contents"]}
    assert objects == {blobs.key(first.digest), blobs.key(second.digest)}, "both uploads kept"


def test_a_sweep_that_fails_fails_neither_a_start_nor_an_upload(
    aws_env: TeamStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    client = s3(aws_env)
    bucket, prefix = place(aws_env)
    client.create_bucket(Bucket=bucket)
    key = blob_key(prefix, b"never listed")
    upload_id = begin(client, bucket, key)
    caplog.set_level(logging.WARNING, logger="dsh_inspect.store.s3_sweep")
    failing = ["refused"]  # at start, a policy that grants objects but not multipart listings; then no answer
    with s3_proxy(
        aws_env.env["AWS_ENDPOINT_URL"],
        refuse=lambda method, path: failing[0] == "refused" and list_multipart_uploads(method, path),
        cut=lambda method, path: failing[0] == "cut" and list_multipart_uploads(method, path),
    ) as proxy:
        # the endpoint named with a user and password, which boto3's errors repeat
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint.replace("://", "://someone:hunter2@"))
        blobs = S3Blobs(aws_env.blobs, tmp_path / "cache", 1 << 20, stale_after=0, sweep_every=0)
        failing[0] = "cut"
        upload = received(tmp_path / "tmp", b"kept all the same")
        blobs.publish(upload)
    said = [r.getMessage() for r in caplog.records if r.name == "dsh_inspect.store.s3_sweep"]
    assert len(said) == 2, "the sweep at start and the one on the upload each said why it failed"
    assert all("were not swept" in s for s in said), said
    assert "AccessDenied" in said[0] and "ConnectionClosedError" in said[1], said
    assert "someone@127.0.0.1" not in said[1] and "127.0.0.1" in said[1], "the endpoint named, without its user"
    assert not any("hunter2" in s for s in said), "no credentials in the log"
    assert pending(client, bucket) == {(key, upload_id)}, "nothing aborted"
    assert client.get_object(Bucket=bucket, Key=blobs.key(upload.digest))["Body"].read() == b"kept all the same"
