"""Holes a review found in project scoping, each closed (docs/decisions/0020-access-control.md): a SQLite store's
download carrying another project's session, an upload taking over another project's session by its id and
time, a chooser naming a hidden copy by its count, and a subagent link telling a hidden session exists."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from dsh_inspect.settings import Settings
from dsh_inspect.web.app import create_app
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.support.builders import LogBuilder, header
from tests.support.rows import opened
from tests.support.uploads import events, jsonl_bytes
from tests.support.writers import batches_of, new_store, write_sqlite_session


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    return folder


def guarded(logs: Path, tmp_path: Path) -> tuple[FastAPI, TestClient]:
    app = create_app([str(logs)], Settings(data_dir=str(tmp_path / "data"), require_auth=True))
    return app, TestClient(app, base_url="http://127.0.0.1")


def bearer(app: FastAPI, name: str, role: str, *projects: str) -> dict[str, str]:
    _, secret = app.state.web.access.tokens.create(name, role, list(projects))
    return {"Authorization": f"Bearer {secret}"}


def test_a_store_holding_another_projects_session_is_no_download_for_a_scoped_token(logs: Path, tmp_path: Path) -> None:
    conn = new_store(logs / "store.sqlite")
    write_sqlite_session(conn, header("sess-a", cwd="/a"), batches_of(events(1), 5))
    write_sqlite_session(conn, header("sess-b", cwd="/b"), batches_of(events(1), 5))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    app, client = guarded(logs, tmp_path)
    scoped, everyone = bearer(app, "a", "viewer", "/a"), bearer(app, "all", "viewer")
    assert client.get("/api/sessions/sess-a", headers=scoped).status_code == 200  # its own session reads
    assert client.get("/sessions/sess-a/raw", headers=scoped).status_code == 404  # the file holds sess-b too
    assert client.get("/sessions/sess-a/raw", headers=everyone).status_code == 200


def test_an_upload_never_joins_or_takes_over_another_projects_session(logs: Path, tmp_path: Path) -> None:
    app, client = guarded(logs, tmp_path)
    admin, member_a = bearer(app, "root", "admin"), bearer(app, "a", "member", "/a")
    viewer_b = bearer(app, "b", "viewer", "/b")
    made = client.post("/api/uploads?name=b.jsonl", content=jsonl_bytes("shared-id", 2, cwd="/b"), headers=admin)
    assert made.status_code == 201
    # the same id and time, said to be of project A: another session, never a version of B's
    forged = client.post("/api/uploads?name=a.jsonl", content=jsonl_bytes("shared-id", 1, cwd="/a"), headers=member_a)
    assert forged.status_code == 201
    assert forged.json()["upload"]["sessions"][0]["key"] != "shared-id"
    assert [s["key"] for s in client.get("/api/sessions", headers=viewer_b).json()["sessions"]] == ["shared-id"]
    seen_by_b = client.get("/api/sessions/shared-id", headers=viewer_b).json()
    assert len(seen_by_b["versions"]) == 1 and seen_by_b["cwd"] == "/b"
    assert client.get("/api/sessions/shared-id", headers=member_a).status_code == 404
    own = client.get(f"/api/sessions/{forged.json()['upload']['sessions'][0]['key']}", headers=member_a).json()
    assert "b.jsonl" not in orjson.dumps(own).decode()


def test_a_key_two_projects_share_opens_the_one_a_scoped_token_sees(logs: Path, tmp_path: Path) -> None:
    (logs / "a.jsonl").write_bytes(jsonl_bytes("dup", 1, cwd="/a"))
    (logs / "b.jsonl").write_bytes(jsonl_bytes("dup", 1, cwd="/b"))
    app, client = guarded(logs, tmp_path)
    assert client.get("/api/sessions/dup", headers=bearer(app, "all", "viewer")).status_code == 300  # a chooser
    alone = client.get("/api/sessions/dup", headers=bearer(app, "a", "viewer", "/a"))
    assert alone.status_code == 200 and alone.json()["cwd"] == "/a"  # as if B's copy were not there


def subagent_log(session_id: str, child: str, cwd: str) -> bytes:
    """A turn whose tool call names the subagent session `child`."""
    b = LogBuilder(5)
    b.turn(1, "delegate it")
    text = b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id, cwd=cwd), *b.events]).decode()
    named = '{\\"subagent_id\\": \\"' + child + '\\"}'
    return text.replace('{\\"file_path\\": \\"a.txt\\"}', named, 2).encode()


def test_a_subagent_row_links_a_child_of_its_own_project_only(logs: Path, tmp_path: Path) -> None:
    (logs / "child-b.jsonl").write_bytes(jsonl_bytes("child-b", 1, cwd="/b"))
    (logs / "child-a.jsonl").write_bytes(jsonl_bytes("child-a", 1, cwd="/a"))
    (logs / "parent-to-b.jsonl").write_bytes(subagent_log("parent-to-b", "child-b", "/a"))
    (logs / "parent-to-a.jsonl").write_bytes(subagent_log("parent-to-a", "child-a", "/a"))
    app, client = guarded(logs, tmp_path)
    viewer = bearer(app, "a", "viewer", "/a")
    # the child's note is in the tool row's body, sent when the row opens
    to_b, to_a = (
        opened(client, client.get(f"/sessions/{key}/rows?from=0", headers=viewer).text, f"/sessions/{key}", viewer)
        for key in ("parent-to-b", "parent-to-a")
    )
    assert 'data-child-session="child-b"' in to_b and 'href="/sessions/child-b"' not in to_b
    assert 'data-child-session="child-a"' in to_a and 'href="/sessions/child-a"' in to_a
