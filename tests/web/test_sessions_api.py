"""The HTTP interface, the app answering in process: keys, JSON twins, safety headers, language."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import orjson
import pytest

from tests.support.builders import LogBuilder, header, two_turns
from tests.support.rows import (
    FlowRow,
    attrs,
    definitions,
    flow_rows,
    one,
    opened,
    parse,
    position,
    select,
    text,
    text_of,
)
from tests.support.server import app_client


def write(path: Path, session_id: str, events: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *events]))
    return path


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    write(tmp_path / "a" / "session.jsonl", "shared-id", two_turns().events)
    write(tmp_path / "b" / "session.jsonl", "shared-id", two_turns().events)
    write(tmp_path / "c" / "session.jsonl", "only/one id", two_turns().events)
    write(tmp_path / "d" / "session.jsonl", "plain-id", two_turns().events)
    return tmp_path


@pytest.fixture
def client(logs: Path) -> Iterator[httpx.Client]:
    with app_client([str(logs)]) as client:
        yield client


def test_sessions_are_listed_with_unique_url_safe_keys(client: httpx.Client, logs: Path) -> None:
    sessions = client.get("/api/sessions").json()["sessions"]
    by_path = {Path(s["path"]).parent.name: s for s in sessions}
    assert set(by_path) == {"a", "b", "c", "d"}
    keys = [s["key"] for s in sessions]
    assert len(set(keys)) == 4
    assert all(re.fullmatch(r"[A-Za-z0-9._~-]+", k) for k in keys)
    assert by_path["d"]["key"] == "plain-id"
    assert re.fullmatch(r"shared-id~[0-9a-f]{8}", by_path["a"]["key"])
    assert by_path["a"]["key"] != by_path["b"]["key"]
    assert re.fullmatch(r"only-one-id~[0-9a-f]{8}", by_path["c"]["key"]), "readable, and unique by its digest"
    for s in sessions:
        assert s["url"] == f"/sessions/{s['key']}"
        assert client.get(s["url"]).status_code == 200
        assert client.get(f"/api{s['url']}").json()["id"] == s["id"]


def test_a_key_stays_while_its_log_grows(client: httpx.Client, logs: Path) -> None:
    before = {s["path"]: s["key"] for s in client.get("/api/sessions").json()["sessions"]}
    path = logs / "a" / "session.jsonl"
    key = before[str(path)]
    events_before = client.get(f"/api/sessions/{key}").json()["events"]
    extra = LogBuilder()
    extra.turn(3)
    offset = len(two_turns().events)
    with path.open("ab") as f:
        f.write(b"".join(orjson.dumps({**e, "seq": e["seq"] + offset}) + b"\n" for e in extra.events))
    after = {s["path"]: s["key"] for s in client.get("/api/sessions").json()["sessions"]}
    assert after == before
    grown = client.get(f"/api/sessions/{key}").json()
    assert grown["events"] == events_before + len(extra.events)
    assert grown["verdict"]["category"] == "accepted" and grown["turns"] == 3


def page_rows(html: str) -> dict[str, FlowRow]:
    """Each row on a page, by its row key."""
    rows = flow_rows(html)
    out = {row.key: row for row in rows}
    assert len(out) == len(rows), "row keys are unique"
    return out


def test_the_json_twin_carries_the_same_rows_as_the_page(client: httpx.Client) -> None:
    html = opened(client, client.get("/sessions/plain-id").text, "/sessions/plain-id")
    data = client.get("/api/sessions/plain-id").json()
    page_keys = [(row.key, row.kind) for row in flow_rows(html)]
    assert page_keys == [(r["key"], r["kind"]) for r in data["rows"]]
    assert data["verdict"]["category"] == "accepted" and data["events"] == len(two_turns().events)
    rows = page_rows(html)
    for r in data["rows"]:
        assert rows[r["key"]].anchor == r["anchor"]
    # what a tool row shows, IN and OUT and the path, is what its twin carries
    tool = next(r for r in data["rows"] if r["kind"] == "tool-call")
    card = rows[tool["key"]].element
    # a single-file tool's card has no IN (docs/ui.md §5.3): its twin still carries the arguments
    assert tool["tool"]["arguments"] == '{\n  "file_path": "a.txt"\n}' and tool["tool"]["singleFile"] is True
    assert not card.select("pre[data-tool-input]")
    assert tool["tool"]["output"] == text(card, "pre[data-tool-output][data-body]") == "alpha"
    assert tool["tool"]["path"] == one(card, "[data-disclosure-row] [data-copy-text]")["data-copy-text"] == "a.txt"
    assert text(card, "[data-disclosure-row] > .title") == tool["tool"]["title"]
    assert {b["part"]: (b["total"], b["truncated"]) for b in tool["bodies"]} == {
        "out": (5, False),
    }
    # a prompt's text, and an assistant step's Markdown as the page renders it
    user = next(r for r in data["rows"] if r["kind"] == "user")
    assert (
        user["blocks"][0]["text"]
        == text(rows[user["key"]].element, "span.bubble-text[data-body]")
        == "Read a.txt please"
    )
    step = [r for r in data["rows"] if r["kind"] == "assistant-step"][-1]
    markdown = one(rows[step["key"]].element, "div.markdown[data-body]")
    # the page shows the Markdown as the HTML its twin carries
    assert markdown.decode_contents() == parse(step["blocks"][0]["text"]).decode()
    assert [(t.name, text_of(t)) for t in markdown.find_all(True)] == [("p", "The file says alpha.")]
    # the id it links to its identity page
    step_row = rows[step["key"]].element
    assert text(step_row, "a[data-row-message]") == step["messageId"]
    identity = attrs(step_row, "a[data-identity-link]", "href")
    assert identity == [f"/sessions/plain-id/messages/{quote(step['messageId'], safe='')}"]


def broken_log(tmp_path: Path, session_id: str) -> int:
    """Two turns with `{garbage` after turn 1's end: turn 2's end follows it, so dsh refuses the
    log (committed corruption). Returns the garbage's line."""
    events = two_turns().events
    lines = [orjson.dumps(x) for x in [header(session_id), *events]]
    first_end = next(e["seq"] for e in events if e["type"] == "turn/end")
    lines.insert(first_end + 2, b"{garbage")
    path = tmp_path / session_id / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return first_end + 3


def test_a_broken_log_counts_and_shows_every_finding_and_keeps_what_follows_it(tmp_path: Path) -> None:
    line = broken_log(tmp_path, "broken")
    with app_client([str(tmp_path)]) as client:
        html = client.get("/sessions/broken").text
        facts = client.get("/sessions/broken/facts").text
        twin = client.get("/api/sessions/broken").json()
        outside = [r for r in twin["rows"] if r["kind"] != "diagnostic" and r["outside"] is not None]
        event = client.get(f"/api/sessions/broken/events/{outside[0]['seq']}").json()
    assert twin["verdict"]["category"] == "refused"
    # the header counts the findings the page shows, one row each, in place
    findings = attrs(html, "[data-diagnostic-code]", "data-diagnostic-code")
    assert findings == ["defect", "committed-corruption"] == [d["code"] for d in twin["diagnostics"]]
    assert [row.kind for row in flow_rows(html) if select(row.element, "[data-diagnostic-code]")] == ["diagnostic"] * 2
    assert attrs(facts, "[data-diagnostic-count]", "data-diagnostic-count") == ["2"]
    assert [r["diagnostic"]["code"] for r in twin["rows"] if r["kind"] == "diagnostic"] == findings
    assert "Dropped by dsh" not in html and 'data-diagnostic="dropped"' not in html
    # turn 2, after the garbage, reads as it was written, marked outside what dsh would load
    assert {"user", "assistant-step", "tool-call"} <= {r["kind"] for r in outside}
    assert all(f"line {line}" in r["outside"] and "refuses" in r["outside"] for r in outside)
    rows = page_rows(html)
    prompt = next(r for r in outside if r["kind"] == "user")
    assert prompt["key"].startswith("outside-") and "And again" in text_of(rows[prompt["key"]].element)
    note = one(html, "[data-outside-note]")
    assert f"line {line}" in text_of(note)
    assert position(note) < position(rows[outside[0]["key"]].element)
    assert event["outside"] == outside[0]["outside"] and event["type"] == outside[0]["type"]


def test_a_repeated_message_id_anchors_its_later_row_with_a_number_and_warns(tmp_path: Path) -> None:
    b = two_turns()
    first, second = [e for e in b.events if e["type"] == "user/message"]
    second["data"]["id"] = first["data"]["id"]
    write(tmp_path / "s" / "session.jsonl", "repeat", b.events)
    anchor = f"msg-{first['data']['id']}~2"
    with app_client([str(tmp_path)]) as client:
        html = client.get("/sessions/repeat").text
        twin = client.get("/api/sessions/repeat").json()
        located = client.get("/api/sessions/repeat/locate", params={"anchor": anchor}).json()
    anchors = {row.anchor: row.seq for row in flow_rows(html)}
    assert anchors[anchor] == second["seq"] and anchors[f"msg-{first['data']['id']}"] == first["seq"]
    assert located["seq"] == second["seq"]
    (warning,) = [d for d in twin["diagnostics"] if d["code"] == "repeated-message-id"]
    assert anchor in warning["message"] and warning["severity"] == "warning"
    row = next(i for i, r in enumerate(twin["rows"]) if r["anchor"] == anchor)
    assert twin["rows"][row - 1]["kind"] == "diagnostic"
    assert attrs(html, "[data-diagnostic-code]", "data-diagnostic-code") == ["repeated-message-id"]


def test_every_page_carries_the_csp(client: httpx.Client) -> None:
    for path in ("/", "/sessions/plain-id", "/api/sessions", "/static/inspect.css"):
        response = client.get(path)
        assert response.headers["content-security-policy"] == (
            "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'"
        ), path


def test_a_foreign_host_header_is_refused(client: httpx.Client) -> None:
    response = client.get("/api/sessions", headers={"Host": "evil.example:80"})
    assert response.status_code == 421 and "--allow-host NAME" in response.text  # how to answer to it
    assert client.get("/api/sessions", headers={"Host": "localhost"}).status_code == 200


def test_unknown_keys_and_non_context_seqs_are_404(client: httpx.Client) -> None:
    assert client.get("/sessions/nope").status_code == 404
    assert client.get("/api/sessions/..%2F..%2Fetc").status_code == 404
    assert client.get("/sessions/plain-id/contexts/0").status_code == 404
    assert client.get("/sessions/plain-id/contexts/99999").status_code == 404


def test_context_bodies_have_a_json_twin(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    ctx = b.user(
        "<system-reminder>hi</system-reminder>",
        {
            "kind": "plugin",
            "plugin": "p",
            "form": "snapshot",
            "sections": [{"name": "sandbox:policy", "text": "workspace-write"}],
        },
    )
    write(tmp_path / "s" / "session.jsonl", "ctx", b.events)
    with app_client([str(tmp_path)]) as client:
        html = client.get(f"/sessions/ctx/contexts/{ctx['seq']}").text
        data = client.get(f"/api/sessions/ctx/contexts/{ctx['seq']}").json()
    assert attrs(html, "[data-context-form]", "data-context-form") == ["snapshot"]
    assert definitions(one(html, "[data-context-sections]")) == [("sandbox:policy", "workspace-write")]
    assert data["context"]["renderedForm"] == "snapshot"
    assert data["body"]["sections"][0]["name"] == "sandbox:policy"


def test_chinese_is_served_when_the_browser_prefers_it(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    b.user("x", {"kind": "plugin", "plugin": "fixture"})
    write(tmp_path / "s" / "session.jsonl", "zh", b.events)
    with app_client([str(tmp_path)]) as client:
        zh = client.get("/sessions/zh", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}).text
        en = client.get("/sessions/zh", headers={"Accept-Language": "en-US,zh;q=0.5"}).text
    assert "上下文注入" in zh and one(zh, "html")["lang"] == "zh-CN" and one(en, "html")["lang"] == "en"
    assert "Context injection" in en and "上下文注入" not in en


def test_a_lone_surrogate_in_a_log_renders_as_a_replacement_character(tmp_path: Path) -> None:
    events = two_turns().events
    path = tmp_path / "s" / "session.jsonl"
    path.parent.mkdir()
    lines = [orjson.dumps(x) for x in [header("surrogate"), *events]]
    lines[3] = lines[3].replace(b"Read a.txt please", b"Read \\ud800 please")
    path.write_bytes(b"\n".join(lines) + b"\n")
    with app_client([str(tmp_path)]) as client:
        page = client.get("/sessions/surrogate")
        twin = client.get("/api/sessions/surrogate")
        event = client.get("/sessions/surrogate/events/2")
        facts = client.get("/sessions/surrogate/facts")
    assert page.status_code == twin.status_code == event.status_code == 200
    assert "Read \ufffd please" in page.text
    assert twin.json()["verdict"]["category"] == "accepted"
    assert any(d["code"] == "invalid-utf8" and d["line"] == 4 for d in twin.json()["diagnostics"])
    # the warning is a row of its own, counted, right before the prompt it is about
    assert attrs(page.text, "[data-diagnostic-code]", "data-diagnostic-code") == ["invalid-utf8"]
    assert attrs(facts.text, "[data-diagnostic-count]", "data-diagnostic-count") == ["1"]
    rows: list[dict[str, Any]] = twin.json()["rows"]
    i = next(i for i, r in enumerate(rows) if r["kind"] == "diagnostic")
    assert rows[i]["diagnostic"]["severity"] == "warning" and (rows[i + 1]["kind"], rows[i + 1]["seq"]) == ("user", 2)


def test_counts_read_with_their_thousands_grouped_in_the_header(tmp_path: Path) -> None:
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Summarize the repository")
    usage = {"inputTokens": 46_240_000, "outputTokens": 1_234, "cacheReadTokens": 5_000_000}
    b.assistant(1, 1, [{"type": "text", "text": "Done."}], usage=usage)
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    (tmp_path / "big.jsonl").write_bytes(b"\n".join(orjson.dumps(e) for e in [header("big"), *b.events]) + b"\n")
    with app_client([str(tmp_path)]) as client:
        facts = client.get("/sessions/big/facts").text
        budget = client.get("/sessions/big/steps").text
    shown = text(facts, "[data-session-usage]")
    assert "46,240,000" in shown and "5,000,000" in shown and "1,234" in shown, shown
    assert "46240000" not in shown
    assert "51,240,000" in text_of(one(budget, '[data-step-row="1.1"]'))  # input and cache read, billed as context
