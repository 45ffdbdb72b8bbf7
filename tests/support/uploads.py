"""Upload bodies of every carrier, built with the tests' own writers."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import httpx
import orjson
from dsh_inspect.store import Stored, UploadStore
from dsh_inspect.store.blobs import Received

from tests.support.builders import LogBuilder, header
from tests.support.writers import batches_of, new_store, write_sqlite_session, write_zstd

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82"
)


def events(turns: int = 1, seed: int = 7) -> list[dict]:
    b = LogBuilder(seed)
    for n in range(1, turns + 1):
        b.turn(n)
    return b.events


def jsonl_bytes(session_id: str, turns: int = 1, **extra: object) -> bytes:
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id, **extra), *events(turns)])


def zstd_bytes(tmp: Path, session_id: str) -> bytes:
    return write_zstd(tmp / f"{session_id}.zstd", header(session_id), batches_of(events(2), 7)).read_bytes()


def sqlite_bytes(tmp: Path, session_ids: list[str]) -> bytes:
    path = tmp / "store.sqlite"
    conn = new_store(path)
    for sid in session_ids:
        write_sqlite_session(conn, header(sid), batches_of(events(1), 5))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = delete")
    conn.close()
    return path.read_bytes()


def export_zip_bytes(parent: str, children: list[str]) -> bytes:
    """dsh's session export (docs/format.md §1.4): the log, its subagents' logs, one image."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("session.jsonl", jsonl_bytes(parent))
        for child in children:
            zf.writestr(
                f"subagents/{child}/session.jsonl",
                jsonl_bytes(child, parentSession=parent, origin="subagent", delegationDepth=1),
            )
        zf.writestr("media/sha256:" + "ab" * 32 + ".png", PNG)
    return out.getvalue()


def uploaded_digest(server: str, session_id: str = "uploaded") -> str:
    """Upload one plain log to a running server; the digest that names the upload."""
    response = httpx.post(f"{server}/api/uploads", params={"name": "up.jsonl"}, content=jsonl_bytes(session_id))
    assert response.status_code == 201, response.text
    found: str = response.json()["upload"]["digest"]
    return found


def received(store: UploadStore, data: bytes) -> Received:
    """`data` received into `store`'s blobs, not yet ingested."""
    receiving = store.receive()
    receiving.write(data)
    return receiving.finish()


def put(store: UploadStore, data: bytes, name: str = "session.jsonl", labels: tuple[str, ...] = ()) -> Stored:
    """`data` uploaded to `store` straight, as the upload route stores it."""
    return store.ingest(received(store, data), name, labels=labels)
