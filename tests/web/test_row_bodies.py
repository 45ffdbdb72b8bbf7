"""Row bodies capped to the `body_cap` setting with "Show all" on demand; raw-event links, permalinks,
Chinese wording, a step's usage and cancelled retries, on logs the tests build."""

from __future__ import annotations

from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson
import pytest
from bs4 import Tag

from tests.support.builders import LogBuilder, header
from tests.support.rows import attributes, attrs, flow_rows, one, opened, select, text_of, texts
from tests.support.server import app_client

CAP = 100
# Past the cap in every body, and on a line of its own, so that no row's one-line header shows it.
TAIL = "\n<script>alert(1)</script> the end"
RETRY = {
    "provider": "p",
    "mode": "normal",
    "policyKey": "k",
    "retry": 1,
    "maxRetries": 3,
    "delayMs": 1500,
    "failure": {"message": "rate limited", "code": "RATE_LIMIT"},
}
IMAGE = {
    "type": "image",
    "attachment": {
        "attachmentId": "sha256:" + "0" * 64,
        "mediaType": "image/png",
        "width": 1,
        "height": 1,
        "name": "dot.png",
    },
}


def long(mark: str) -> str:
    return mark * 150 + TAIL


def capped_log() -> LogBuilder:
    """One of each body a row shows, each longer than CAP units."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user(long("U"))
    b.add("session/title", {"title": long("T"), "messageSeqs": [2], "source": {"kind": "user"}})
    b.assistant(
        1,
        1,
        [
            {"type": "reasoning", "text": long("R")},
            {"type": "text", "text": long("M")},
            {"type": "mystery", "payload": long("J")},
            {"type": "tool-call", "id": "call_1", "name": "read", "arguments": "{}"},
        ],
    )
    b.tool_round(1, 1, "call_1", long("O"))
    call = next(e for e in b.events if e["type"] == "tool/call")
    call["data"]["name"] = "grep"  # not a single-file tool: its card has an IN section (docs/ui.md §5.3)
    call["data"]["arguments"] = orjson.dumps({"file_path": long("A")}).decode()
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    b.add("command/run", {"commandId": "cmd-1", "name": "status", "args": "", "source": {"kind": "user"}})
    b.add("command/done", {"commandId": "cmd-1", "kind": "success", "text": "first line\n" + long("C")})
    # a failed attempt's stream under its retry, then a stream no message took
    b.add("turn/start", {"turn": 2})
    b.add("step/start", {"turn": 2, "step": 1})
    b.add("assistant/chunk", {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": long("F")}})
    b.add("llm/retry", {"retryId": "r1", "turn": 2, "step": 1, **RETRY})
    b.add("llm/retry-started", {"retryId": "r1", "turn": 2, "step": 1, "retry": 1})
    b.add("assistant/chunk", {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": long("P")}})
    b.add("step/end", {"turn": 2, "step": 1})
    b.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    return b


def later(b: LogBuilder, event: dict[str, Any], ms: int) -> None:
    """`event` and everything after it happen `ms` later."""
    for e in b.events[event["seq"] :]:
        e["time"] += ms


def eventful_log() -> LogBuilder:
    b = LogBuilder()
    # turn 1: a model call fails, a retry is announced, and the turn fails before the retry starts
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("go")
    b.add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "par"}})
    b.add("llm/retry", {"retryId": "r1", "turn": 1, "step": 1, **RETRY})
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "error", "error": {"message": "boom", "code": "E_BOOM"}}})
    # turn 2: an image, a message whose id needs encoding in a URL, a tool call with a hook and an
    # approval, a partial stream, and a step that stopped at the token limit with only its usage
    b.add("turn/start", {"turn": 2})
    b.add("step/start", {"turn": 2, "step": 1})
    b.user("look")["data"]["content"].append(IMAGE)
    b.add(
        "user/message",
        {"id": "odd id#1", "role": "user", "content": [{"type": "text", "text": "odd"}], "source": {"kind": "user"}},
        surfaceOp="append",
    )
    b.assistant(2, 1, [{"type": "tool-call", "id": "call_2", "name": "read", "arguments": '{"file_path": "a.txt"}'}])
    b.tool_round(2, 1, "call_2", "alpha")
    b.add("hook/invoked", {"turn": 2, "point": "PreToolUse", "dialect": "claude-code", "handlerId": "h1"})
    b.add("hook/result", {"turn": 2, "point": "PreToolUse", "handlerId": "h1", "decision": "pass", "durationMs": 3})
    b.add("approval/asked", {"id": "ap1", "toolName": "read", "callId": "call_2", "reason": "outside the workspace"})
    b.add("approval/decided", {"id": "ap1", "outcome": "allowed-once"})
    later(b, b.add("step/end", {"turn": 2, "step": 1}), 2_500)
    b.add("step/start", {"turn": 2, "step": 2})
    b.add("assistant/chunk", {"turn": 2, "step": 2, "chunk": {"type": "text-delta", "index": 0, "text": "half"}})
    b.add("step/end", {"turn": 2, "step": 2})
    b.add("step/start", {"turn": 2, "step": 3})
    b.assistant(2, 3, [], usage={"inputTokens": 10, "outputTokens": 4096})
    b.add("step/end", {"turn": 2, "step": 3})
    later(b, b.add("turn/end", {"turn": 2, "reason": {"kind": "max-tokens"}}), 90_000)
    # a command whose outcome is one line: its row cannot open
    b.add("command/run", {"commandId": "cmd-2", "name": "permission", "args": " read-only", "source": {"kind": "user"}})
    b.add("command/done", {"commandId": "cmd-2", "kind": "success", "text": "permission preset read-only"})
    # turn 3 is open when the log ends: its retry never starts either
    b.add("turn/start", {"turn": 3})
    b.add("step/start", {"turn": 3, "step": 1})
    b.user("again")
    b.add("llm/retry", {"retryId": "r2", "turn": 3, "step": 1, **RETRY})
    return b


def write(root: Path, name: str, b: LogBuilder) -> None:
    path = root / name / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(name), *b.events]))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("bodies")
    write(root, "capped", capped_log())
    write(root, "eventful", eventful_log())
    with app_client([str(root)], body_cap=CAP) as client:
        yield client


def page_html(client: httpx.Client, key: str, **headers: str) -> str:
    """The session's page with every row opened."""
    return opened(client, client.get(f"/sessions/{key}", headers=headers).text, f"/sessions/{key}", headers)


def rows(client: httpx.Client, key: str) -> list[dict[str, Any]]:
    return client.get(f"/api/sessions/{key}/rows").json()["rows"]


def flow(html: str) -> Tag:
    """The page's transcript: its rows, without the page around them."""
    return one(html, "[data-chat-flow]")


def show_all(transcript: Tag) -> set[tuple[int, str]]:
    """Each "Show all" button's row seq and body part: what it fetches, into the body it sits in."""
    out = set()
    for button in select(transcript, "button[data-show-all]"):
        assert button["type"] == "button" and "show-all" in button["class"] and text_of(button) == "Show all"
        assert button.find_parent(attrs={"data-body": True}) is not None, "it sits in the body it fetches"
        url = urlsplit(str(button["hx-get"]))
        prefix, seq = url.path.rsplit("/", 1)
        (part,) = parse_qs(url.query)["part"]
        assert prefix == "/sessions/capped/bodies" and seq.isdigit(), url
        out.add((int(seq), part))
    return out


def test_every_row_body_is_capped_and_offers_the_rest(client: httpx.Client) -> None:
    html = flow(page_html(client, "capped"))
    shown = show_all(html)
    by_kind = {r["kind"]: r["seq"] for r in rows(client, "capped")}
    assert shown >= {
        (by_kind["user"], "block-0"),
        (by_kind["assistant-step"], "block-0"),
        (by_kind["assistant-step"], "block-1"),  # Think, Markdown
        (by_kind["assistant-step"], "block-2"),  # the unknown block's JSON
        (by_kind["tool-call"], "in"),
        (by_kind["tool-call"], "out"),
        (by_kind["command"], "detail"),
        (by_kind["event"], "detail"),
        (by_kind["model-retry"], "streamed"),
        (by_kind["partial-stream"], "detail"),
    }
    assert "alert(1)" not in str(html) and "the end" not in str(html)
    footers = [t for t in texts(html, "[data-body] [data-truncated]") if t.startswith("… truncated, ")]
    assert len(footers) >= len(shown)


@pytest.mark.parametrize(
    ("kind", "part", "mark"),
    [
        ("user", "block-0", "U"),
        ("assistant-step", "block-0", "R"),
        ("tool-call", "in", "A"),
        ("tool-call", "out", "O"),
        ("command", "detail", "C"),
        ("model-retry", "streamed", "F"),
        ("partial-stream", "detail", "P"),
    ],
)
def test_show_all_answers_the_whole_body_escaped(client: httpx.Client, kind: str, part: str, mark: str) -> None:
    seq = next(r["seq"] for r in rows(client, "capped") if r["kind"] == kind)
    fragment = client.get(f"/sessions/capped/bodies/{seq}", params={"part": part})
    assert fragment.status_code == 200
    assert mark * 150 in fragment.text and "&lt;script&gt;alert(1)&lt;/script&gt; the end" in fragment.text
    assert "<script>" not in fragment.text and "Show all" not in fragment.text
    twin = client.get(f"/api/sessions/capped/bodies/{seq}", params={"part": part}).json()
    assert twin["part"] == part and twin["text"].endswith(("the end", 'the end"\n}'))
    assert twin["length"] == len(twin["text"])


def test_show_all_renders_markdown_sanitized(client: httpx.Client) -> None:
    seq = next(r["seq"] for r in rows(client, "capped") if r["kind"] == "assistant-step")
    fragment = client.get(f"/sessions/capped/bodies/{seq}", params={"part": "block-1"}).text
    assert fragment.startswith("<p>") and "M" * 150 in fragment and "&lt;script&gt;" in fragment
    assert "<script>" not in fragment


def test_an_unknown_body_is_not_found(client: httpx.Client) -> None:
    seq = next(r["seq"] for r in rows(client, "capped") if r["kind"] == "tool-call")
    assert client.get(f"/sessions/capped/bodies/{seq}", params={"part": "nope"}).status_code == 404
    assert client.get("/sessions/capped/bodies/99999", params={"part": "in"}).status_code == 404
    assert client.get(f"/api/sessions/capped/bodies/{seq}").status_code == 422


def test_bodies_under_the_cap_show_whole_without_a_footer(tmp_path: Path) -> None:
    write(tmp_path, "short", capped_log())
    with app_client([str(tmp_path)]) as client:  # the default cap, 20,000 units
        html = page_html(client, "short")
    assert "data-show-all" not in html and "truncated" not in unescape(html)
    # the tail shows whole, as text: its tags escaped
    page = flow(html)
    assert not select(page, "script") and any(t.endswith(TAIL) for t in texts(page, "[data-body]"))


def test_every_row_links_its_raw_event(client: httpx.Client) -> None:
    rows = flow_rows(page_html(client, "eventful"))
    assert {"step", "turn-error", "turn-max-tokens", "partial-stream", "model-retry", "tool-call", "command"} <= {
        row.kind for row in rows
    }
    command = next(row for row in rows if row.kind == "command")
    assert not select(command.element, "[data-expandable]")  # it cannot open
    for row in rows:
        assert f"/sessions/eventful/events/{row.seq}" in attrs(row.element, "a[href]", "href"), row.kind


def test_a_permalink_is_percent_encoded_and_its_anchor_verbatim(client: httpx.Client) -> None:
    (row,) = [row for row in flow_rows(page_html(client, "eventful")) if row.anchor == "msg-odd id#1"]
    assert attrs(row.element, "a[data-row-message]", "href") == ["#msg-odd%20id%231"]


def test_a_step_that_hosts_only_usage_shows_it(client: httpx.Client) -> None:
    step = next(
        r
        for r in rows(client, "eventful")
        if r["kind"] == "step" and r["title"] == "3" and r["links"].get("usage-only")
    )
    assert step["facts"][1:] == ["in 10", "out 4,096"]
    (row,) = [row for row in flow_rows(page_html(client, "eventful")) if row.seq == step["seq"]]
    assert "out 4,096" in texts(row.element, "span.fact")


def test_a_retry_its_turn_outlived_is_cancelled(client: httpx.Client) -> None:
    retries = [r for r in rows(client, "eventful") if r["kind"] == "model-retry"]
    assert [r["state"] for r in retries] == ["cancelled", "cancelled"]  # a failed turn; a log that ended
    html = flow(page_html(client, "eventful"))
    cancelled = "Model request retry cancelled (1/3) · 1.5s"
    assert texts(html, "details[data-retry] > summary") == [cancelled, cancelled]
    assert text_of(html).count(cancelled) == 2 and "Waiting to retry" not in str(html)


def anywhere(flow: Tag) -> str:
    """Everything a page's transcript says: its text and every attribute's value."""
    return "\n".join([text_of(flow), *(value for _, _, value in attributes(flow))])


def test_rows_speak_chinese_on_a_chinese_page(client: httpx.Client) -> None:
    english_flow = flow(page_html(client, "eventful"))
    chinese_flow = flow(page_html(client, "eventful", **{"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}))
    english, chinese = text_of(english_flow), text_of(chinese_flow)
    for en, zh in [
        ("in 10", "输入 10"),
        ("out 4,096", "输出 4,096"),
        ("hook PreToolUse · h1", "钩子 PreToolUse · h1"),
        ("hook PreToolUse → pass", "钩子 PreToolUse → pass"),
        ("approval asked · outside the workspace", "已请求审批 · outside the workspace"),
        ("approval allowed-once", "审批结果：allowed-once"),
        ("Image dot.png image/png 1×1", "图片 dot.png"),
        ("Model request retry cancelled", "模型请求重试已取消"),
    ]:
        assert en in english and en not in anywhere(chinese_flow) and zh in chinese, en
    english_words = {w for fact in texts(english_flow, "span.fact") for w in fact.split()}
    chinese_words = {w for fact in texts(chinese_flow, "span.fact") for w in fact.split()}
    assert {"ms", "s", "min"} <= english_words
    assert not {"ms", "s", "min"} & chinese_words
    assert {"毫秒", "秒", "分"} <= chinese_words


def test_a_served_row_sends_its_body_when_it_opens(client: httpx.Client) -> None:
    """The page's rows carry which body each opens (`data-lazy-body`) and none of their bodies; each is
    answered whole by `/row-bodies/`, escaped; the twin is the row's JSON (decision 0048)."""
    page = client.get("/sessions/capped").text
    twin = {r["seq"]: r for r in rows(client, "capped")}
    lazy = [(row, opens) for row in flow_rows(page) for opens in select(row.element, "[data-lazy-body]")]
    assert {row.kind for row, _ in lazy} >= {"assistant-step", "tool-call", "command", "event", "partial-stream"}
    assert not select(flow(page), "template[data-disclosure-body]") and "O" * 50 not in page
    for row, opens in lazy:
        body = client.get(f"/sessions/capped/row-bodies/{row.seq}", params={"n": opens["data-lazy-body"]})
        assert body.status_code == 200 and body.text.strip(), (row.kind, body.status_code)
        assert "<script>" not in body.text and "data-disclosure-row" not in body.text  # the body alone
        assert client.get(f"/api/sessions/capped/row-bodies/{row.seq}").json()["key"] == twin[row.seq]["key"]
    tool = next(row for row, _ in lazy if row.kind == "tool-call")
    output = client.get(f"/sessions/capped/row-bodies/{tool.seq}").text
    assert "O" * 50 in text_of(one(output, "[data-tool-output]")) and select(output, "button[data-show-all]")


def test_a_body_that_is_not_there_is_not_found(client: httpx.Client) -> None:
    by_kind = {r["kind"]: r["seq"] for r in rows(client, "capped")}
    assert client.get(f"/sessions/capped/row-bodies/{by_kind['tool-call']}", params={"n": 1}).status_code == 404
    assert client.get(f"/sessions/capped/row-bodies/{by_kind['user']}").status_code == 404  # a row that cannot open
    assert client.get("/sessions/capped/row-bodies/99999").status_code == 404
    assert client.get("/api/sessions/capped/row-bodies/99999").status_code == 404
    assert client.get(f"/sessions/capped/row-bodies/{by_kind['tool-call']}", params={"n": -1}).status_code == 422
