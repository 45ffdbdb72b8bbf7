"""The bundled demo sessions: `python -m dsh_inspect.demo.generate` rewrites
`app/demo/sessions/`, a dsh root that `dsh-inspect serve` (and `make run`)
shows when given no path.

Together they show what the inspector can do: every context form, every
fallback to opaque, tool calls that succeed and fail, hooks and approvals,
a compaction, a parent and its subagent, a crash that dsh would repair and a
corrupt line that makes dsh refuse the log. Everything is written through
the project's own `create_*` helpers with seeded ids, so the output is the
same on every run.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from ..log.dsh_root import encode_segment, project_key
from .builder import Call, SessionBuilder

SESSIONS = Path(__file__).resolve().parent / "sessions"
CWD = "/home/demo/project"
T0 = 1_796_000_000_000  # fixed, so the files never change between runs
AGENTS_MD = (
    "<system-reminder>\nThe following workspace instructions may be relevant to your work.\n\n"
    "Instructions from: AGENTS.md\n\n# Project rules\n\nRun the tests before you say a change is done.\n\n"
    "Instructions from: docs/AGENTS.md\n\nWrite docs in short sentences.\n</system-reminder>"
)
RUNTIME = (
    "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n"
    "Current DSH file policy: workspace-write.\n\nApproval policy: ask."
)


def _builder(session_id: str, seed: int, offset_minutes: int, **header: object) -> SessionBuilder:
    return SessionBuilder(session_id, seed, CWD, T0 + offset_minutes * 60_000, dict(header))


def context_forms() -> SessionBuilder:
    """One context row of each form, each rendered by its dedicated body."""
    b = _builder("demo-context-forms", 1, 0)
    b.begin_turn(
        "What context did you get for this task?",
        title="Context forms",
        contexts=[
            (
                AGENTS_MD,
                {
                    "kind": "agent-instructions",
                    "form": "instructions",
                    "baseline": True,
                    "changes": [
                        {"action": "set", "scope": ".", "path": "AGENTS.md", "digest": "sha256:4f1c"},
                        {"action": "set", "scope": "docs", "path": "docs/AGENTS.md"},
                    ],
                },
            ),
            (
                "<system-reminder>\n<available_skills>\n- pdf: Read and fill PDF forms\n- changelog: Draft a changelog "
                "entry\n- release: Cut a release branch\n</available_skills>\n</system-reminder>",
                {
                    "kind": "skill-catalog",
                    "form": "catalog",
                    "entries": [
                        {"name": "pdf", "description": "Read and fill PDF forms"},
                        {"name": "changelog", "description": "Draft a changelog entry"},
                        {"name": "release", "description": ""},
                    ],
                },
            ),
            (
                RUNTIME,
                {
                    "kind": "plugin",
                    "plugin": "@deepseek-ai/dsh-system-prompt",
                    "form": "snapshot",
                    "sections": [
                        {"name": "sandbox:policy", "text": "Current DSH file policy: workspace-write."},
                        {"name": "approval:policy", "text": "Approval policy: ask."},
                    ],
                },
            ),
            (
                "Background job 3 (pnpm test) finished with exit code 0.",
                {
                    "kind": "plugin",
                    "plugin": "tool-jobs",
                    "form": "notice",
                    "summary": "bash pnpm test [status: completed]",
                },
            ),
            (
                [
                    "Background subagent demo-subagent-child reported:",
                    "The flaky test is tests/test_io.py::test_retry.",
                ],
                {"kind": "subagent-report", "form": "relay", "senderSessionId": "demo-subagent-child"},
            ),
            (
                '<session_reference label="Yesterday\'s debugging">The retry loop lost its backoff in commit 41c2.'
                "</session_reference>",
                {
                    "kind": "session-reference",
                    "form": "recall",
                    "version": 1,
                    "references": [
                        {
                            "sessionId": "demo-compaction",
                            "label": "Yesterday's debugging",
                            "capturedThroughSeq": 40,
                            "compacted": True,
                            "originalMessages": 14,
                            "retainedMessages": 9,
                            "omittedMessages": 5,
                            "omittedBytes": 2048,
                            "truncated": True,
                            "inputIndex": 0,
                        }
                    ],
                },
            ),
        ],
    )
    b.model_step(
        reasoning="Six pieces of context arrived with the prompt.",
        text="I got workspace instructions, a skill catalog, a runtime snapshot, a job notice, "
        "a subagent report and a recall of an earlier session.",
    )
    b.end_turn()
    return b


def context_fallbacks() -> SessionBuilder:
    """Each form with one unreadable fact, so the whole record falls back to opaque (docs/ui.md §1.4)."""
    b = _builder("demo-context-fallbacks", 2, 10)
    b.begin_turn(
        "Show me contexts that cannot use their form.",
        title="Fallbacks to opaque",
        contexts=[
            ("instructions with no changes", {"kind": "agent-instructions", "form": "instructions", "changes": []}),
            (
                "a catalog entry without a name",
                {
                    "kind": "skill-catalog",
                    "form": "catalog",
                    "entries": [{"name": "pdf", "description": "ok"}, {"description": "x"}],
                },
            ),
            (
                "a snapshot with no sections",
                {"kind": "plugin", "plugin": "time-context", "form": "snapshot", "sections": []},
            ),
            ("a notice without its summary", {"kind": "plugin", "plugin": "plan-mode", "form": "notice"}),
            ("a relay whose sender is a number", {"kind": "coordinator", "form": "relay", "senderSessionId": 7}),
            (
                "a recall whose counts are text",
                {
                    "kind": "session-reference",
                    "form": "recall",
                    "version": 1,
                    "references": [
                        {"label": "Notes", "retainedMessages": "18", "omittedMessages": 2, "truncated": False}
                    ],
                },
            ),
            ("a form this release does not know", {"kind": "plugin", "plugin": "future", "form": "a-later-form"}),
            (
                '<skill_content name="pdf">Fill the form field by field.</skill_content>',
                {"kind": "skill-invocation", "name": "pdf", "form": "instructions"},
            ),
            ("PreToolUse hook said: keep edits inside src/.", {"kind": "plugin", "plugin": "hooks-claude-code"}),
        ],
    )
    b.model_step(text="Each of these rendered as opaque text with its source fields, as dsh does.")
    b.end_turn()
    return b


def tools() -> SessionBuilder:
    """Tool calls that succeed and fail: a read, a shell, a failed edit, a hook, a rejected approval."""
    b = _builder("demo-tools", 3, 20)
    b.begin_turn(
        "Fix the typo in README.md and run the tests.",
        title="Tools that work and fail",
        contexts=[
            (
                RUNTIME,
                {
                    "kind": "plugin",
                    "plugin": "@deepseek-ai/dsh-system-prompt",
                    "form": "snapshot",
                    "sections": [{"name": "sandbox:policy", "text": "workspace-write"}],
                },
            )
        ],
    )
    b.add(
        "todo/write",
        {
            "todos": [
                {"content": "fix the typo", "status": "in_progress"},
                {"content": "run the tests", "status": "pending"},
            ]
        },
    )
    b.model_step(
        reasoning="Read the file first, then list the tests.",
        calls=[
            Call(
                "read",
                {"file_path": "README.md"},
                "<path>/home/demo/project/README.md</path>\n<content>\n1: # Demo\n2: Teh project.\n</content>",
                meta={
                    "path": "/home/demo/project/README.md",
                    "offset": 1,
                    "totalLines": 2,
                    "lines": [{"number": 1, "text": "# Demo"}, {"number": 2, "text": "Teh project."}],
                },
            ),
            Call("bash", {"command": "ls tests"}, "test_io.py\ntest_cli.py\n"),
        ],
    )
    b.model_step(
        calls=[
            Call(
                "edit",
                {"file_path": "README.md", "old_string": "The project", "new_string": "The project."},
                "Error: old_string not found in README.md",
                error=("EditError", "NO_MATCH"),
            )
        ]
    )
    b.model_step(
        text="The text differs; retrying with the exact line.",
        calls=[
            Call(
                "edit",
                {"file_path": "README.md", "old_string": "Teh project.", "new_string": "The project."},
                "The file /home/demo/project/README.md has been updated successfully.",
                meta={"diffs": [{"path": "README.md", "oldText": "Teh project.", "newText": "The project."}]},
                before=[
                    (
                        "hook/invoked",
                        {
                            "turn": 1,
                            "point": "PreToolUse",
                            "dialect": "claude-code",
                            "handlerId": "claude-code:PreToolUse:1",
                            "matcher": "edit",
                        },
                    ),
                    (
                        "hook/result",
                        {
                            "turn": 1,
                            "point": "PreToolUse",
                            "handlerId": "claude-code:PreToolUse:1",
                            "decision": "pass",
                            "exitCode": 0,
                            "durationMs": 4.5,
                        },
                    ),
                ],
            ),
        ],
    )
    b.model_step(
        calls=[
            Call(
                "bash",
                {"command": "pip install -e . && pytest"},
                "Error: the user rejected running this command",
                error=("ApprovalRejectedError", "APPROVAL_REJECTED"),
                before=[
                    (
                        "approval/asked",
                        {"id": b.mint(), "toolName": "bash", "reason": "install packages outside the workspace"},
                    ),
                    ("approval/decided", {"id": "", "outcome": "rejected"}),
                ],
            )
        ]
    )
    b.model_step(text="Fixed the typo. I could not run the tests: installing needs your approval.")
    b.end_turn()
    _pair_approvals(b)
    return b


def _pair_approvals(b: SessionBuilder) -> None:
    """An approval's decision carries its ask's id."""
    asked = None
    for event in b.events:
        if event["type"] == "approval/asked":
            asked = event["data"]["id"]
        elif event["type"] == "approval/decided":
            event["data"]["id"] = asked


def compaction() -> SessionBuilder:
    """Two turns, a manual `/compact` that replaces them with a checkpoint, and a turn after it."""
    b = _builder("demo-compaction", 4, 30)
    b.begin_turn("Why does test_retry fail?", title="A compacted session")
    b.model_step(calls=[Call("read", {"file_path": "src/io.py"}, "def retry(fn):\n    return fn()\n")])
    b.model_step(text="retry() calls the function once: there is no loop and no backoff.")
    b.end_turn()
    b.begin_turn("Suggest a fix.")
    b.model_step(text="Loop up to three times and sleep 2**n * 100 ms between attempts.")
    b.end_turn()
    b.compact(
        "The user asked why test_retry fails: retry() in src/io.py calls fn once, with no loop or backoff. "
        "Suggested fix: up to three attempts with exponential backoff.",
        tokens=412,
    )
    b.begin_turn("Apply the fix.")
    b.model_step(
        calls=[
            Call(
                "edit",
                {"file_path": "src/io.py", "old_string": "    return fn()", "new_string": "    for n in range(3): ..."},
                "The file /home/demo/project/src/io.py has been updated successfully.",
            )
        ]
    )
    b.model_step(text="Done: retry() now tries three times with backoff.")
    b.end_turn()
    return b


def subagent_pair() -> tuple[SessionBuilder, SessionBuilder]:
    """A parent that starts a background subagent, and the subagent's own log."""
    parent = _builder("demo-subagent-parent", 5, 40)
    parent.begin_turn("Find the flaky test, in the background.", title="A parent and its subagent")
    parent.model_step(
        calls=[
            Call(
                "subagent",
                {
                    "description": "Find the flaky test",
                    "run_in_background": True,
                    "prompt": "Run the tests ten times and report the flaky one.",
                },
                "started subagent demo-subagent-child",
            )
        ]
    )
    parent.model_step(text="Started a subagent; I will tell you what it finds.")
    parent.end_turn()
    report = (
        ["Background subagent demo-subagent-child reported:", "tests/test_io.py::test_retry fails 3 times in 10."],
        {"kind": "subagent-report", "form": "relay", "senderSessionId": "demo-subagent-child"},
    )
    settled = (
        "Background subagent demo-subagent-child finished and will do no further work.",
        {
            "kind": "subagent-settled",
            "form": "notice",
            "senderSessionId": "demo-subagent-child",
            "summary": "Background subagent demo-subagent-child finished",
        },
    )
    parent.begin_turn("What did it find?", contexts=[report, settled])
    parent.model_step(text="The flaky one is tests/test_io.py::test_retry (3 failures in 10 runs).")
    parent.end_turn()

    child = _builder(
        "demo-subagent-child", 6, 41, parentSession="demo-subagent-parent", origin="subagent", delegationDepth=1
    )
    child.add(
        "subagent/descriptor",
        {
            "version": 2,
            "mode": "continuable",
            "provider": "spawn",
            "label": "Find the flaky test",
            "agentProvider": "deepseek-official",
            "agentModel": "deepseek-v4-flash",
        },
    )
    child.add("session/end-seed", {})
    child.add("approval/policy", {"policy": "never", "source": "delegation"})
    child.begin_turn("Run the tests ten times and report the flaky one.", title="Find the flaky test")
    child.model_step(
        calls=[
            Call(
                "bash",
                {"command": "for i in $(seq 10); do pytest -q; done"},
                "7 passed\n6 passed, 1 failed\n7 passed\n6 passed, 1 failed\n7 passed\n7 passed\n"
                "6 passed, 1 failed\n7 passed\n7 passed\n7 passed\n",
            )
        ]
    )
    child.model_step(
        calls=[
            Call(
                "report",
                {"output": "tests/test_io.py::test_retry fails 3 times in 10."},
                "report accepted by the agent that started you",
            )
        ]
    )
    child.model_step(text="Reported.")
    child.end_turn()
    return parent, child


def crashed() -> tuple[SessionBuilder, bytes]:
    """A process killed mid-turn: a tool call with no result, then half a line.

    dsh would load it after dropping the torn line and closing the turn."""
    b = _builder("demo-crash", 7, 50)
    b.begin_turn("Run the slow integration suite.", title="Killed mid-turn")
    b.model_step(calls=[Call("bash", {"command": "pytest tests/integration"}, "")])
    # the result never arrived: cut everything after the logged tool/call
    last_call = max(e["seq"] for e in b.events if e["type"] == "tool/call")
    b.events[last_call + 1 :] = []
    b.surface = [s for s in b.surface if s <= last_call]
    torn = b'{"type":"assistant/chunk","seq":' + str(len(b.events)).encode() + b',"time":17960030000'
    return b, torn


def corrupt() -> tuple[SessionBuilder, int]:
    """A line damaged in the middle of a finished log: dsh refuses the whole log."""
    b = _builder("demo-corrupt", 8, 60)
    b.begin_turn("Summarize CHANGELOG.md.", title="A damaged line")
    b.model_step(calls=[Call("read", {"file_path": "CHANGELOG.md"}, "## 0.2.0\n- retry with backoff\n")])
    b.model_step(text="0.2.0 adds retries with backoff.")
    b.end_turn()
    damaged = next(e["seq"] for e in b.events if e["type"] == "tool/result")
    return b, damaged


def write_session(root: Path, b: SessionBuilder, content: bytes | None = None) -> Path:
    folder = root / project_key(b.cwd) / encode_segment(b.session_id)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "session.jsonl"
    path.write_bytes(content if content is not None else b.lines())
    return path


def build(root: Path) -> list[Path]:
    """Write every demo session below `root` (a dsh root)."""
    written = [write_session(root, make()) for make in _SIMPLE]
    parent, child = subagent_pair()
    written += [write_session(root, parent), write_session(root, child)]
    crash, torn = crashed()
    written.append(write_session(root, crash, crash.lines() + torn))
    damaged_log, damaged = corrupt()
    lines = damaged_log.lines().split(b"\n")
    lines[damaged + 1] = lines[damaged + 1][: len(lines[damaged + 1]) // 2]  # + 1: the header is line 1
    written.append(write_session(root, damaged_log, b"\n".join(lines)))
    return written


_SIMPLE: tuple[Callable[[], SessionBuilder], ...] = (context_forms, context_fallbacks, tools, compaction)


def main(argv: list[str] | None = None) -> int:
    target = Path(argv[0]) if argv else SESSIONS
    if target.exists():
        shutil.rmtree(target)
    for path in build(target):
        print(path.relative_to(target.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
