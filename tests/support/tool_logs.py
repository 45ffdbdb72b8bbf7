"""A session of one call of each tool dsh's cards know (and two they show as JSON), for the tool card tests:
a failed edit, shell calls that exit 1, 0 and in the background, a write, reads of a file and a URL, a grep and
a glob whose results log their matches or paths in `meta`, a program calling a tool, another tool, an edit in
no edit's shape, and markup where a log may hold it."""

from __future__ import annotations

from typing import Any

from dsh_inspect.testing import events as ev

KEY = "tool-cards"
CWD = "/work/shop"
GREP_META = {
    "shape": "matches",
    "files": [
        {"path": "src/a.py", "matches": [{"lineNumber": n, "line": f"# TODO a{n}"} for n in (3, 9, 12, 20)]},
        {"path": "src/b.py", "matches": [{"lineNumber": n, "line": f"# TODO b{n}"} for n in (1, 2, 7)]},
        {"path": "src/c.py", "matches": [{"lineNumber": n, "line": f"# TODO c{n}"} for n in (5, 6)]},
    ],
    "truncated": True,
    "total": 42,
}
SUBCALL = {"name": "bash", "arguments": {"command": "wc -l notes.txt", "description": "Count lines"}}
HOSTILE = "<img src=x onerror=alert(1)></del><script>alert(2)</script>"  # markup a log may hold: text
HOSTILE_META = {"shape": "matches", "files": [{"path": HOSTILE, "matches": [{"lineNumber": 1, "line": HOSTILE}]}]}
GLOB_META = {"shape": "paths", "paths": ["tree/a.ts", "tree/b.ts"], "truncated": False, "total": 2}


def _code_round(arguments: dict[str, Any], subcall: dict[str, Any], output: str) -> list[dict[str, Any]]:
    """A `run_code` call whose program calls one tool (a code-mode sub-call, as dsh logs it)."""
    answer, call, result = _round("run_code", arguments, output)
    root = call["data"]["callId"]
    ids = {"rootCallId": root, "parentCallId": root, "subCallId": f"{root}:code:1", **subcall}
    ran = {**ids, "isError": False, "content": [{"type": "text", "text": "12 lines\n"}]}
    return [
        answer,
        call,
        {"type": "tool/code-dispatch-start", "data": ids},
        {"type": "tool/code-dispatch", "data": ran},
        result,
    ]


def _round(name: str, arguments: dict[str, Any] | str, output: str, **result: Any) -> list[dict[str, Any]]:
    block = ev.call(name, arguments, call_id=f"call_{name}_{len(output)}")
    return [ev.answer(calls=[block]), ev.tool_call(block), ev.tool_result(block, output, **result)]


def session() -> list[dict[str, Any]]:
    edit = {"file_path": f"{CWD}/settings.txt", "old_string": 'color: blue\nsay "hi"', "new_string": "color: green"}
    return [
        ev.turn_start(),
        ev.step_start(),
        ev.prompt("Tidy the shop"),
        *_round("edit", edit, "Error: old_string not found in settings.txt", is_error=True),
        *_round("bash", {"command": "pytest -q tests", "description": "Run the tests"}, "2 failed\n[exit code: 1]"),
        *_round("pwsh", {"command": "Get-Date", "description": "Show the date"}, "Sunday\n"),
        *_round("bash", {"command": "sleep 60", "description": "Wait", "run_in_background": True}, "started job"),
        *_round("write", {"file_path": "notes.txt", "content": "line one\nline two"}, "Created file"),
        *_round("read", {"file_path": "big.txt", "offset": 5, "limit": 4}, "5: line five"),
        *_round("web_fetch", {"url": "http://example.test/menu.html"}, "Menu"),
        *_round("grep", {"pattern": "TODO", "path": "src", "include": "*.py"}, "Found 9 of 42 matches", meta=GREP_META),
        *_round("glob", {"pattern": "*.ts", "path": "tree"}, "tree/a.ts\ntree/b.ts", meta=GLOB_META),
        *_code_round({"code": "return await tools.bash(…)", "description": "Count the lines"}, SUBCALL, "12"),
        *_round("todo_write", {"todos": [{"content": "sweep", "status": "pending"}]}, "ok"),
        *_round("grep", {"pattern": HOSTILE, "path": HOSTILE}, "No matches found", meta=HOSTILE_META),
        *_round("bash", {"command": HOSTILE, "description": HOSTILE, "workdir": HOSTILE}, f"{HOSTILE}\n"),
        *_round("edit", {"file_path": "odd.txt", "old_string": 5, "new_string": "five"}, "Error: bad", is_error=True),
        ev.step_end(),
        ev.turn_end(),
    ]
