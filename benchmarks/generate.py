"""The benchmark workloads of docs/product.md Budgets, byte-identical on every run.

W1: a dsh root (zstd artifacts) holding one 500-turn session with 500 tool
calls and a context injection of each form every 10 turns, 1,000 small
sessions, and a one-turn session (the long session's first turn alone, the
reference the windowing budget compares against).
W2: one plain-JSONL session of about 100 MB, tool-heavy, with some tool
results over 1 MB.
W3 (`generate_w3`, for the memory budgets): one plain-JSONL session of about
100 MB made of small events, W1's long session's turns again and again
(about 440,000 events of 240 bytes on average).

Every message is made by the project's `create_*` helpers (through
`dsh_inspect.demo.builder.SessionBuilder`) with a seeded id source, every text comes
from a seeded `random.Random`, and every time is fixed, so the files are the
same from run to run. `python -m benchmarks.generate [OUT]` writes them; a
stamp file keyed by `VERSION` and the spec lets a rerun skip the work.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson
from dsh_inspect.demo.builder import Call, SessionBuilder
from dsh_inspect.log.writer import artifact_path, write_artifact

VERSION = "1"  # bump when the workloads change shape, so cached output is rebuilt
OUT = Path(__file__).resolve().parent / "out"
T0 = 1_797_000_000_000
LONG_ID = "w1-long"
ONE_TURN_ID = "w1-one-turn"
W2_ID = "w2-large"
W3_ID = "w3-small-events"
W3_VERSION = "1"  # W3 has its own stamp: making it never rebuilds W1 and W2
MIB = 1 << 20

Event = dict[str, Any]
Context = tuple[str | Sequence[str], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Spec:
    """Workload sizes; `FULL` is docs/product.md's, the smoke test uses a tiny one."""

    long_turns: int = 500
    context_every: int = 10  # turns between injections of one context of each form
    small_sessions: int = 1000
    w2_bytes: int = 100 * MIB
    w2_big_result: int = 5 * MIB // 4  # tool results over 1 MB
    w2_big_every: int = 40  # one call in this many returns a big result
    corpus_bytes: int = 1 << 21  # the text tool outputs are cut from
    seed: int = 20_260_101

    def digest(self) -> str:
        return hashlib.sha256(orjson.dumps({"version": VERSION, **asdict(self)})).hexdigest()[:16]


FULL = Spec()


@dataclass(frozen=True, slots=True)
class Workloads:
    """Where the generated workloads are."""

    w1_root: Path
    long_session: Path
    one_turn_session: Path
    small_sessions: tuple[Path, ...]
    w2_root: Path
    w2_session: Path


# -- deterministic text --------------------------------------------------------

_WORDS = [
    "the",
    "a",
    "an",
    "of",
    "to",
    "in",
    "for",
    "on",
    "with",
    "from",
    "by",
    "at",
    "into",
    "over",
    "under",
    "file",
    "test",
    "build",
    "module",
    "function",
    "value",
    "result",
    "error",
    "retry",
    "cache",
    "index",
    "window",
    "header",
    "stream",
    "frame",
    "offset",
    "line",
    "row",
    "column",
    "session",
    "event",
    "message",
    "tool",
    "call",
    "read",
    "write",
    "edit",
    "patch",
    "diff",
    "commit",
    "branch",
    "merge",
    "config",
    "setting",
    "path",
    "folder",
    "import",
    "export",
    "parse",
    "decode",
    "encode",
    "verify",
    "check",
    "budget",
    "memory",
    "latency",
    "throughput",
    "测试",
    "文件",
    "会话",
]


class Text:
    """Seeded prose and file-like output; large outputs are slices of one corpus (fast and varied)."""

    def __init__(self, seed: int, corpus_bytes: int) -> None:
        self.rng = random.Random(seed)
        lines = []
        size = 0
        n = 0
        while size < corpus_bytes:
            n += 1
            line = f"{n:6d}  " + " ".join(self.rng.choices(_WORDS, k=self.rng.randint(3, 14)))
            lines.append(line)
            size += len(line) + 1
        self.corpus = "\n".join(lines)

    def sentence(self, words: int = 12) -> str:
        return " ".join(self.rng.choices(_WORDS, k=words)).capitalize() + "."

    def output(self, size: int) -> str:
        """`size` characters of file-like text, starting at a seeded place in the corpus."""
        parts = []
        left = size
        while left > 0:
            start = self.rng.randrange(len(self.corpus))
            piece = self.corpus[start : start + left]
            parts.append(piece)
            left -= len(piece)
        return "".join(parts)


# -- context of every form (docs/format.md §4.3-4.4) -----------------------------------


def contexts(turn: int, text: Text) -> list[Context]:
    """One injected context of each form, with the source fields each form reads."""
    note = text.sentence(8)
    return [
        (
            f"<system-reminder>\nInstructions from: AGENTS.md\n\n# Rules (turn {turn})\n\n{note}\n</system-reminder>",
            {
                "kind": "agent-instructions",
                "form": "instructions",
                "baseline": turn == 1,
                "changes": [{"action": "set", "scope": ".", "path": "AGENTS.md", "digest": f"sha256:{turn:04x}"}],
            },
        ),
        (
            (
                "<system-reminder>\n<available_skills>\n- pdf: Read PDF forms\n- release: Cut a release\n"
                "</available_skills>\n</system-reminder>"
            ),
            {
                "kind": "skill-catalog",
                "form": "catalog",
                "entries": [
                    {"name": "pdf", "description": "Read PDF forms"},
                    {"name": "release", "description": "Cut a release"},
                ],
            },
        ),
        (
            f"Current runtime context (turn {turn}). Approval policy: ask.",
            {
                "kind": "plugin",
                "plugin": "@deepseek-ai/dsh-system-prompt",
                "form": "snapshot",
                "sections": [
                    {"name": "approval:policy", "text": "Approval policy: ask."},
                    {"name": "turn", "text": f"turn {turn}"},
                ],
            },
        ),
        (
            f"Background job {turn} (pytest) finished with exit code 0.",
            {
                "kind": "plugin",
                "plugin": "tool-jobs",
                "form": "notice",
                "summary": f"bash pytest [job {turn}: completed]",
            },
        ),
        (
            ["Background subagent w1-helper reported:", note],
            {"kind": "subagent-report", "form": "relay", "senderSessionId": "w1-helper"},
        ),
        (
            f'<session_reference label="Earlier work">{note}</session_reference>',
            {
                "kind": "session-reference",
                "form": "recall",
                "version": 1,
                "references": [
                    {
                        "sessionId": "w1-small-0000",
                        "label": "Earlier work",
                        "capturedThroughSeq": 10,
                        "compacted": False,
                        "originalMessages": 4,
                        "retainedMessages": 4,
                        "omittedMessages": 0,
                        "omittedBytes": 0,
                        "truncated": False,
                        "inputIndex": 0,
                    }
                ],
            },
        ),
    ]


# -- sessions ------------------------------------------------------------------------


def _turn_batches(b: SessionBuilder, since: int) -> list[Event]:
    """The events added since `since`: one append batch, as dsh writes one per turn."""
    return b.events[since:]


def tool_turn(b: SessionBuilder, turn: int, text: Text, *, with_contexts: bool, output_size: int = 600) -> None:
    """A prompt (with one context of each form when asked), one tool call and an answer."""
    b.begin_turn(
        f"Task {turn}: {text.sentence(10)}",
        contexts=contexts(turn, text) if with_contexts else (),
        title=f"Benchmark session ({b.session_id})" if turn == 1 else None,
    )
    path = f"src/module_{turn % 37}.py"
    b.model_step(reasoning=text.sentence(16), calls=[Call("read", {"file_path": path}, text.output(output_size))])
    b.model_step(text=text.sentence(24))
    b.end_turn()


def build_long(session_id: str, turns: int, spec: Spec, id_seed: int) -> tuple[dict[str, Any], list[list[Event]]]:
    """W1's long session (or, with turns=1, its first turn alone): one batch per turn.

    The text comes from one seed, so the one-turn session reads like the long one's
    first turn; ids come from `id_seed`, so the two share no message id."""
    text = Text(spec.seed + 1, spec.corpus_bytes)
    b = SessionBuilder(session_id, id_seed, "/home/bench/long-project", T0)
    batches = []
    for turn in range(1, turns + 1):
        since = len(b.events)
        tool_turn(b, turn, text, with_contexts=(turn - 1) % spec.context_every == 0)
        batches.append(_turn_batches(b, since))
    return b.header(), batches


def build_small(index: int, spec: Spec, text: Text) -> tuple[dict[str, Any], list[list[Event]]]:
    """One of W1's small sessions: 1 to 3 turns, in one of 20 projects."""
    b = SessionBuilder(
        f"w1-small-{index:04d}",
        spec.seed + 1000 + index,
        f"/home/bench/project-{index % 20:02d}",
        T0 - (index + 1) * 60_000,
    )
    batches = []
    for turn in range(1, 1 + 1 + index % 3):
        since = len(b.events)
        tool_turn(b, turn, text, with_contexts=turn == 1 and index % 5 == 0, output_size=200)
        batches.append(_turn_batches(b, since))
    return b.header(), batches


def w2_turns(spec: Spec) -> Iterator[tuple[SessionBuilder, list[Event]]]:
    """W2's turns until the log reaches its size: several calls per step, a big result every so often."""
    text = Text(spec.seed + 2, spec.corpus_bytes)
    b = SessionBuilder(W2_ID, spec.seed + 2, "/home/bench/large-project", T0 + 3_600_000)
    size = 0
    calls = 0
    turn = 0
    while size < spec.w2_bytes:
        turn += 1
        since = len(b.events)
        b.begin_turn(
            f"Refactor step {turn}: {text.sentence(12)}",
            title="Large tool-heavy session" if turn == 1 else None,
            contexts=contexts(turn, text)[2:3] if turn % 20 == 1 else (),
        )
        for _ in range(2):
            step_calls = []
            for _ in range(text.rng.randint(2, 5)):
                calls += 1
                big = calls % spec.w2_big_every == 0
                out = text.output(
                    spec.w2_big_result + text.rng.randrange(spec.w2_big_result // 4)
                    if big
                    else text.rng.randint(2_000, 40_000)
                )
                name = text.rng.choice(("read", "bash", "grep"))
                step_calls.append(
                    Call(
                        name,
                        {"file_path": f"src/m{calls % 101}.py"}
                        if name == "read"
                        else {"command": f"rg -n value src/ # {calls}"},
                        out,
                    )
                )
            b.model_step(reasoning=text.sentence(20), text=text.sentence(10), calls=step_calls)
        b.model_step(text=text.sentence(30))
        b.end_turn()
        batch = b.events[since:]
        size += sum(len(orjson.dumps(e)) + 1 for e in batch)
        yield b, batch


def build_w2(spec: Spec) -> tuple[dict[str, Any], list[list[Event]]]:
    batches = []
    header: dict[str, Any] = {}
    for b, batch in w2_turns(spec):
        header = b.header()
        batches.append(batch)
    return header, batches


# -- writing ---------------------------------------------------------------------------


def build_w3(size: int, spec: Spec) -> tuple[dict[str, Any], list[list[Event]]]:
    """W3: tool turns as W1's long session has them (a context of each form every 10 turns) until `size` bytes."""
    text = Text(spec.seed + 5, spec.corpus_bytes)
    b = SessionBuilder(W3_ID, spec.seed + 5, "/home/bench/small-events", T0)
    batches = []
    written = 0
    turn = 0
    while written < size:
        turn += 1
        since = len(b.events)
        tool_turn(b, turn, text, with_contexts=(turn - 1) % spec.context_every == 0)
        batch = _turn_batches(b, since)
        written += sum(len(orjson.dumps(e)) + 1 for e in batch)
        batches.append(batch)
    return b.header(), batches


def write_w1(root: Path, spec: Spec) -> tuple[Path, Path, tuple[Path, ...]]:
    header, batches = build_long(LONG_ID, spec.long_turns, spec, spec.seed + 1)
    long_path = write_artifact(root, header, batches, "zstd")
    header, batches = build_long(ONE_TURN_ID, 1, spec, spec.seed + 4)
    one_path = write_artifact(root, header, batches, "zstd")
    text = Text(spec.seed + 3, min(spec.corpus_bytes, 1 << 16))
    small = tuple(write_artifact(root, *build_small(i, spec, text), "zstd") for i in range(spec.small_sessions))
    return long_path, one_path, small


def locate(out: Path, spec: Spec = FULL) -> Workloads:
    """Where `generate(out, spec)` puts each workload (without writing anything)."""
    w1, w2 = out / "w1", out / "w2"
    return Workloads(
        w1_root=w1,
        long_session=artifact_path(w1, {"id": LONG_ID, "cwd": "/home/bench/long-project"}, "zstd"),
        one_turn_session=artifact_path(w1, {"id": ONE_TURN_ID, "cwd": "/home/bench/long-project"}, "zstd"),
        small_sessions=tuple(
            artifact_path(w1, {"id": f"w1-small-{i:04d}", "cwd": f"/home/bench/project-{i % 20:02d}"}, "zstd")
            for i in range(spec.small_sessions)
        ),
        w2_root=w2,
        w2_session=artifact_path(w2, {"id": W2_ID, "cwd": "/home/bench/large-project"}, "none"),
    )


def _stamp(out: Path) -> Path:
    return out / "workloads.stamp"


def generate(out: Path = OUT, spec: Spec = FULL, *, force: bool = False) -> Workloads:
    """Write both workloads below `out`, unless the same version and spec are already there."""
    where = locate(out, spec)
    stamp = _stamp(out)
    if not force and stamp.is_file() and stamp.read_text() == spec.digest():
        return where
    for folder in (where.w1_root, where.w2_root):
        if folder.exists():
            shutil.rmtree(folder)
    stamp.unlink(missing_ok=True)
    long_path, one_path, small = write_w1(where.w1_root, spec)
    header, batches = build_w2(spec)
    w2_path = write_artifact(where.w2_root, header, batches, "none")
    assert (long_path, one_path, small, w2_path) == (
        where.long_session,
        where.one_turn_session,
        where.small_sessions,
        where.w2_session,
    )
    stamp.write_text(spec.digest())
    return where


def generate_w3(out: Path = OUT, size: int = 100 * MIB, spec: Spec = FULL, *, force: bool = False) -> Path:
    """Write W3 below `out` (its own folder and stamp), unless this very W3 is there; its path."""
    root = out / "w3"
    path = artifact_path(root, {"id": W3_ID, "cwd": "/home/bench/small-events"}, "none")
    stamp = out / "w3.stamp"
    key = f"{W3_VERSION}:{size}:{spec.digest()}"
    if not force and stamp.is_file() and stamp.read_text() == key and path.is_file():
        return path
    if root.exists():
        shutil.rmtree(root)
    written = write_artifact(root, *build_w3(size, spec), "none")
    assert written == path
    stamp.write_text(key)
    return path


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    force = "--force" in args
    args = [a for a in args if a != "--force"]
    out = Path(args[0]) if args else OUT
    where = generate(out, force=force)
    print(
        f"W1: {where.w1_root} ({len(where.small_sessions) + 2} sessions; long: {where.long_session.stat().st_size} "
        f"bytes zstd)"
    )
    print(f"W2: {where.w2_session} ({where.w2_session.stat().st_size / MIB:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
