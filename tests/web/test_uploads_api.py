"""Uploads through a real client: carriers, answers, downloads, deletes, concurrency, restarts, and safety."""

from __future__ import annotations

import http.client
import io
import sqlite3
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.builders import T0
from tests.support.rows import attrs, select
from tests.support.server import app_client, live_server
from tests.support.uploads import export_zip_bytes, jsonl_bytes, sqlite_bytes, zstd_bytes


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A served folder with one log, and a link in it to a log outside it."""
    root = tmp_path_factory.mktemp("served")
    (root / "logs").mkdir()
    (root / "logs" / "on-disk.jsonl").write_bytes(jsonl_bytes("on-disk"))
    outside = tmp_path_factory.mktemp("outside") / "secret.jsonl"
    outside.write_bytes(jsonl_bytes("outside-the-root"))
    (root / "logs" / "linked.jsonl").symlink_to(outside)
    return root / "logs"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def client(served: Path, data_dir: Path) -> Iterator[httpx.Client]:
    with app_client([str(served)], data_dir=str(data_dir)) as client:
        yield client


def upload(client: httpx.Client, data: bytes, name: str, **headers: str) -> httpx.Response:
    return client.post("/api/uploads", params={"name": name}, content=data, headers=headers, timeout=60)


def test_each_carrier_answers_with_every_session_and_its_url(client: httpx.Client, tmp_path: Path) -> None:
    cases = [
        (jsonl_bytes("up-plain"), "plain.zip", "jsonl", ["up-plain"]),
        (zstd_bytes(tmp_path, "up-framed"), "framed.txt", "jsonl-zstd", ["up-framed"]),
        (sqlite_bytes(tmp_path, ["up-s1", "up-s2", "up-s3"]), "store.jsonl", "sqlite", ["up-s1", "up-s2", "up-s3"]),
        (export_zip_bytes("up-parent", ["up-child"]), "export.bin", "zip", ["up-parent", "up-child"]),
    ]
    for data, name, carrier, ids in cases:
        response = upload(client, data, name)
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["created"] is True and body["upload"]["carrier"] == carrier
        assert body["upload"]["name"] == name and body["upload"]["size"] == len(data)
        sessions = body["upload"]["sessions"]
        assert [s["id"] for s in sessions] == ids
        for s in sessions:
            assert s["verdict"] == "accepted" and s["upload"] == body["upload"]["digest"]
            page = client.get(s["url"])
            assert page.status_code == 200 and name in page.text
        assert client.get(body["upload"]["url"]).status_code == 200
    listed = {s["id"] for s in client.get("/api/sessions").json()["sessions"]}
    assert listed >= {"on-disk", "up-plain", "up-framed", "up-s1", "up-s2", "up-s3", "up-parent", "up-child"}


def test_an_export_zip_keeps_its_subagents_and_images(client: httpx.Client) -> None:
    body = upload(client, export_zip_bytes("zip-parent", ["zip-a", "zip-b"]), "dsh-session-zip-parent.zip").json()
    assert body["upload"]["media"] == 1
    paths = [s["path"] for s in body["upload"]["sessions"]]
    name = "dsh-session-zip-parent.zip"
    assert paths == [
        f"{name}!session.jsonl",
        f"{name}!subagents/zip-a/session.jsonl",
        f"{name}!subagents/zip-b/session.jsonl",
    ]
    child = client.get("/api" + body["upload"]["sessions"][1]["url"]).json()
    assert child["header"]["parentSession"] == "zip-parent"


def test_a_partly_broken_log_is_stored_and_shown_with_its_diagnostics(client: httpx.Client) -> None:
    lines = jsonl_bytes("half-broken", turns=2).split(b"\n")
    lines[4] = lines[4][:25]
    body = upload(client, b"\n".join(lines), "half-broken.jsonl").json()
    session = body["upload"]["sessions"][0]
    assert session["verdict"] == "refused"
    detail = client.get(f"/api{session['url']}").json()
    assert any(d["file"] == "half-broken.jsonl" and d["line"] == 5 for d in detail["diagnostics"])
    page = client.get(session["url"]).text
    assert "half-broken.jsonl" in page
    assert attrs(page, "[data-session-facts] [data-verdict]", "data-verdict") == ["refused"]


def test_a_file_that_is_no_session_log_gets_a_located_message(client: httpx.Client) -> None:
    before = client.get("/api/uploads").json()["uploads"]
    response = upload(client, b"\x89PNG\r\n\x1a\n not a log", "cat.png")
    assert response.status_code == 422
    assert response.json()["detail"].startswith("cat.png is not a dsh session log: first line is not JSON")
    assert "(cat.png, line 1, byte 0)" in response.json()["detail"]
    empty = upload(client, b"", "empty.jsonl")
    assert empty.status_code == 400 and "empty" in empty.json()["detail"]
    assert client.get("/api/uploads").json()["uploads"] == before


def test_the_same_bytes_twice_are_stored_once(client: httpx.Client, data_dir: Path) -> None:
    data = jsonl_bytes("twice")
    first = upload(client, data, "twice.jsonl")
    second = upload(client, data, "again.jsonl")
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json()["created"] is False
    assert second.json()["upload"]["digest"] == first.json()["upload"]["digest"]
    digest = first.json()["upload"]["digest"]
    assert len(list((data_dir / "blobs").rglob(digest))) == 1
    with sqlite3.connect(data_dir / "catalog.sqlite3") as conn:
        assert conn.execute("SELECT count(*) FROM uploads WHERE digest = ?", (digest,)).fetchone() == (1,)


def test_colliding_ids_are_told_apart_by_the_uploads_digest(client: httpx.Client) -> None:
    a = upload(client, jsonl_bytes("same-id"), "a.jsonl").json()["upload"]
    assert a["sessions"][0]["key"] == "same-id"  # unique so far: the bare id
    # the same id created at another time: another session (the same one again would be its history)
    b = upload(client, jsonl_bytes("same-id", turns=2, createdAt=T0 + 1), "b.jsonl").json()["upload"]
    a = client.get(f"/api/uploads/{a['digest']}").json()
    assert a["sessions"][0]["key"] == "same-id", "a key that has shown a session is never renamed"
    assert b["sessions"][0]["key"] == f"same-id~{b['digest'][:8]}"
    assert a["sessions"][0]["unique"] == f"same-id~{a['digest'][:8]}"


def test_original_bytes_come_back(client: httpx.Client, served: Path, tmp_path: Path) -> None:
    store = sqlite_bytes(tmp_path, ["raw-1", "raw-2"])
    body = upload(client, store, "raw.sqlite").json()["upload"]
    raw = client.get(body["download"])
    assert raw.content == store and raw.headers["content-type"] == "application/octet-stream"
    assert raw.headers["content-disposition"] == "attachment; filename*=utf-8''raw.sqlite"
    assert client.get(body["sessions"][1]["download"]).content == store
    export = export_zip_bytes("raw-parent", ["raw-child"])
    zipped = upload(client, export, "raw.zip").json()["upload"]
    member = client.get(zipped["sessions"][1]["download"])
    with zipfile.ZipFile(io.BytesIO(export)) as zf:
        assert member.content == zf.read("subagents/raw-child/session.jsonl")
    disk = next(s for s in client.get("/api/sessions").json()["sessions"] if s["id"] == "on-disk")
    assert client.get(disk["download"]).content == (served / "on-disk.jsonl").read_bytes()


def test_an_upload_can_be_deleted(client: httpx.Client, data_dir: Path) -> None:
    body = upload(client, jsonl_bytes("short-lived"), "short.jsonl").json()["upload"]
    digest, session = body["digest"], body["sessions"][0]
    deleted = client.delete(f"/api/uploads/{digest}")
    assert deleted.status_code == 200 and deleted.json() == {"deleted": digest}
    for path in (session["url"], session["download"], body["url"], body["download"], f"/api/uploads/{digest}"):
        assert client.get(path).status_code == 404, path
    assert client.delete(f"/api/uploads/{digest}").status_code == 404
    assert not list((data_dir / "blobs").rglob(digest))
    assert "short-lived" not in {s["id"] for s in client.get("/api/sessions").json()["sessions"]}


def test_twenty_concurrent_uploads_all_survive(client: httpx.Client, data_dir: Path) -> None:
    datas = [jsonl_bytes(f"concurrent-{n:02d}") for n in range(20)]
    with ThreadPoolExecutor(20) as pool:
        responses = list(pool.map(lambda n: upload(client, datas[n], f"c{n}.jsonl"), range(20)))
    assert [r.status_code for r in responses] == [201] * 20
    stored = {u["name"]: u for u in client.get("/api/uploads").json()["uploads"]}
    for n, data in enumerate(datas):
        u = stored[f"c{n}.jsonl"]
        assert client.get(u["download"]).content == data
        assert client.get(u["sessions"][0]["url"]).status_code == 200
    with sqlite3.connect(data_dir / "catalog.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert not list((data_dir / "tmp").iterdir())


def test_uploads_survive_a_restart(served: Path, tmp_path: Path) -> None:
    with app_client([str(served)], data_dir=str(tmp_path)) as client:
        body = upload(client, jsonl_bytes("kept-across-restarts"), "kept.jsonl").json()["upload"]
    with app_client([str(served)], data_dir=str(tmp_path)) as client:
        again = client.get(f"/api/uploads/{body['digest']}").json()
        assert again["name"] == "kept.jsonl" and again["sessions"][0]["id"] == "kept-across-restarts"
        assert client.get(again["sessions"][0]["url"]).status_code == 200


def test_cross_site_uploads_and_deletes_are_refused_scripts_are_not(client: httpx.Client) -> None:
    data = jsonl_bytes("origin-checked")
    origin = str(client.base_url).rstrip("/")  # the app's own, http://127.0.0.1:PORT
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": origin.replace("127.0.0.1", "localhost")},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ):
        refused = upload(client, data, "x.jsonl", **headers)
        assert refused.status_code == 403, headers
        assert "not from another site" in refused.text
    own = upload(client, data, "own.jsonl", Origin=origin, **{"Sec-Fetch-Site": "same-origin"})
    assert own.status_code == 201
    digest = own.json()["upload"]["digest"]
    assert client.delete(f"/api/uploads/{digest}", headers={"Origin": "http://evil.example"}).status_code == 403
    assert client.get(f"/api/uploads/{digest}").status_code == 200
    assert client.delete(f"/api/uploads/{digest}").status_code == 200  # a script sends no Origin


def test_a_foreign_host_header_is_refused_for_uploads_too(client: httpx.Client) -> None:
    response = upload(client, jsonl_bytes("rebound"), "x.jsonl", Host="attacker.example")
    assert response.status_code == 421


def raw_get(server: str, path: str, method: str = "GET") -> int:
    """Send `path` exactly as written (httpx would normalise the dots away)."""
    parts = urlsplit(server)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request(method, path)
        return conn.getresponse().status
    finally:
        conn.close()


TRAVERSALS = [
    "..",
    "%2e%2e",
    "..%2f..%2fetc%2fpasswd",
    "%2E%2E%2F%2E%2E%2Fcatalog.sqlite3",
    "..%5c..%5cwin.ini",
    "%252e%252e%252fetc",
    "~%2F..%2F..",
    "....//....//etc",
]


@pytest.fixture
def server(served: Path, data_dir: Path) -> Iterator[str]:
    """A real server on the same folders: raw paths go out on a socket as written."""
    with live_server([str(served)], data_dir=str(data_dir)) as url:
        yield url


def test_no_key_or_path_escapes_a_root(server: str, served: Path) -> None:
    with httpx.Client(base_url=server) as client:
        digest = upload(client, jsonl_bytes("escape-target"), "t.jsonl").json()["upload"]["digest"]
    routes = [
        "/sessions/{}",
        "/api/sessions/{}",
        "/sessions/{}/raw",
        "/sessions/{}/rows",
        "/api/sessions/{}/rows",
        "/sessions/{}/events/0",
        "/api/sessions/{}/events/0",
        "/sessions/{}/contexts/1",
        "/api/sessions/{}/contexts/1",
        "/uploads/{}",
        "/api/uploads/{}",
        "/uploads/{}/raw",
        "/sessions/{}/facts",
        "/sessions/{}/live",
        "/sessions/{}/media/a",
        "/sessions/{}/message-bodies/1",
        "/api/sessions/{}/message-bodies/1",
        "/sessions/{}/messages/m",
        "/api/sessions/{}/messages/m",
        "/sessions/{}/steps",
        "/api/sessions/{}/steps",
        "/sessions/{}/steps/1.1",
        "/api/sessions/{}/steps/1.1",
        "/api/sessions/{}/search?q=a",
        "/api/sessions/{}/locate?anchor=seq-1",
    ]
    for route in routes:
        for bad in [*TRAVERSALS, f"{digest}/..", f"..%2f{digest}", str(served / "on-disk.jsonl").replace("/", "%2f")]:
            path = route.format(bad)
            status = raw_get(server, path)
            assert status == 404, (path, status)
    for bad in [*TRAVERSALS, "..%2fapp%2fcli.py", "../app/cli.py", "%2e%2e/pyproject.toml", "/etc/passwd"]:
        assert raw_get(server, f"/static/{bad}") == 404, bad
        assert raw_get(server, f"/static/{bad}/inspect.css") == 404, bad
    for bad in TRAVERSALS:
        assert raw_get(server, f"/api/uploads/{bad}", "DELETE") == 404, bad
    assert raw_get(server, f"/api/uploads/{digest}", "GET") == 200


def test_a_symlink_leading_out_of_a_served_folder_is_not_followed(client: httpx.Client) -> None:
    listing = client.get("/api/sessions").json()
    assert "outside-the-root" not in {s["id"] for s in listing["sessions"]}
    refused = [r for r in listing["refused"] if r["path"].endswith("linked.jsonl")]
    assert refused and "symbolic link" in refused[0]["reason"]
    assert client.get("/sessions/outside-the-root").status_code == 404
    assert client.get("/sessions/outside-the-root/raw").status_code == 404


def test_the_upload_pages_and_twins_agree(client: httpx.Client) -> None:
    body = upload(client, jsonl_bytes("paged"), "paged.jsonl").json()["upload"]
    twin = client.get(f"/api/uploads/{body['digest']}").json()
    assert twin == body
    page = client.get(body["url"]).text
    sessions = [s["key"] for s in body["sessions"]]
    assert attrs(page, "[data-upload-sessions] > li[data-session-key]", "data-session-key") == sessions
    assert attrs(page, "[data-session-key]", "data-session-key") == sessions  # and no other session on the page
    listing = client.get("/uploads").text
    assert body["digest"] in attrs(listing, "[data-upload-list] tr[data-upload]", "data-upload")
    index = client.get("/").text
    assert select(index, "[data-upload-zone]")
    assert f"/uploads/{body['digest']}" in attrs(index, "[data-session-list] a[data-upload-link]", "href")
