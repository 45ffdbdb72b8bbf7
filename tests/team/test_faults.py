"""A team server while its engines fail (issue 36, docs/decisions/0022-failing-dependencies.md): PostgreSQL
paused with SIGSTOP, restarted, stopped; the S3 gateway stopped and started again. Each case asserts what a
user receives meanwhile (a 503 naming the dependency by role, never a wrong 404, a short 200 or 0 hits;
sessions on local disk answering) and that nothing was lost once the engine is back. The engines are this
module's own, so stopping them disturbs no other test; the catalog's URL carries a password, which no
answer and nothing the server prints may show."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path

import httpx
import pytest
from dsh_inspect.store.store import ASK_AGAIN_SECONDS

from tests.support.process import ServeProcess, serve_process
from tests.support.uploads import jsonl_bytes
from tests.team.servers import (
    ObjectStore,
    Postgres,
    PostgresControl,
    ServerMissing,
    controlled_postgres,
    s3_gateway,
    seaweedfs,
    seaweedfs_ports,
)

pytestmark = pytest.mark.team

PASSWORD = "pw-n0t-for-eyes"  # trust authentication ignores it: it is there to be leaked, or not
WAIT = 60  # a client's patience: an answer that takes longer is a server that hung
STUCK_CLIENTS = 10  # the clients (loopback addresses of their own) whose requests wait on a paused database


class Engines:
    """This module's PostgreSQL, and SeaweedFS with its S3 gateway apart, so a test may stop and start either."""

    def __init__(self, pg: Postgres, control: PostgresControl, folder: Path, stack: ExitStack) -> None:
        self.pg, self.control, self.folder = pg, control, folder
        self.ports = seaweedfs_ports()
        stack.enter_context(seaweedfs(folder, self.ports, gateway=False))
        self._gateway: ExitStack | None = None
        self.objects: ObjectStore = self.start_gateway()

    def start_gateway(self) -> ObjectStore:
        self._gateway = ExitStack()
        self.objects = self._gateway.enter_context(s3_gateway(self.folder, self.ports))
        return self.objects

    @property
    def gateway_up(self) -> bool:
        return self._gateway is not None

    def kill_gateway(self) -> None:
        """SIGKILL, as a crash: its connections drop at once (a graceful stop would let them finish)."""
        filer = f"-filer=127.0.0.1:{self.ports['filer']}."
        subprocess.run(["pkill", "-KILL", "-f", f"weed s3 {filer}"], check=True)
        self.stop_gateway()

    def stop_gateway(self) -> None:
        assert self._gateway is not None
        self._gateway.close()
        self._gateway = None

    def close(self) -> None:
        if self._gateway is not None:
            self._gateway.close()

    def options(self) -> list[str]:
        """`serve`'s store options: a new database (its URL with a password) and a new bucket."""
        url = self.pg.new_database().replace(f"//{self.pg.user}@", f"//{self.pg.user}:{PASSWORD}@")
        return ["--store", url, "--blobs", self.objects.new_bucket_url(), "--setting", "database_seconds", "2"]


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engines]:
    with ExitStack() as stack:
        try:
            pg_folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dsh-inspect-faults-pg-")))
            pg, control = stack.enter_context(controlled_postgres(pg_folder))
            found = Engines(pg, control, tmp_path_factory.mktemp("faults-seaweedfs"), stack)
        except ServerMissing as exc:
            if os.environ.get("CI") == "true":
                pytest.fail(f"the team lane's servers must start under CI: {exc}")
            pytest.skip(f"the team lane's servers cannot start here: {exc}")
        stack.callback(found.close)
        yield found


def serve(
    engines: Engines, tmp_path: Path, name: str, local: Path | None = None
) -> AbstractContextManager[ServeProcess]:
    paths = [str(local)] if local else []
    return serve_process(paths, tmp_path / name, options=engines.options(), env=engines.objects.env())


def uploaded(url: str, session_id: str) -> tuple[str, bytes]:
    """An upload of one session: its key and the bytes sent."""
    body = jsonl_bytes(session_id, turns=2)
    sent = httpx.post(f"{url}/api/uploads", params={"name": "session.jsonl"}, content=body, timeout=WAIT)
    assert sent.status_code == 201, sent.text
    listed = httpx.get(f"{url}/api/sessions", timeout=WAIT).json()["sessions"]
    return next(s["key"] for s in listed if s["id"] == session_id), body


def unavailable(response: httpx.Response, *roles: str) -> None:
    """A 503 that names one of `roles` and says when to ask again, and nothing of where the engine lives."""
    assert response.status_code == 503, (response.status_code, response.text[:300])
    assert response.headers["retry-after"].isdigit()
    said = response.text
    named = response.json()["unavailable"] if "json" in response.headers["content-type"] else said
    assert any(role in named for role in roles), (roles, said[:300])
    assert "127.0.0.1" not in said and PASSWORD not in said and "s3://" not in said and "postgresql" not in said


def test_a_paused_database_is_a_prompt_503_and_local_sessions_answer(engines: Engines, tmp_path: Path) -> None:
    local = tmp_path / "local"
    local.mkdir()
    (local / "mine.jsonl").write_bytes(jsonl_bytes("on-my-disk"))
    with serve(engines, tmp_path, "data", local) as served:
        url = served.url
        _, body = uploaded(url, "in-the-store")
        digest = httpx.get(f"{url}/api/uploads", timeout=WAIT).json()["uploads"][0]["digest"]
        engines.control.pause()
        try:
            assert httpx.get(f"{url}/healthz", timeout=WAIT).status_code == 200
            ready = httpx.get(f"{url}/readyz", timeout=WAIT)
            assert ready.status_code == 503 and ready.json()["checks"]["catalog"]["ok"] is False
            assert ready.json()["checks"]["blobs"]["ok"] is True
            unavailable(httpx.get(f"{url}/api/uploads", timeout=WAIT), "catalog")
            page = httpx.get(f"{url}/uploads", timeout=WAIT)
            unavailable(page, "catalog")
            assert "data-unavailable" in page.text
            # a key it cannot find may be an upload it cannot ask about: not a 404
            unavailable(httpx.get(f"{url}/sessions/never-heard-of", timeout=WAIT), "catalog")
            # many requests waiting on the database hold no thread the others need: fifty from ten clients
            # (each client's are worked on `requests_per_client` at a time, so one client's fifty would answer
            # in turn, for most of a minute), and other people's requests meanwhile
            with ThreadPoolExecutor(60) as pool, ExitStack() as clients:
                waiting = [
                    clients.enter_context(
                        httpx.Client(transport=httpx.HTTPTransport(local_address=f"127.0.0.{11 + i}"), timeout=WAIT)
                    )
                    for i in range(STUCK_CLIENTS)
                ]
                stuck = [pool.submit(waiting[i % STUCK_CLIENTS].get, f"{url}/api/uploads") for i in range(50)]
                others = [
                    pool.submit(httpx.get, f"{url}{path}", timeout=WAIT)
                    for path in ("/static/inspect.css", "/sessions/on-my-disk", "/api/sessions/on-my-disk") * 3
                ]
                assert [f.result().status_code for f in others] == [200] * 9
                for waited in stuck:
                    unavailable(waited.result(), "catalog")
            listing = httpx.get(f"{url}/api/sessions", timeout=WAIT).json()
            assert listing["unavailable"] == "catalog"  # the uploads shown are as last read, and it says so
            assert {s["id"] for s in listing["sessions"]} == {"on-my-disk", "in-the-store"}
            page = httpx.get(f"{url}/", timeout=WAIT)
            assert page.status_code == 200 and 'data-unavailable="catalog"' in page.text  # the list's notice
        finally:
            engines.control.resume()
        after = httpx.get(f"{url}/api/uploads", timeout=WAIT)
        assert after.status_code == 200 and [u["digest"] for u in after.json()["uploads"]] == [digest]
        assert httpx.get(f"{url}/uploads/{digest}/raw", timeout=WAIT).content == body
        # the list asks the store again once its Retry-After has passed
        time.sleep(ASK_AGAIN_SECONDS)
        assert httpx.get(f"{url}/api/sessions", timeout=WAIT).json()["unavailable"] is None
        assert httpx.get(f"{url}/readyz", timeout=WAIT).json()["ready"] is True
    assert PASSWORD not in served.said()


def test_a_restarted_database_costs_no_request_an_error(engines: Engines, tmp_path: Path) -> None:
    with serve(engines, tmp_path, "data") as served:
        url = served.url
        uploaded(url, "kept-across-a-restart")
        with ThreadPoolExecutor(10) as pool:  # several pooled connections, each broken by the restart
            assert {
                r.status_code for r in pool.map(lambda _: httpx.get(f"{url}/api/uploads", timeout=WAIT), range(20))
            } == {200}
        engines.control.stop()
        engines.control.start()
        with ThreadPoolExecutor(10) as pool:
            answers = list(pool.map(lambda _: httpx.get(f"{url}/api/uploads", timeout=WAIT), range(30)))
        assert [r.status_code for r in answers] == [200] * 30
        assert all(len(r.json()["uploads"]) == 1 for r in answers)


def test_a_stopped_database_refuses_uploads_truthfully_and_loses_nothing(engines: Engines, tmp_path: Path) -> None:
    with serve(engines, tmp_path, "data") as served:
        url = served.url
        key, body = uploaded(url, "before-the-outage")
        engines.control.stop()
        try:
            refused = httpx.post(
                f"{url}/api/uploads", params={"name": "session.jsonl"}, content=jsonl_bytes("during"), timeout=WAIT
            )
            unavailable(refused, "catalog")
            # a search asks the catalog (what is listed) and the index, both in the one PostgreSQL
            unavailable(httpx.get(f"{url}/api/search", params={"q": "anything"}, timeout=WAIT), "catalog", "index")
            assert httpx.get(f"{url}/healthz", timeout=WAIT).status_code == 200
        finally:
            engines.control.start()
        again = httpx.post(
            f"{url}/api/uploads", params={"name": "session.jsonl"}, content=jsonl_bytes("during"), timeout=WAIT
        )
        assert again.status_code == 201, again.text
        ids = {s["id"] for s in httpx.get(f"{url}/api/sessions", timeout=WAIT).json()["sessions"]}
        assert ids == {"before-the-outage", "during"}
        assert httpx.get(f"{url}/sessions/{key}/raw", timeout=WAIT).content == body
    assert PASSWORD not in served.said()


def test_a_stopped_object_store_is_a_503_never_a_404_a_short_200_or_no_hits(engines: Engines, tmp_path: Path) -> None:
    options = engines.options()  # both processes on one store
    env = engines.objects.env()
    with (
        serve_process([], tmp_path / "a", options=options, env=env) as a,
        serve_process([], tmp_path / "b", options=options, env=env) as b,
    ):
        key, body = uploaded(a.url, "its-bytes-are-in-s3")
        digest = httpx.get(f"{a.url}/api/uploads", timeout=WAIT).json()["uploads"][0]["digest"]
        engines.stop_gateway()  # b has never read it: its bytes are only in the object store
        try:
            unavailable(httpx.get(f"{b.url}/sessions/{key}", timeout=WAIT), "blobs")
            unavailable(httpx.get(f"{b.url}/api/sessions/{key}", timeout=WAIT), "blobs")
            unavailable(httpx.get(f"{b.url}/uploads/{digest}/raw", timeout=WAIT), "blobs")
            unavailable(httpx.get(f"{b.url}/api/search", params={"q": "hello"}, timeout=WAIT), "blobs")
            refused = httpx.post(
                f"{b.url}/api/uploads", params={"name": "session.jsonl"}, content=jsonl_bytes("new"), timeout=WAIT
            )
            unavailable(refused, "blobs")
            assert engines.objects.endpoint.split("//")[1] not in refused.text
            ready = httpx.get(f"{b.url}/readyz", timeout=WAIT)
            assert ready.status_code == 503 and ready.json()["checks"]["blobs"]["ok"] is False
            assert engines.objects.endpoint.split("//")[1] not in ready.text
            # the process that received it keeps a copy: it reads on
            assert httpx.get(f"{a.url}/sessions/{key}", timeout=WAIT).status_code == 200
        finally:
            engines.start_gateway()
        assert httpx.get(f"{b.url}/uploads/{digest}/raw", timeout=WAIT).content == body
        assert httpx.get(f"{b.url}/sessions/{key}", timeout=WAIT).status_code == 200
        deadline = time.monotonic() + WAIT  # its bytes readable again, the index's worker takes it in
        while (hits := httpx.get(f"{b.url}/api/search", params={"q": "Read a.txt"}, timeout=WAIT).json())["pending"]:
            assert time.monotonic() < deadline, "the upload was never indexed"
            time.sleep(0.2)
        assert hits["sessions"] == 1 and hits["hits"][0]["key"] == key
        assert httpx.get(f"{b.url}/readyz", timeout=WAIT).json()["ready"] is True
    for process in (a, b):
        assert PASSWORD not in process.said()


def test_a_download_the_object_store_drops_midway_is_cut_off_not_ended(engines: Engines, tmp_path: Path) -> None:
    """The bytes of a 40 MB upload streamed from the store to a client: the gateway killed once the client
    has some of them. The client sees a connection closed short of `Content-Length`, never a whole-looking
    answer."""
    options = engines.options()
    env = engines.objects.env()
    body = jsonl_bytes("a-long-one", turns=20_000)
    with (
        serve_process([], tmp_path / "a", options=options, env=env) as a,
        serve_process([], tmp_path / "b", options=options, env=env) as b,
    ):
        sent = httpx.post(f"{a.url}/api/uploads", params={"name": "session.jsonl"}, content=body, timeout=WAIT)
        assert sent.status_code == 201, sent.text
        digest = sent.json()["upload"]["digest"]
        got = bytearray()

        def read_on(download: httpx.Response) -> None:
            for chunk in download.iter_bytes():
                got.extend(chunk)
                if len(got) >= 1_000_000 and engines.gateway_up:
                    engines.kill_gateway()

        with httpx.stream("GET", f"{b.url}/uploads/{digest}/raw", timeout=WAIT) as download:
            assert download.status_code == 200 and int(download.headers["content-length"]) == len(body)
            with pytest.raises(httpx.RemoteProtocolError):  # closed short of its length: not an answer that ended
                read_on(download)
        assert 1_000_000 <= len(got) < len(body)
        engines.start_gateway()
        assert httpx.get(f"{b.url}/uploads/{digest}/raw", timeout=WAIT).content == body
