"""dsh-inspect's verdicts against real dsh's: every corpus session as zstd and plain artifacts, and seeded
mutants of them, each resumed by dsh's own pinned session code (tests/support/oracle.py) and checked by
dsh-inspect. Any disagreement fails, listed with its mutation and both answers."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from dsh_inspect.history.session import SessionLog, load_session
from dsh_inspect.log.records import NotASessionLog
from dsh_inspect.log.sources import discover

from tests.support.mutants import Artifact, Base, artifact_base, fixture_base, mutants
from tests.support.oracle import Job, Outcome, install, judge

pytestmark = pytest.mark.oracle  # on the corpus too: its lane is the one that needs real dsh

SEED = 20261201
PER_BASE = 7  # mutants per base session and compression: about 1,500 in all
# The damage where dsh-inspect once disagreed with dsh (issue 12's classes A-G), each of which the mutants
# must keep holding: a pattern over the mutation's description.
CLASSES = {
    "A: an event type missing or not a string": r"type '[^']+' (→ (7|None|\[|\{)|removed)|removed type|type = ",
    "B: a header version other than 0": r"header version = (0\.5|1|-1)$",
    "C: a header id or cwd not matching the artifact's place": r"header (id|cwd) (=|removed)",
    "D: a null record in the droppable tail": r"b'null'",
    "E: turn/end data not an object": r"turn/end data = (null|\[|3|\"x\"|true|0|-1|1\.5)",
    "F: turn/start, step/start or tool/call data null": r"repair-read (turn/start|step/start|tool/call) data = null",
    "G: sourceEventSeqs in range form": r"sourceEventSeqs .* → \[\[",
}


@dataclass(frozen=True, slots=True)
class Ours:
    outcome: str
    reason: str
    stored: int | None
    loaded: int | None


def _bases(corpus: Path) -> list[Base]:
    rng = random.Random(SEED)
    bases: list[Base] = []
    fixtures = sorted(p for p in (corpus / "sessions").rglob("*.jsonl"))
    for i, path in enumerate(fixtures):
        base = fixture_base(path, str(path.relative_to(corpus / "sessions")), i, rng)
        if base is not None:
            bases.append(base)
    for path in sorted((corpus / "dsh-home").rglob("session.jsonl.zstd")):
        bases.append(artifact_base(path, str(path.relative_to(corpus))))
    return bases


def _ours(root: Path) -> Ours:
    sources = discover([str(root)]).sources
    if len(sources) != 1:
        return Ours("refused", f"{len(sources)} sessions listed", None, None)
    try:
        log = load_session(sources[0])
    except NotASessionLog as exc:
        return Ours("refused", f"not a session log: {exc}", None, None)
    return Ours(log.verdict.category, log.verdict.reason, *_counts(log))


def _counts(log: SessionLog) -> tuple[int | None, int | None]:
    if not log.verdict.accepted:
        return None, None
    stored = log.stored_count
    marker = 0 if log.event_count and log.types[-1] == "session/end-seed" else 1
    return stored, log.event_count + marker


def _agrees(theirs: Outcome, ours: Ours) -> bool:
    if theirs.outcome != ours.outcome:
        return False
    if theirs.outcome in ("accepted", "repaired"):
        return (theirs.stored, theirs.loaded) == (ours.stored, ours.loaded)
    return True


def test_every_verdict_is_real_dshs(corpus_dir: Path, tmp_path: Path) -> None:
    node = install()
    bases = _bases(corpus_dir)
    cases: list[tuple[Artifact, str, Job]] = []
    for n, (artifact, compression) in enumerate(mutants(bases, PER_BASE, SEED)):
        root = tmp_path / f"{n:05d}"
        path = artifact.place(root, compression)
        cases.append((artifact, compression, Job(artifact.name, root, artifact.base.header["id"], compression, path)))
    # dsh-inspect reads first: dsh's prepare commits its repairs to the artifact
    ours = {job.name: _ours(job.root) for _, _, job in cases}
    theirs = judge(node, [job for _, _, job in cases], tmp_path)
    mutated = sum(1 for a, _, _ in cases if a.mutation != "unchanged")
    assert mutated >= 1000, mutated
    for label, pattern in CLASSES.items():
        held = [a for a, _, _ in cases if re.search(pattern, a.mutation)]
        assert len(held) >= 3, f"only {len(held)} mutants hold the damage of class {label}"
    wrong = [
        f"{a.name}: {a.mutation}\n    dsh: {theirs[j.name]}\n    us:  {ours[j.name]}"
        for a, _, j in cases
        if not _agrees(theirs[j.name], ours[j.name])
    ]
    assert not wrong, f"{len(wrong)} of {len(cases)} verdicts differ from real dsh's:\n" + "\n".join(wrong)
