"""One id follows a message through inbox, event and history (real dsh logs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.logs import load_path

pytestmark = pytest.mark.corpus
ROOT = "dsh-home/sessions/--home-dev-project--"


def test_the_same_id_is_in_the_inbox_splice_the_event_and_the_history(corpus_dir: Path) -> None:
    log = load_path(corpus_dir / ROOT / "session-3d286866-d979-4fe9-b73f-40837af6b135/session.jsonl.zstd")
    prompt = log.history_at()[0]
    assert prompt.text() == "BASH show me a.txt with the shell"
    carriers = [(e.role, log.types[e.seq]) for e in log.carriers_of(prompt.id)]
    assert carriers == [("inbox", "agent/inbox/spliced"), ("message", "user/message")]
    assert log.event(log.carriers_of(prompt.id)[1].seq).message == prompt


def test_a_compaction_checkpoint_has_a_new_id_and_shadows_the_old_ones(corpus_dir: Path) -> None:
    log = load_path(corpus_dir / ROOT / "session-2d63c78e-16f5-4333-ae51-0ea39805a2a6/session.jsonl.zstd")
    ((checkpoint_seq, shadowed),) = log.shadowed_by.items()
    checkpoint = log.event(checkpoint_seq)
    assert checkpoint.type == "user/message"
    assert checkpoint.message.source.get("plugin") == "compact"
    shadowed_ids = {log.message_ids[s] for s in shadowed}
    assert checkpoint.message.id not in shadowed_ids
    assert len(shadowed) == 7  # "Compacted 7 history items" in dsh's own GUI
    before = [m.id for m in log.history_at(checkpoint_seq - 1)]
    after = [m.id for m in log.history_at(checkpoint_seq)]
    assert shadowed_ids <= set(before) and not shadowed_ids & set(after)
    assert checkpoint.message.id in after
    # the shadowed events stay in the log
    assert all(log.event(s).message is not None for s in shadowed)
