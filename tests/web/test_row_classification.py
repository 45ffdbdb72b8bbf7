"""A row is classified once: the page's state and dot, the JSON twin and *errors only* always agree.

A tool result with error code `ABORTED` was stopped, not failed: it shows an amber dot and
`data-state="stopped"`, its twin says `"error": false`, and *errors only* does not find it;
a result that failed shows red, says true, and is found.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from dsh_inspect.log.writer import write_artifact
from dsh_inspect.model.rules import BOOKKEEPING_TYPES

from tests.support.builders import LogBuilder, header
from tests.support.rows import flow_rows
from tests.support.server import app_client


def _log(root: Path) -> None:
    b = LogBuilder()
    b.turn(1)  # a tool call that succeeds
    b.add("turn/start", {"turn": 2})
    b.add("step/start", {"turn": 2, "step": 1})
    b.user("Read the two files")
    stopped = b.tool_round(2, 1, "call_stopped", "cancelled by the user")
    stopped["data"]["error"] = {"name": "AbortError", "code": "ABORTED"}
    b.tool_round(2, 1, "call_failed", "ENOENT: no such file", is_error=True)
    b.add("step/end", {"turn": 2, "step": 1})
    b.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    write_artifact(root, header("classified"), [b.events], "none")


def test_an_aborted_result_is_stopped_on_the_page_in_the_twin_and_for_errors_only(tmp_path: Path) -> None:
    _log(tmp_path)
    with app_client([str(tmp_path)]) as client:
        page = client.get("/sessions/classified").text
        twin = client.get("/api/sessions/classified").json()
        errors = client.get("/api/sessions/classified/search", params={"errors": "true"}).json()["matches"]
    shown = {row.key: row for row in flow_rows(page)}
    tools = [r for r in twin["rows"] if r["kind"] == "tool-call"]
    states = {r["tool"]["callId"]: (r["state"], r["error"]) for r in tools}
    assert states == {"call_1": ("ok", False), "call_stopped": ("stopped", False), "call_failed": ("error", True)}
    by_call = {r["tool"]["callId"]: shown[r["key"]] for r in tools}
    assert by_call["call_stopped"].element.select_one('[data-state="stopped"]') is not None
    assert [row.red_dot for row in by_call.values()] == [False, False, True]
    assert any(t.get("data-dot") == "stopped" for t in by_call["call_stopped"].header()), "an amber dot"
    failed = next(r for r in tools if r["tool"]["callId"] == "call_failed")
    assert [(m["anchor"], m["seq"]) for m in errors] == [(failed["anchor"], failed["seq"])]


def test_every_row_of_every_window_is_classified_alike(tmp_path: Path) -> None:
    _log(tmp_path)
    with app_client([str(tmp_path)], window_rows=4) as client:
        assert_classified_alike(client, "classified")


def assert_classified_alike(client: httpx.Client, key: str) -> tuple[int, int, int]:
    """Walks the session's windows: the rows with a red dot on the page, the rows whose twin says
    `"error": true` and the matches of *errors only* are the same rows; every row's dot and bookkeeping
    mark are its twin's. Returns how many rows report an error, how many tool calls were stopped (an
    amber dot, no error), and how many rows are bookkeeping."""
    red: list[int] = []
    flagged: list[int] = []
    stopped = bookkept = 0
    start: int | None = 0
    while start is not None:
        html = client.get(f"/sessions/{key}/rows", params={"from": start}).text
        twin = client.get(f"/api/sessions/{key}/rows", params={"from": start}).json()
        rows = flow_rows(html)
        assert [r.key for r in rows] == [r["key"] for r in twin["rows"]]
        red += [start + i for i, row in enumerate(rows) if row.red_dot]
        flagged += [start + i for i, row in enumerate(twin["rows"]) if row["error"]]
        assert [row.dot for row in rows] == [row["dot"] for row in twin["rows"]], key
        assert [row.bookkeeping for row in rows] == [row["bookkeeping"] for row in twin["rows"]], key
        bookkept += sum(1 for row in twin["rows"] if row["bookkeeping"])
        assert all(row["type"] in BOOKKEEPING_TYPES for row in twin["rows"] if row["bookkeeping"]), key
        stopped += sum(1 for row in twin["rows"] if row["state"] == "stopped" and row["kind"] == "tool-call")
        start = twin["nextFrom"]
    found = client.get(f"/api/sessions/{key}/search", params={"errors": "true"}).json()["matches"]
    assert red == flagged == [m["index"] for m in found], key
    return len(red), stopped, bookkept


def test_the_twin_of_a_row_is_declared_in_the_openapi_document(tmp_path: Path) -> None:
    _log(tmp_path)
    with app_client([str(tmp_path)]) as client:
        spec = client.get("/openapi.json").json()
        rows = client.get("/api/sessions/classified/rows").json()["rows"]
    window = spec["paths"]["/api/sessions/{key}/rows"]["get"]["responses"]["200"]["content"]["application/json"]
    assert window["schema"] == {"$ref": "#/components/schemas/WindowJson"}
    declared = spec["components"]["schemas"]["RowJson"]
    per_kind = {"tool", "command", "compaction", "retry", "stop", "context", "diagnostic", "blocks", "recallLabels"}
    assert {"kind", "anchor", "state", "error", "bookkeeping"} | per_kind <= set(declared["properties"])
    assert "extra" not in declared["properties"]
    assert all(set(row) == set(declared["properties"]) for row in rows), "every row carries exactly the declared keys"


def test_a_result_whose_error_code_is_a_number_failed(tmp_path: Path) -> None:
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Fetch the page")
    failed = b.tool_round(1, 1, "call_http", "")
    failed["data"]["error"] = {"name": "HttpError", "code": 500}
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    write_artifact(tmp_path, header("http"), [b.events], "none")
    with app_client([str(tmp_path)]) as client:
        (tool,) = [r for r in client.get("/api/sessions/http").json()["rows"] if r["kind"] == "tool-call"]
        assert_classified_alike(client, "http")
    assert (tool["state"], tool["error"], tool["tool"]["errorCode"]) == ("error", True, "500")
    assert tool["tool"]["output"] == "HttpError: 500"  # an error with no content shows `name: code` (docs/ui.md §5.3)
