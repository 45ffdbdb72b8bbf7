"""Tokens and the audit trail as the catalog keeps them (app/store/access_records.py, app/access/): a secret
kept only as its hash, a name reused only once its token is revoked or expired, an expired token refused,
the audit trail filtered, paged and pruned after `audit_days`."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_inspect.access import Auditor, TokenError, Tokens, digest_of
from dsh_inspect.access.tokens import DAY_MS, now_ms
from dsh_inspect.store import UploadStore
from dsh_inspect.store.access_records import AuditEntry, AuditQuery


@pytest.fixture
def store(tmp_path: Path) -> UploadStore:
    return UploadStore(tmp_path / "data")


def test_a_token_is_kept_as_the_hash_of_its_secret(store: UploadStore) -> None:
    tokens = Tokens(store.access)
    token, secret = tokens.create("ci", "member", ["/work/a/", "/work/b"], 30, by="token:boss")
    assert token.digest == digest_of(secret) and secret not in repr(token)
    assert token.projects == ("/work/a", "/work/b") and token.created_by == "token:boss"
    assert token.expires_at is not None and token.expires_at - token.created_at == 30 * DAY_MS
    found = tokens.find(secret)
    assert found is not None and found.name == "ci"
    assert tokens.find(secret[:-1] + ("A" if secret[-1] != "A" else "B")) is None
    assert tokens.find("not-a-token") is None


def test_a_name_is_given_once(store: UploadStore) -> None:
    tokens = Tokens(store.access)
    _, first = tokens.create("ci", "viewer")
    with pytest.raises(TokenError, match="exists"):
        tokens.create("ci", "admin")
    assert tokens.revoke("ci") and not tokens.revoke("ci")
    assert tokens.find(first) is None
    with pytest.raises(TokenError, match="existed"):  # what `token:ci` uploaded is not a new token's to delete
        tokens.create("ci", "admin")
    assert [(t.name, t.revoked_at is not None) for t in tokens.list()] == [("ci", True)]


@pytest.mark.parametrize(
    ("name", "role", "days"), [("", "viewer", None), ("a b", "viewer", None), ("ok", "root", None), ("ok", "viewer", 0)]
)
def test_a_token_asked_for_wrongly_is_refused_with_the_reason(
    store: UploadStore, name: str, role: str, days: int | None
) -> None:
    with pytest.raises(TokenError):
        Tokens(store.access).create(name, role, (), days)


def test_an_expired_token_is_refused(store: UploadStore) -> None:
    tokens = Tokens(store.access)
    token, secret = tokens.create("old", "viewer")
    with store.catalog.connection() as conn:
        conn.execute("UPDATE tokens SET expires_at = ? WHERE name = 'old'", (now_ms() - 1,))
    assert tokens.find(secret) is None
    assert not tokens.list()[0].usable(now_ms()) and token.usable(now_ms())


def test_the_audit_trail_is_filtered_paged_and_pruned(store: UploadStore) -> None:
    records = store.access
    old = now_ms() - 91 * DAY_MS
    records.record([AuditEntry(old, "token:gone", "upload", "d1", "10.0.0.1", "ok", 201)])
    auditor = Auditor(records, keep_days=90)
    for n in range(5):
        auditor.record("token:ci", "download", f"d{n}", "127.0.0.1", "ok", 200)
    auditor.record("anonymous", "GET /api/sessions", "/api/sessions", "127.0.0.1", "denied", 401)
    every = auditor.entries(AuditQuery())
    assert [e.actor for e in every][:2] == ["anonymous", "token:ci"]
    assert all(e.actor != "token:gone" for e in every), "older than audit_days: dropped"
    assert len(auditor.entries(AuditQuery(outcome="denied"))) == 1
    page = auditor.entries(AuditQuery(actor="token:ci", limit=2))
    older = auditor.entries(AuditQuery(actor="token:ci", limit=10, before=page[-1].id))
    assert [e.target for e in page + older] == ["d4", "d3", "d2", "d1", "d0"]
    assert auditor.entries(AuditQuery(since=now_ms() + 60_000)) == []
