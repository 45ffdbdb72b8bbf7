"""The probes on the embedded store: `/healthz` answers, `/readyz` names each dependency by role and the
search index's pending count, never a path; both open with access control on."""

from __future__ import annotations

from pathlib import Path

from tests.support.server import app_client
from tests.support.uploads import jsonl_bytes


def test_probes_answer_by_role_without_a_token(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "one.jsonl").write_bytes(jsonl_bytes("one"))
    data = tmp_path / "data"
    with app_client([str(tmp_path / "logs")], data_dir=str(data), require_auth=True) as client:
        assert client.get("/api/sessions", timeout=30).status_code == 401  # the rest needs a token
        assert client.get("/healthz", timeout=30).json() == {"status": "ok"}
        ready = client.get("/readyz", timeout=30)
        assert ready.status_code == 200 and ready.json()["ready"] is True
        checks = ready.json()["checks"]
        assert set(checks) == {"catalog", "blobs", "index"} and checks["index"]["pending"] == 1
        assert str(data) not in ready.text and str(tmp_path) not in ready.text
        (data / "blobs").rename(data / "gone")  # the blobs' folder no longer there
        down = client.get("/readyz", timeout=30)
        assert down.status_code == 503 and down.headers["retry-after"].isdigit()
        assert down.json()["checks"]["blobs"]["ok"] is False and str(data) not in down.text
