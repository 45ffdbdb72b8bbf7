"""Model views, identity pages and the context budget over HTTP, with their JSON twins."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from urllib.parse import quote

import httpx
import pytest

from tests.support.builders import LogBuilder
from tests.support.request_logs import compaction_between_calls, pruned_result, steering, write_log
from tests.support.server import live_server

ODD_ID = 'odd/id #1?<b>&"'


def odd_id_log() -> LogBuilder:
    """A prompt whose id needs escaping everywhere: in paths, attributes and text."""
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.add("user/message", {"id": ODD_ID, "role": "user", "content": [{"type": "text", "text": "<script>x</script>"}],
                           "source": {"kind": "user"}}, surfaceOp="append")
    b.add("request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"})
    b.assistant(1, 1, [{"type": "reasoning", "text": "thinking"}, {"type": "text", "text": "ok"},
                       {"type": "tool-call", "id": "call_9", "name": "read", "arguments": '{"file_path":"a"}'}])
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return b


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("logs")
    write_log(root / "compaction" / "session.jsonl", compaction_between_calls().events, "compaction")
    write_log(root / "pruned" / "session.jsonl", pruned_result().events, "pruned")
    write_log(root / "steering" / "session.jsonl", steering()[0].events, "steering")
    write_log(root / "odd" / "session.jsonl", odd_id_log().events, "odd")
    with live_server([str(root)]) as url:
        yield url


def get(server: str, path: str, **headers: str) -> httpx.Response:
    response = httpx.get(server + path, headers=headers)
    assert response.status_code == 200, (path, response.status_code, response.text[:500])
    return response


def calls_on_page(html: str) -> list[tuple[str, list[str]]]:
    """Each call section's outcome and the message ids its list shows, in order."""
    out = []
    for section in re.split(r'<section class="mv-call" ', html)[1:]:
        outcome = re.search(r'data-outcome="([^"]+)"', section)
        assert outcome is not None
        ids = [unescape(i) for i in re.findall(r'<li class="mv-message" data-message-id="([^"]+)"', section)]
        out.append((outcome.group(1), ids))
    return out


def test_the_model_view_lists_each_call_as_its_json_twin_does(server: str) -> None:
    html = get(server, "/sessions/compaction/steps/2.1").text
    data = get(server, "/api/sessions/compaction/steps/2.1").json()
    assert [(c["outcome"]["kind"], [m["id"] for m in c["messages"]]) for c in data["calls"]] == calls_on_page(html)
    failed, answered = data["calls"]
    assert failed["outcome"]["failure"]["code"] == "CONTEXT_WINDOW_EXCEEDED" and not failed["answered"]
    assert answered["answered"] and answered["requestAt"] == answered["chunks"]["first"] - 1
    assert answered["messages"][0]["role"] == "user" and answered["messages"][0]["renderedForm"] == "opaque"
    (replace,) = answered["diff"]["replaced"]
    assert replace["kind"] == "compaction" and replace["range"] == {"start": 2, "end": 9}
    assert replace["shadowedTokenCount"] == 420
    # the diff at the top of the page is the answered call's: the compaction and its shadowed ids, linked
    top = html.split('<section class="mv-section" data-calls>')[0]
    assert 'data-diff-replaced data-kind="compaction"' in top
    for shadowed in replace["shadowed"]:
        assert f'href="/sessions/compaction/messages/{quote(shadowed["id"], safe="")}"' in top
    assert data["step"] == {"key": "2.1", "turn": 2, "step": 1, "start": 13, "end": 27}
    assert data["previousStep"] == "1.2" and data["nextStep"] is None


def test_the_model_view_shows_the_header_and_state_in_force(server: str) -> None:
    html = get(server, "/sessions/compaction/steps/1.1").text
    data = get(server, "/api/sessions/compaction/steps/1.1").json()
    (call,) = data["calls"]
    assert call["header"] == {"seq": 3, "reason": "initial",
                              "config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}}
    assert call["state"]["planMode"] == {"value": False, "seq": None, "detail": None}
    assert call["diff"]["previous"] is None and call["diff"]["header"][0]["first"]
    assert "<dd data-provider>deepseek-official</dd>" in html and "<dd data-model>deepseek-v4-flash</dd>" in html
    assert 'data-setting="planMode"' in html and "data-diff-first" in html


def test_a_message_body_opens_as_the_model_read_it(server: str) -> None:
    data = get(server, "/api/sessions/odd/steps/1.1").json()
    (call,) = data["calls"]
    (prompt,) = call["messages"]
    assert prompt["id"] == ODD_ID
    body = get(server, f"/sessions/odd/message-bodies/{call['messageSeq']}").text
    assert 'data-part="reasoning"' in body and 'data-part="tool-call"' in body
    assert "{&#34;file_path&#34;:&#34;a&#34;}" in body or '{"file_path":"a"}' in unescape(body)
    prompt_body = get(server, f"/sessions/odd/message-bodies/{prompt['seq']}").text
    assert "&lt;script&gt;x&lt;/script&gt;" in prompt_body and "<script>x" not in prompt_body
    twin = get(server, f"/api/sessions/odd/message-bodies/{prompt['seq']}").json()
    assert twin["message"]["id"] == ODD_ID and (twin["role"], twin["shownAs"]) == ("user", "user")


def test_an_id_that_needs_escaping_has_its_identity_page(server: str) -> None:
    path = f"/sessions/odd/messages/{quote(ODD_ID, safe='')}"
    html = get(server, path).text
    data = get(server, "/api" + path).json()
    assert data["id"] == ODD_ID and [c["role"] for c in data["carriers"]] == ["message"]
    assert "<b>" not in html and "odd/id #1?&lt;b&gt;&amp;&#34;" in html
    step = get(server, "/sessions/odd/steps/1.1").text
    assert f'href="{path}"' in step


def test_a_pruned_result_shows_both_contents_in_order(server: str) -> None:
    data = get(server, "/api/sessions/pruned/steps/2.1").json()
    pruned = next(m for m in data["calls"][0]["messages"] if m["replaced"])
    path = f"/sessions/pruned/messages/{quote(pruned['id'], safe='')}"
    html = get(server, path).text
    identity = get(server, "/api" + path).json()
    original, replaced = identity["carriers"]
    assert (original["seq"], original["shadowedBy"]) == (6, replaced["seq"])
    assert replaced["replacement"]["kind"] == "prune" and replaced["keepsIdOf"] == [6]
    assert html.index(">alpha<") < html.index(">[tool result pruned]<")
    assert [r["step"] for r in identity["requests"]] == ["1.2", "2.1"]


def test_a_claimed_steering_message_links_its_splice(server: str) -> None:
    _, steer_id, _ = steering()
    path = f"/sessions/steering/messages/{quote(steer_id, safe='')}"
    html = get(server, path).text
    identity = get(server, "/api" + path).json()
    splice, event = identity["carriers"]
    assert (splice["role"], splice["seq"], splice["fate"], splice["takenAt"]) == ("inbox", 7, "claimed", 9)
    assert event["role"] == "message" and event["seq"] == 11
    assert 'data-splice-link href="/sessions/steering#seq-7"' in html
    assert 'data-taken-link href="/sessions/steering#seq-9"' in html
    assert 'data-transcript-link href="/sessions/steering#msg-' in html


def test_the_budget_chart_marks_the_compaction(server: str) -> None:
    html = get(server, "/sessions/compaction/steps").text
    data = get(server, "/api/sessions/compaction/steps").json()
    assert [s["key"] for s in data["steps"]] == re.findall(r'data-bar="([^"]+)"', html) == ["1.1", "1.2", "2.1"]
    assert data["steps"][2]["usage"]["contextTokens"] == 40 and data["steps"][2]["calls"] == 2
    (shrink,) = data["shrinks"]
    assert shrink["kind"] == "compaction" and shrink["beforeStep"] == 2
    assert html.count("data-marker") == 1 and "<svg" in html
    assert " style=" not in html  # the CSP allows no inline styles
    assert 'data-shrink="compaction"' in html


def test_transcript_rows_link_to_the_model_view_and_identity_pages(server: str) -> None:
    html = get(server, "/sessions/compaction").text
    assert 'data-step-link href="/sessions/compaction/steps/1.1"' in html
    assert 'data-identity-link href="/sessions/compaction/messages/' in html
    assert 'data-budget-link href="/sessions/compaction/steps"' in html


def test_unknown_steps_and_ids_are_404_and_chinese_is_served(server: str) -> None:
    assert httpx.get(f"{server}/sessions/compaction/steps/9.9").status_code == 404
    assert httpx.get(f"{server}/sessions/compaction/steps/latest").status_code == 404
    assert httpx.get(f"{server}/api/sessions/compaction/messages/nope").status_code == 404
    assert httpx.get(f"{server}/sessions/compaction/message-bodies/0").status_code == 404
    zh = get(server, "/sessions/compaction/steps/2.1", **{"Accept-Language": "zh-CN,zh;q=0.9"}).text
    assert "模型读到的内容" in zh and "自上一次请求以来" in zh
