"""What daily readers expect on each row (issue 14, deliverable 5), as the client renders it: copy buttons
and what each copies, the time a turn or step happened, time to first token and speed where the events
carry them, a subagent call's link to its child, a failed tool's red OUT, no IN for single-file tools, and
the JSON twin carrying the same facts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from bs4 import Tag

from tests.support.builders import LogBuilder
from tests.support.row_logs import CHILD, COMMAND, GONE, PARENT, retried_log, timed_log, untimed_log, write
from tests.support.rows import FlowRow, flow_rows, one, opened, select, text_of
from tests.support.server import app_client


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("extras")
    write(root, PARENT, timed_log())
    child = LogBuilder()
    child.turn(1, "child prompt")
    write(root, CHILD, child, parentSession=PARENT, origin="subagent", delegationDepth=1)
    write(root, "untimed", untimed_log())
    write(root, "retried", retried_log())
    with app_client([str(root)]) as client:
        yield client


@pytest.fixture(scope="module")
def page(client: httpx.Client) -> list[FlowRow]:
    return flow_rows(opened(client, client.get(f"/sessions/{PARENT}").text, f"/sessions/{PARENT}"))


@pytest.fixture(scope="module")
def twin(client: httpx.Client) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = client.get(f"/api/sessions/{PARENT}/rows").json()["rows"]
    return rows


def rows_of(page: list[FlowRow], kind: str) -> list[FlowRow]:
    return [r for r in page if r.kind == kind]


def tool_row(page: list[FlowRow], name: str) -> Tag:
    return next(r.element for r in rows_of(page, "tool-call") if select(r.element, f"[data-tool='{name}']"))


def copies(markup: Tag) -> list[tuple[str, str]]:
    """Each copy button's way of copying (`text`, `link` or `from`) and what: its text, the address it makes
    whole, or its source selector."""
    out = []
    for button in select(markup, "button[data-copy]"):
        assert button["type"] == "button"
        # its word is its name (aria-label), drawn by the stylesheet; a path button shows its path
        assert button.get("aria-label") or text_of(button) == button["data-copy-text"]
        if button.has_attr("data-copy-text"):
            out.append(("text", str(button["data-copy-text"])))
        elif button.has_attr("data-copy-link"):
            out.append(("link", str(button["data-copy-link"])))
        else:
            out.append(("from", str(button["data-copy-from"])))
    return out


def sources(row: Tag, selector: str) -> list[str]:
    """The text a `data-copy-from` button copies: what its selector finds in its row, its trailing
    whitespace dropped (static/inspect.js)."""
    return [text_of(t).rstrip() for t in select(row, selector)]


def test_message_text_is_copied_from_what_the_row_shows(page: list[FlowRow]) -> None:
    (user,) = rows_of(page, "user")
    assert copies(user.element)[0] == ("from", "[data-user-text] [data-copy-source]")
    # and its permalink, a button of its own beside the id (the id copies the id)
    anchor = one(user.element, "[data-row-message]")["href"]
    assert ("link", f"/sessions/{PARENT}{anchor}") in copies(user.element)
    assert sources(user.element, "[data-user-text] [data-copy-source]") == ["Say hello & <wave>"]
    answer = rows_of(page, "assistant-step")[0].element
    assert copies(answer.select_one(".row-actions"))[0] == ("from", "[data-copy-source]")
    assert sources(answer, "[data-copy-source]") == ["Hello, reader"]
    # a step of tool calls only has no text to copy
    calls = rows_of(page, "assistant-step")[1].element
    assert all(how != "from" for how, _ in copies(calls))


def test_tool_arguments_results_commands_paths_and_ids_have_copy_buttons(page: list[FlowRow]) -> None:
    shell = tool_row(page, "bash")
    found = copies(shell)
    assert ("from", "[data-tool-asked] [data-ask-body]") in found and ("from", "[data-tool-output]") in found
    assert ("text", COMMAND) in found, "the shell command, verbatim"
    assert text_of(one(shell, "[data-ask-body]")) == COMMAND  # its IN is the command line (docs/ui.md §5.3)
    read = tool_row(page, "read")
    # the header's path button copies the path; the result message's id has its own
    path = one(read, "[data-disclosure-row] button.path-link[data-copy]")
    assert path["data-copy-text"] == "notes.txt" and text_of(path) == "notes.txt"
    result_id = text_of(one(read, "[data-row-message]"))
    assert ("text", result_id) in copies(read)
    (command,) = rows_of(page, "command")
    assert ("text", "/permission read-only") in copies(command.element)


def test_a_raw_event_is_copied_from_its_json(client: httpx.Client, page: list[FlowRow]) -> None:
    event = next(r for r in rows_of(page, "event") if select(r.element, "[data-event-type='permission/preset']"))
    assert ("from", "[data-event-detail]") in copies(event.element)
    assert orjson.loads(text_of(one(event.element, "[data-event-detail]")))["data"] == {"preset": "read-only"}
    raw = client.get(f"/sessions/{PARENT}/events/{event.seq}").text
    assert copies(one(raw, "main")) == [("from", "[data-event-json]")]


def test_turns_and_steps_show_when_they_happened(page: list[FlowRow], twin: list[dict[str, Any]]) -> None:
    shown = {}
    for row in rows_of(page, "turn") + rows_of(page, "step") + rows_of(page, "assistant-step"):
        clock = one(row.element, "time[data-local-time]")
        shown[row.seq] = (str(clock["datetime"]), text_of(clock))
    by_seq = {r["seq"]: r for r in twin}
    # T0 is 2026-09-21 14:13:20 UTC; the UTC text is what a page without its script shows
    assert shown[0] == ("2026-09-21T14:13:20.000Z", "2026-09-21 14:13 UTC") and by_seq[0]["time"] == shown[0][0]
    assert shown[1][0] == "2026-09-21T14:13:21.000Z" and by_seq[1]["time"] == shown[1][0]
    assert len(shown) == 5  # a turn, two steps, two answers
    # a prompt shows when it was said too (docs/ui.md §5.1); the other rows do not
    (user,) = rows_of(page, "user")
    assert one(user.element, "time")["datetime"] == "2026-09-21T14:13:22.000Z"
    assert all(r["time"] is None for r in twin if r["kind"] in ("tool-call", "command", "event"))


def test_a_streamed_step_shows_time_to_first_token_and_speed(page: list[FlowRow], twin: list[dict[str, Any]]) -> None:
    streamed, calls = (r.element for r in rows_of(page, "assistant-step"))
    facts = [text_of(f) for f in select(streamed, ".row-actions .fact")]
    assert "TTFT 1.2 s" in facts and "20 tok/s" in facts
    answer = next(r for r in twin if r["kind"] == "assistant-step")
    assert answer["timing"] == {"ttftMs": 1200, "tokensPerSecond": 20.0}
    assert "TTFT 1.2 s" in answer["facts"] and "20 tok/s" in answer["facts"]
    # the tool-calling step streamed nothing the log kept: neither is shown
    assert not [f for f in select(calls, ".fact") if "TTFT" in text_of(f) or "tok/s" in text_of(f)]


def test_a_retried_step_counts_its_first_token_from_the_retry(client: httpx.Client) -> None:
    twin = client.get("/api/sessions/retried/rows").json()["rows"]
    (answer,) = [r for r in twin if r["kind"] == "assistant-step"]
    assert answer["timing"] == {"ttftMs": 300, "tokensPerSecond": None}
    assert "TTFT 300 ms" in answer["facts"] and not [f for f in answer["facts"] if "tok/s" in f]


def test_a_step_whose_events_carry_no_stream_shows_neither(client: httpx.Client) -> None:
    html = client.get("/sessions/untimed").text
    assert "TTFT" not in html and "tok/s" not in html
    twin = client.get("/api/sessions/untimed/rows").json()["rows"]
    assert all(r["timing"] is None for r in twin)


def test_a_subagent_row_links_its_child_when_it_is_loaded(
    client: httpx.Client, page: list[FlowRow], twin: list[dict[str, Any]]
) -> None:
    started = one(tool_row(page, "subagent"), "[data-child-session]")
    link = one(started, "a[data-child-session-link]")
    assert text_of(link) == CHILD and link["href"] == f"/sessions/{CHILD}"
    assert client.get(f"{link['href']}").status_code == 200
    # a child that is not loaded is named, not linked
    named = one(tool_row(page, "send_message"), "[data-child-session]")
    assert not select(named, "a") and text_of(one(named, "code")) == GONE
    by_name = {r["tool"]["name"]: r["tool"] for r in twin if r["kind"] == "tool-call"}
    assert by_name["subagent"]["childSession"] == CHILD and by_name["send_message"]["childSession"] == GONE
    assert by_name["bash"]["childSession"] is None and not select(tool_row(page, "bash"), "[data-child-session]")


def test_a_failed_tool_shows_its_out_in_error_red_and_a_single_file_tool_has_no_in(
    page: list[FlowRow], twin: list[dict[str, Any]]
) -> None:
    shell = tool_row(page, "bash")
    assert one(shell, "[data-tool]")["data-state"] == "error"
    assert "error-text" in one(shell, "pre[data-tool-output]")["class"]
    read = tool_row(page, "read")
    assert not select(read, "[data-tool-input]") and text_of(one(read, "[data-tool-output]")) == "the notes"
    assert "error-text" not in one(read, "pre[data-tool-output]")["class"]
    by_name = {r["tool"]["name"]: r for r in twin if r["kind"] == "tool-call"}
    assert by_name["read"]["tool"]["singleFile"] is True and by_name["bash"]["tool"]["singleFile"] is False
    assert [b["part"] for b in by_name["read"]["bodies"]] == ["out"]
    assert by_name["bash"]["tool"]["command"] == COMMAND


def test_the_twin_declares_the_new_facts(client: httpx.Client, twin: list[dict[str, Any]]) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    assert {"time", "timing"} <= set(schema["RowJson"]["properties"])
    assert {"singleFile", "command", "childSession"} <= set(schema["ToolJson"]["properties"])
    assert set(schema["TimingJson"]["properties"]) == {"ttftMs", "tokensPerSecond"}
    command = next(r for r in twin if r["kind"] == "command")
    assert command["command"]["line"] == "/permission read-only"


def test_the_header_counts_turns_and_steps(client: httpx.Client) -> None:
    facts = one(client.get(f"/sessions/{PARENT}").text, "[data-session-facts]")
    api = client.get(f"/api/sessions/{PARENT}").json()
    counts = {str(s["data-session-count"]): text_of(s) for s in select(facts, "[data-session-count]")}
    assert counts == {
        "events": f"{api['events']} events",
        "turns": "1 turn",
        "steps": "2 steps",
        "messages": f"{api['messages']} model-visible messages",
    }
