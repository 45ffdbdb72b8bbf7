"""Model views, identity pages and the context budget over HTTP, with their JSON twins."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from bs4 import Tag
from dsh_inspect.web.render import render_path

from tests.support.builders import PROVIDER, LogBuilder
from tests.support.request_logs import compaction_between_calls, pruned_result, steering, write_log
from tests.support.rows import attributes, attrs, flow_rows, one, opened, position, select, text, texts
from tests.support.server import app_client

ODD_ID = 'odd/id #1?<b>&"'


def odd_id_log() -> LogBuilder:
    """A prompt whose id needs escaping everywhere: in paths, attributes and text."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.add(
        "user/message",
        {
            "id": ODD_ID,
            "role": "user",
            "content": [{"type": "text", "text": "<script>x</script>"}],
            "source": {"kind": "user"},
        },
        surfaceOp="append",
    )
    b.add("request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"})
    b.assistant(
        1,
        1,
        [
            {"type": "reasoning", "text": "thinking"},
            {"type": "text", "text": "ok"},
            {"type": "tool-call", "id": "call_9", "name": "read", "arguments": '{"file_path":"a"}'},
        ],
    )
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return b


def replayed_step_log() -> LogBuilder:
    """Turn 1 step 1 logged twice (the step index keys the second `1.1~2`; the reader warns that
    turn 1 does not follow turn 1), an injected context, and a `/compact` whose marker stands at
    its command (docs/format.md §5.6)."""
    b = LogBuilder()
    for answer in ("First answer.", "Second answer."):
        b.add("turn/start", {"turn": 1})
        b.add("step/start", {"turn": 1, "step": 1})
        b.user(f"Say: {answer}")
        b.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial"})
        b.assistant(1, 1, [{"type": "text", "text": answer}])
        b.add("step/end", {"turn": 1, "step": 1})
        b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    b.user("Short injected context.", {"kind": "plugin", "plugin": "fixture"})
    surface = [e["seq"] for e in b.events if "surfaceOp" in e]
    b.add("command/run", {"commandId": "cmd-1", "name": "compact", "source": {"kind": "user"}})
    start = b.add("compaction/start", {"compactionId": "cmp-1", "sourceCommandId": "cmd-1", "turn": None})["seq"]
    summary = b.add(
        "compaction/summary",
        {
            "compactionId": "cmp-1",
            "sourceCommandId": "cmd-1",
            "summary": [{"type": "text", "text": "Said twice."}],
            "shadowedRange": {"start": surface[0], "end": surface[-1]},
            "shadowedSeqs": surface,
            "shadowedTokenCount": 30,
            **PROVIDER,
        },
    )["seq"]
    checkpoint = "<context_checkpoint>Said twice.</context_checkpoint>"
    b.add(
        "user/message",
        {
            "id": "checkpoint-manual",
            "role": "user",
            "content": [{"type": "text", "text": checkpoint}],
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": "cmp-1", "sourceCommandId": "cmd-1"},
        },
        surfaceOp={"op": "replace", "start": surface[0], "end": surface[-1]},
        sourceEventSeqs=[start, summary, *surface],
    )
    b.add("compaction/end", {"compactionId": "cmp-1", "sourceCommandId": "cmd-1", "turn": None})
    b.add("command/done", {"commandId": "cmd-1", "kind": "success", "text": f"Compacted {len(surface)} history items"})
    return b


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logs")
    write_log(root / "compaction" / "session.jsonl", compaction_between_calls().events, "compaction")
    write_log(root / "pruned" / "session.jsonl", pruned_result().events, "pruned")
    write_log(root / "steering" / "session.jsonl", steering()[0].events, "steering")
    write_log(root / "odd" / "session.jsonl", odd_id_log().events, "odd")
    write_log(root / "replayed" / "session.jsonl", replayed_step_log().events, "replayed")
    return root


@pytest.fixture(scope="module")
def client(logs: Path) -> Iterator[httpx.Client]:
    with app_client([str(logs)]) as client:
        yield client


def get(client: httpx.Client, path: str, **headers: str) -> httpx.Response:
    response = client.get(path, headers=headers)
    assert response.status_code == 200, (path, response.status_code, response.text[:500])
    return response


def calls_on_page(html: str) -> list[tuple[str, list[str]]]:
    """Each call section's outcome and the message ids its list shows, in order."""
    return [
        (str(section["data-outcome"]), attrs(section, "ol.mv-messages > li.mv-message", "data-message-id"))
        for section in select(html, "section[data-calls] > section.mv-call")
    ]


def test_the_model_view_lists_each_call_as_its_json_twin_does(client: httpx.Client) -> None:
    html = get(client, "/sessions/compaction/steps/2.1").text
    data = get(client, "/api/sessions/compaction/steps/2.1").json()
    assert [(c["outcome"]["kind"], [m["id"] for m in c["messages"]]) for c in data["calls"]] == calls_on_page(html)
    failed, answered = data["calls"]
    assert failed["outcome"]["failure"]["code"] == "CONTEXT_WINDOW_EXCEEDED" and not failed["answered"]
    assert answered["answered"] and answered["requestAt"] == answered["chunks"]["first"] - 1
    assert answered["messages"][0]["role"] == "user" and answered["messages"][0]["renderedForm"] == "opaque"
    (replace,) = answered["diff"]["replaced"]
    assert replace["kind"] == "compaction" and replace["range"] == {"start": 2, "end": 9}
    assert replace["shadowedTokenCount"] == 420
    # the diff at the top of the page is the answered call's: the compaction and its shadowed ids, linked
    calls = one(html, "section[data-calls]")
    (top,) = [diff for diff in select(html, "section[data-request-diff]") if position(diff) < position(calls)]
    assert attrs(top, "li[data-diff-replaced]", "data-kind") == ["compaction"]
    links = attrs(top, "li[data-diff-replaced] a[data-identity-link]", "href")
    for shadowed in replace["shadowed"]:
        assert f"/sessions/compaction/messages/{quote(shadowed['id'], safe='')}" in links
    assert data["step"] == {"key": "2.1", "turn": 2, "step": 1, "start": 13, "end": 27}
    assert data["previousStep"] == "1.2" and data["nextStep"] is None


def test_the_model_view_shows_the_header_and_state_in_force(client: httpx.Client) -> None:
    html = get(client, "/sessions/compaction/steps/1.1").text
    data = get(client, "/api/sessions/compaction/steps/1.1").json()
    (call,) = data["calls"]
    assert call["header"] == {
        "seq": 3,
        "reason": "initial",
        "config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"},
    }
    assert call["state"]["planMode"] == {"value": False, "seq": None, "detail": None}
    assert call["diff"]["previous"] is None and call["diff"]["header"][0]["first"]
    header = one(html, "section[data-request-header]")
    assert text(header, "dd[data-provider]") == "deepseek-official"
    assert text(header, "dd[data-model]") == "deepseek-v4-flash"
    assert "planMode" in attrs(html, "section[data-session-state] [data-setting]", "data-setting")
    assert select(html, "section[data-request-diff] [data-diff-first]")


def test_a_message_body_opens_as_the_model_read_it(client: httpx.Client) -> None:
    data = get(client, "/api/sessions/odd/steps/1.1").json()
    (call,) = data["calls"]
    (prompt,) = call["messages"]
    assert prompt["id"] == ODD_ID
    body = get(client, f"/sessions/odd/message-bodies/{call['messageSeq']}").text
    assert {"reasoning", "tool-call"} <= set(attrs(body, "[data-message-body] [data-part]", "data-part"))
    assert text(body, '[data-part="tool-call"] > pre') == '{"file_path":"a"}'
    prompt_body = get(client, f"/sessions/odd/message-bodies/{prompt['seq']}").text
    # the prompt shows as text, its tags escaped
    assert texts(prompt_body, '[data-message-body] [data-part="text"]') == ["<script>x</script>"]
    assert not select(prompt_body, "script") and "<script>x" not in prompt_body
    twin = get(client, f"/api/sessions/odd/message-bodies/{prompt['seq']}").json()
    assert twin["message"]["id"] == ODD_ID and (twin["role"], twin["shownAs"]) == ("user", "user")


def test_an_id_that_needs_escaping_has_its_identity_page(client: httpx.Client) -> None:
    path = f"/sessions/odd/messages/{quote(ODD_ID, safe='')}"
    html = get(client, path).text
    data = get(client, "/api" + path).json()
    assert data["id"] == ODD_ID and [c["role"] for c in data["carriers"]] == ["message"]
    # the id shows as text, escaped, and stays verbatim in the page's attributes
    assert "<b>" not in html and not select(html, "b")
    assert one(html, "article[data-identity]")["data-message-id"] == ODD_ID
    assert ODD_ID in text(html, "article[data-identity] > h1")
    step = get(client, "/sessions/odd/steps/1.1").text
    assert path in attrs(step, "a[data-identity-link]", "href")


def test_a_pruned_result_shows_both_contents_in_order(client: httpx.Client) -> None:
    data = get(client, "/api/sessions/pruned/steps/2.1").json()
    pruned = next(m for m in data["calls"][0]["messages"] if m["replaced"])
    path = f"/sessions/pruned/messages/{quote(pruned['id'], safe='')}"
    html = get(client, path).text
    identity = get(client, "/api" + path).json()
    original, replaced = identity["carriers"]
    assert (original["seq"], original["shadowedBy"]) == (6, replaced["seq"])
    assert replaced["replacement"]["kind"] == "prune" and replaced["keepsIdOf"] == [6]
    shown = [(int(str(c["data-seq"])), texts(c, "pre")) for c in select(html, "ol.carriers > li.carrier")]
    assert shown == [(original["seq"], ["alpha"]), (replaced["seq"], ["[tool result pruned]"])]
    assert [r["step"] for r in identity["requests"]] == ["1.2", "2.1"]


def test_a_claimed_steering_message_links_its_splice(client: httpx.Client) -> None:
    _, steer_id, _ = steering()
    path = f"/sessions/steering/messages/{quote(steer_id, safe='')}"
    html = get(client, path).text
    identity = get(client, "/api" + path).json()
    splice, event = identity["carriers"]
    assert (splice["role"], splice["seq"], splice["fate"], splice["takenAt"]) == ("inbox", 7, "claimed", 9)
    assert event["role"] == "message" and event["seq"] == 11
    assert attrs(html, '[data-carrier="inbox"] a[data-splice-link]', "href") == ["/sessions/steering#seq-7"]
    assert attrs(html, '[data-carrier="inbox"] a[data-taken-link]', "href") == ["/sessions/steering#seq-9"]
    (transcript,) = attrs(html, '[data-carrier="message"] a[data-transcript-link]', "href")
    assert transcript.startswith("/sessions/steering#msg-")


def test_the_budget_chart_marks_the_compaction(client: httpx.Client) -> None:
    html = get(client, "/sessions/compaction/steps").text
    data = get(client, "/api/sessions/compaction/steps").json()
    bars = attrs(html, "[data-budget-chart] svg a.budget-bar[data-bar]", "data-bar")
    assert [s["key"] for s in data["steps"]] == bars == ["1.1", "1.2", "2.1"]
    assert data["steps"][2]["usage"]["contextTokens"] == 40 and data["steps"][2]["calls"] == 2
    (shrink,) = data["shrinks"]
    assert shrink["kind"] == "compaction" and shrink["beforeStep"] == 2
    assert len(select(html, "[data-budget-chart] svg [data-marker]")) == 1
    assert len(select(html, "[data-marker]")) == 1
    assert not [name for _, name, _ in attributes(html) if name == "style"]  # the CSP allows no inline styles
    assert attrs(html, "table[data-budget-table] tr[data-shrink]", "data-shrink") == ["compaction"]


def test_transcript_rows_link_to_the_model_view_and_identity_pages(client: httpx.Client) -> None:
    html = get(client, "/sessions/compaction").text
    rows = [row.element for row in flow_rows(html)]
    assert "/sessions/compaction/steps/1.1" in [h for row in rows for h in attrs(row, "a[data-step-link]", "href")]
    identities = [h for row in rows for h in attrs(row, "a[data-identity-link]", "href")]
    assert identities and all(h.startswith("/sessions/compaction/messages/") for h in identities)
    assert attrs(html, "[data-session-facts] a[data-budget-link]", "href") == ["/sessions/compaction/steps"]


def rows_of(html: str, kind: str) -> list[Tag]:
    """The transcript's rows of one kind (a tool row's opening body included), in order."""
    return [row.element for row in flow_rows(html) if row.kind == kind]


def identity_link(row: Tag) -> tuple[str, str]:
    """The row's identity link and the id it shows beside it."""
    links, shown = attrs(row, "a[data-identity-link]", "href"), texts(row, "a[data-row-message]")
    assert links and shown, str(row)[:400]
    return links[0], shown[0]


def resolves_to(client: httpx.Client, path: str, message_id: str, seq: int) -> None:
    """The identity page answers and is the message's: its twin lists the event `seq` carrying it."""
    assert get(client, path).status_code == 200
    identity = get(client, "/api" + path).json()
    assert identity["id"] == message_id and seq in [c["seq"] for c in identity["carriers"]]


def test_tool_rows_link_the_identity_of_their_result(client: httpx.Client) -> None:
    events = compaction_between_calls().events
    result = next(e for e in events if e["type"] == "tool/result")
    (tool,) = rows_of(opened(client, get(client, "/sessions/compaction").text, "/sessions/compaction"), "tool-call")
    path, shown = identity_link(tool)
    result_id = result["data"]["message"]["id"]
    assert shown == result_id and path == f"/sessions/compaction/messages/{quote(result_id, safe='')}"
    resolves_to(client, path, result_id, result["seq"])
    twin = get(client, "/api/sessions/compaction/rows").json()["rows"]
    assert next(r for r in twin if r["kind"] == "tool-call")["tool"]["resultMessageId"] == result_id


def test_a_tool_result_and_a_manual_compact_checkpoint_have_their_message_anchors(client: httpx.Client) -> None:
    result = next(e for e in compaction_between_calls().events if e["type"] == "tool/result")
    result_id = result["data"]["message"]["id"]
    for key, message_id, kind in (
        ("compaction", result_id, "tool-call"),
        ("replayed", "checkpoint-manual", "manual-compaction"),
    ):
        anchor = f"msg-{message_id}"
        located = get(client, f"/api/sessions/{key}/locate?anchor={quote(anchor)}").json()
        row = get(client, f"/api/sessions/{key}/rows?from={located['index']}").json()["rows"][0]
        assert (row["kind"], row["anchor"]) == (kind, anchor)
        assert anchor in [r.anchor for r in flow_rows(get(client, f"/sessions/{key}").text) if r.kind == kind]
    # the result's identity page leads back to that anchor, not to the call's seq
    identity = get(client, f"/sessions/compaction/messages/{quote(result_id, safe='')}").text
    back = f"/sessions/compaction#{quote(f'msg-{result_id}', safe='')}"
    assert attrs(identity, "nav a[data-back-to-transcript]", "href") == [back]


def test_context_rows_link_their_identity_outside_the_header(client: httpx.Client) -> None:
    events = replayed_step_log().events
    context = next(e for e in events if e["type"] == "user/message" and e["data"]["source"]["kind"] == "plugin")
    (row,) = rows_of(get(client, "/sessions/replayed").text, "context")
    path, shown = identity_link(row)
    assert shown == context["data"]["id"]
    resolves_to(client, path, context["data"]["id"], context["seq"])
    # the header (the accessible name docs/ui.md §6 fixes) holds none of it: the links follow the body's slot
    slot = one(row, "[data-disclosure-slot]")
    holding = [id(parent) for parent in slot.parents]
    header = [t for t in select(row, "*") if position(t) < position(slot) and id(t) not in holding]
    after = [t for t in select(row, "*") if position(t) > position(slot)]
    assert header and not [t for t in header if t.has_attr("data-identity-link")]
    assert [t for t in after if t.has_attr("data-row-meta") and select(t, "a[data-identity-link]")]


def test_compaction_markers_link_their_checkpoint(client: httpx.Client) -> None:
    checkpoint = next(e for e in compaction_between_calls().events if "compactionId" in e["data"].get("source", {}))
    (marker,) = rows_of(get(client, "/sessions/compaction").text, "compaction")
    path, shown = identity_link(marker)
    assert shown == checkpoint["data"]["id"]
    resolves_to(client, path, checkpoint["data"]["id"], checkpoint["seq"])
    # a /compact command's marker anchors at its command, and still names the checkpoint it made
    (manual,) = rows_of(get(client, "/sessions/replayed").text, "manual-compaction")
    path, shown = identity_link(manual)
    assert shown == "checkpoint-manual" and path == "/sessions/replayed/messages/checkpoint-manual"
    seq = next(e["seq"] for e in replayed_step_log().events if e["data"].get("id") == "checkpoint-manual")
    resolves_to(client, path, "checkpoint-manual", seq)


def test_a_replayed_turn_and_step_links_its_own_model_view(client: httpx.Client) -> None:
    steps = [
        one(row, "a[data-step-link]")["href"]
        for row in rows_of(get(client, "/sessions/replayed").text, "assistant-step")
    ]
    assert steps == ["/sessions/replayed/steps/1.1", "/sessions/replayed/steps/1.1~2"]
    second = get(client, "/api/sessions/replayed/steps/1.1~2").json()
    assert second["step"]["key"] == "1.1~2"
    answer = next(
        e
        for e in replayed_step_log().events
        if e["type"] == "assistant/message" and e["data"]["message"]["content"][0]["text"] == "Second answer."
    )
    assert second["calls"][-1]["messageSeq"] == answer["seq"]
    rows = get(client, "/api/sessions/replayed/rows").json()["rows"]
    assert [r["step"] for r in rows if r["kind"] in ("step", "assistant-step")] == ["1.1", "1.1", "1.1~2", "1.1~2"]


@pytest.mark.parametrize("name", ["compaction", "replayed"])
def test_the_one_file_export_keeps_the_ids_but_links_no_server_page(
    client: httpx.Client, logs: Path, name: str
) -> None:
    served = opened(client, get(client, f"/sessions/{name}").text, f"/sessions/{name}")
    exported = render_path(str(logs / name / "session.jsonl"))
    assert select(served, "a[data-identity-link]") and select(served, "a[data-step-link]")
    hrefs = [value for _, attr, value in attributes(exported) if attr.endswith("href")]
    assert hrefs and not [h for h in hrefs if "/steps" in h or "/messages/" in h]
    shown = texts(served, "a[data-row-message]")
    assert shown and shown == texts(exported, "a[data-row-message]")


def test_unknown_steps_and_ids_are_404_and_chinese_is_served(client: httpx.Client) -> None:
    assert client.get("/sessions/compaction/steps/9.9").status_code == 404
    assert client.get("/sessions/compaction/steps/latest").status_code == 404
    assert client.get("/api/sessions/compaction/messages/nope").status_code == 404
    assert client.get("/sessions/compaction/message-bodies/0").status_code == 404
    zh = get(client, "/sessions/compaction/steps/2.1", **{"Accept-Language": "zh-CN,zh;q=0.9"}).text
    assert "模型读到的内容" in zh and "自上一次请求以来" in zh
