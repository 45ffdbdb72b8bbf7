"""Every real dsh log in ../shared/corpus, read as dsh would read it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dsh_inspect.history.session import load_session
from dsh_inspect.log.dsh_root import list_root, read_header_line, resolve_root
from dsh_inspect.log.records import NotASessionLog
from dsh_inspect.log.sources import discover

from tests.conftest import CORPUS
from tests.support.logs import load_path, stored_events

pytestmark = pytest.mark.corpus

FIXTURES = sorted((CORPUS / "sessions").rglob("*.jsonl")) if CORPUS.is_dir() else []
ROOT_IDS = [
    "session-2d63c78e-16f5-4333-ae51-0ea39805a2a6",
    "session-3d286866-d979-4fe9-b73f-40837af6b135",
    "session-703c3513-58bf-4d62-968c-4f02c6c2812f",
    "session-bbe88c97-9dd2-4991-ad6a-fa0982b5251f",
    "session-f8047b06-f979-4526-803a-9b252cdef7a1",
]


def test_the_corpus_has_its_fixture_logs(corpus_dir: Path) -> None:
    assert len(FIXTURES) >= 100


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(CORPUS / "sessions")))
def test_every_corpus_log_loads_in_fixture_mode_and_is_accepted(corpus_dir: Path, path: Path) -> None:
    log = load_path(path)
    assert log.verdict.category == "accepted", (log.verdict, log.diagnostics)
    assert log.carrier == "fixture"  # docs/format.md §8: no event line carries a seq (a header-only log too)
    if log.event_count:
        assert log.carrier == "fixture"
    assert not [d for d in log.diagnostics if d.severity == "error"]


def test_seeded_history_seed_is_upgraded_with_legacy_ids(corpus_dir: Path) -> None:
    log = load_path(corpus_dir / "sessions/apps/web/tests/snapshots/seeded-history/seed.jsonl")
    assert log.verdict.category == "accepted"
    history = log.history_at()
    assert history, "the seed has model-visible messages"
    for message in history:
        seq = next(e.seq for e in log.events() if e.message is not None and e.message.id == message.id)
        assert message.id == f"legacy-message:{{{{sessionId}}}}:{seq}"
    first = history[0]
    assert first.role == "user" and first.source.kind == "user"
    assert first.text().startswith("Use the read tool twice")
    # pre-identity assistant and tool rows come back in the current shape
    kinds = {(m.role, m.source.kind) for m in history}
    assert ("assistant", "model") in kinds and ("user", "tool") in kinds
    # turn/start's legacy trigger is gone after the upgrade
    assert log.event(0).type == "turn/start" and dict(log.event(0).data) == {"turn": 1}


def test_the_dsh_root_lists_five_sessions_from_their_headers_alone(corpus_dir: Path, tmp_path: Path) -> None:
    # Keep only each artifact's first zstd frame: a listing that read events would fail.
    root = tmp_path / "sessions"
    shutil.copytree(corpus_dir / "dsh-home/sessions", root)
    from dsh_inspect.log.plaintext import scan_frames

    for artifact in root.rglob("session.jsonl.zstd"):
        data = artifact.read_bytes()
        start, end = scan_frames(data).frames[0]
        artifact.write_bytes(data[start:end] + b"\x00garbage")
    assert resolve_root(str(tmp_path)) == str(root)  # a DSH_HOME resolves to its sessions/
    listing = list_root(str(root))
    assert not listing.diagnostics
    import orjson

    ids = sorted(orjson.loads(read_header_line(a.path))["id"] for a in listing.artifacts)
    assert ids == ROOT_IDS


def test_every_root_session_reads_accepted(corpus_dir: Path) -> None:
    logs = {log.header.id: log for log in (load_session(s) for s in discover([str(corpus_dir / "dsh-home")]).sources)}
    assert sorted(logs) == ROOT_IDS
    for log in logs.values():
        assert log.carrier == "jsonl-zstd"
        assert log.verdict.category == "accepted", log.verdict
        assert not [d for d in log.diagnostics if d.severity != "info"], log.diagnostics
    # the resumed session: a second process appended its own end-seed and a resume header
    resumed = logs["session-bbe88c97-9dd2-4991-ad6a-fa0982b5251f"]
    types = resumed.types
    assert "session/end-seed" in types
    end_seed = types.index("session/end-seed")
    headers = [resumed.event(s) for s in range(end_seed, resumed.event_count) if types[s] == "request/header"]
    assert headers and headers[0].data["reason"] == "resume"
    assert resumed.turns == 2
    # the three-turn session with a manual /compact holds a real compaction lifecycle
    compacted = logs["session-2d63c78e-16f5-4333-ae51-0ea39805a2a6"]
    assert compacted.turns == 3 and compacted.shadowed_by
    # the session holding only its first three events
    assert logs["session-703c3513-58bf-4d62-968c-4f02c6c2812f"].event_count == 3


def test_the_export_zip_reads_as_the_same_events_as_its_root_session(corpus_dir: Path) -> None:
    sid = "session-2d63c78e-16f5-4333-ae51-0ea39805a2a6"
    exported = load_path(corpus_dir / f"exports/dsh-session-{sid}.zip")
    original = load_path(corpus_dir / f"dsh-home/sessions/--home-dev-project--/{sid}/session.jsonl.zstd")
    assert exported.carrier == "zip" and exported.verdict.category == "accepted"
    assert exported.header == original.header
    assert stored_events(exported) == stored_events(original)


@pytest.mark.parametrize("name", ["acp-agent", "headless-agent", "jsonrpc-agent"])
def test_files_that_are_not_session_logs_are_refused_with_what_they_are(corpus_dir: Path, name: str) -> None:
    (path,) = (corpus_dir / "not-sessions/examples" / name).rglob("*.jsonl")
    (source,) = discover([str(path)]).sources
    with pytest.raises(NotASessionLog) as caught:
        load_session(source)
    expected = {
        "acp-agent": "ACP / JSON-RPC transcript",
        "headless-agent": "stream-json",
        "jsonrpc-agent": "JSON-RPC notification",
    }[name]
    assert expected in caught.value.reason
    assert caught.value.location.line == 1
