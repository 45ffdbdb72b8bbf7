"""Every row kind rendered from real dsh logs (and built ones where the corpus has none)."""

from __future__ import annotations

from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import quote

import httpx
import orjson
import pytest

from tests.conftest import CORPUS
from tests.support.builders import LogBuilder, header
from tests.support.rows import attrs, flow_rows, opened, select, text, text_of, texts
from tests.support.server import app_client, twin_rows

pytestmark = pytest.mark.corpus

SNAPSHOTS = CORPUS / "sessions/examples/acp-agent/tests/snapshots"
NAMES = [
    "cancel-tool-calls",
    "fs-delete-recreate",
    "hook-cc-pretool-ask",
    "escalation-approved",
    "inline-image-prompt",
    "read-image",
    "packed-chunks",
    "empty-response-retry",
    "max-tokens-continue",
    "error-finish",
    "code-mode-turn",
    "agent-instructions",
    "subagent-continuable",
    "cancel",
]


def built_logs(root: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    original = next(e for e in b.events if e["type"] == "tool/result")
    b.add(
        "compaction/prune",
        {
            "shadowedRange": {"start": original["seq"], "end": original["seq"]},
            "shadowedSeqs": [original["seq"]],
            "shadowedTokenCount": 3,
        },
    )
    pruned = orjson.loads(orjson.dumps(original))
    pruned.update(
        seq=len(b.events),
        time=original["time"] + 100,
        sourceEventSeqs=[original["seq"]],
        surfaceOp={"op": "replace", "start": original["seq"], "end": original["seq"]},
    )
    pruned["data"]["message"]["content"][0]["content"] = [{"type": "text", "text": "[pruned: 5 bytes]"}]
    b.events.append(pruned)
    b.add("turn/start", {"turn": 2})
    b.add("step/start", {"turn": 2, "step": 1})
    b.user("go on")
    steer = {
        "id": "steer-1",
        "role": "user",
        "content": [{"type": "text", "text": "also check b.txt"}],
        "source": {"kind": "user"},
    }
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [steer]})
    b.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "removedCount": 1, "inserted": []})
    b.add("user/message", steer, surfaceOp="append")
    b.add("assistant/chunk", {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "par"}})
    b.add(
        "llm/retry",
        {
            "retryId": "r1",
            "turn": 2,
            "step": 1,
            "provider": "p",
            "mode": "normal",
            "policyKey": "k",
            "retry": 1,
            "maxRetries": 3,
            "delayMs": 1500,
            "failure": {"message": "rate limited", "code": "RATE_LIMIT"},
        },
    )
    b.add("llm/retry-started", {"retryId": "r1", "turn": 2, "step": 1, "retry": 1})
    b.assistant(2, 1, [{"type": "text", "text": "Done **now**."}])
    b.add("step/end", {"turn": 2, "step": 1})
    b.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    path = root / "built" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("built"), *b.events]))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    if not CORPUS.is_dir():
        pytest.skip("corpus absent")
    root = tmp_path_factory.mktemp("built")
    built_logs(root)
    paths = [str(SNAPSHOTS / n) for n in NAMES] + [str(CORPUS / "dsh-home"), str(root)]
    with app_client(paths) as client:
        yield client


def key_of(client: httpx.Client, fragment: str) -> str:
    sessions = client.get("/api/sessions").json()["sessions"]
    matches = [s["key"] for s in sessions if fragment in s["path"]]
    assert matches, fragment
    return matches[0]


def all_html(client: httpx.Client, key: str, *, unescaped: bool = True) -> str:
    """Every window of the session's rows, each row opened (its bodies fetched as the page fetches them)."""
    html, start = [], 0
    total = client.get(f"/api/sessions/{key}/rows").json()["totalRows"]
    while start < total:
        window = client.get(f"/sessions/{key}/rows", params={"from": start, "direction": "later"}).text
        html.append(opened(client, window, f"/sessions/{key}"))
        start += 60
    return unescape("".join(html)) if unescaped else "".join(html)


def test_tool_errors_show_their_message_in_the_error_state(client: httpx.Client, corpus_dir: Path) -> None:
    key = key_of(client, "fs-delete-recreate")
    tools = [r for r in twin_rows(client, key) if r["kind"] == "tool-call"]
    errors = [t for t in tools if t["tool"]["state"] == "error"]
    assert errors and all(t["tool"]["output"] for t in errors)
    assert any(
        "FS_NOT_FOUND" in (t["tool"]["errorCode"] or "") or "not found" in t["tool"]["output"].lower() for t in errors
    )
    failed = select(all_html(client, key, unescaped=False), '[data-tool][data-state="error"]')
    assert failed and all(texts(row, "[data-disclosure-row] .visually-hidden") == ["Failed"] for row in failed)


def test_cancelled_calls_are_stopped(client: httpx.Client, corpus_dir: Path) -> None:
    tools = [r for r in twin_rows(client, key_of(client, "cancel-tool-calls")) if r["kind"] == "tool-call"]
    assert {t["tool"]["errorCode"] for t in tools} == {"ABORTED", "ABORTED_BEFORE_DISPATCH"}
    assert {t["tool"]["state"] for t in tools} == {"stopped"}


def test_an_interrupted_step_is_marked_stopped(client: httpx.Client, corpus_dir: Path) -> None:
    html = all_html(client, key_of(client, "snapshots/cancel/"), unescaped=False)
    assert "Stopped" in texts(html, ".assistant-step [data-stopped]")


def test_hooks_and_approvals_sit_on_their_tool_row(client: httpx.Client, corpus_dir: Path) -> None:
    (tool,) = [r for r in twin_rows(client, key_of(client, "hook-cc-pretool-ask")) if r["kind"] == "tool-call"]
    notes = " | ".join(tool["tool"]["notes"])
    assert "hook PreToolUse" in notes and "approval asked" in notes and "approval rejected" in notes
    kinds = [r.get("type") for r in twin_rows(client, key_of(client, "hook-cc-pretool-ask")) if r["kind"] == "event"]
    assert not {"hook/invoked", "hook/result", "approval/asked", "approval/decided"} & set(kinds)


def test_images_are_named_by_their_attachment(client: httpx.Client, corpus_dir: Path) -> None:
    rows = twin_rows(client, key_of(client, "inline-image-prompt"))
    user = next(r for r in rows if r["kind"] == "user")
    assert any(b["kind"] == "image" and b["text"].startswith("Image ") for b in user["blocks"])


def test_code_mode_sub_calls_nest_under_their_parent(client: httpx.Client, corpus_dir: Path) -> None:
    (tool,) = [r for r in twin_rows(client, key_of(client, "code-mode-turn")) if r["kind"] == "tool-call"]
    assert tool["tool"]["subcalls"] and tool["tool"]["variant"] == "code"
    html = all_html(client, key_of(client, "code-mode-turn"), unescaped=False)
    subs = select(html, "[data-tool-card] ~ div.subcall[data-subcall]")
    # the twin carries each sub-call's arguments and output; the page shows what it asked (a bash call's command
    # line, docs/ui.md §5.3) and the output
    for shown, s in zip(subs, tool["tool"]["subcalls"], strict=True):
        assert s["ask"] == "command"
        assert texts(shown, "[data-ask-body]") == [orjson.loads(s["arguments"])["command"]]
        assert texts(shown, "pre[data-body]") == [orjson.loads(s["arguments"])["command"], s["output"]]


def test_packed_chunks_merge_into_their_step(client: httpx.Client, corpus_dir: Path) -> None:
    rows = twin_rows(client, key_of(client, "packed-chunks"))
    steps = [r for r in rows if r["kind"] == "assistant-step"]
    assert steps and all(r["links"].get("chunks") for r in steps)
    assert not any(r.get("type") == "assistant/chunk" for r in rows)


def test_retries_keep_the_failed_stream_under_the_retry_row(client: httpx.Client, corpus_dir: Path) -> None:
    (retry,) = [r for r in twin_rows(client, key_of(client, "built/session.jsonl")) if r["kind"] == "model-retry"]
    assert retry["retry"]["retry"] == "1" and retry["retry"]["maximum"] == "3" and retry["retry"]["seconds"] == "1.5"
    html = all_html(client, key_of(client, "built/session.jsonl"), unescaped=False)
    (row,) = [row.element for row in flow_rows(html) if row.kind == "model-retry"]
    assert text(row, "details[data-retry] > summary") == "Retried model request (1/3) · 1.5s"
    lines = select(row, "details[data-retry] > p.retry-line")
    assert any(text_of(line).startswith("Failure reason: rate limited") for line in lines)
    # what the failed attempt streamed, right under the line that says so
    (streamed,) = [line for line in lines if text_of(line) == "What the failed attempt streamed:"]
    body = streamed.find_next_sibling()
    assert body is not None and body.name == "pre" and body.has_attr("data-body") and text_of(body) == "par"
    real = [r for r in twin_rows(client, key_of(client, "empty-response-retry")) if r["kind"] == "model-retry"]
    assert len(real) == 1


def test_turn_errors_and_max_tokens_get_status_rows(client: httpx.Client, corpus_dir: Path) -> None:
    html = all_html(client, key_of(client, "error-finish"))
    assert "This turn failed" in html
    assert "Output token limit reached" in all_html(client, key_of(client, "max-tokens-continue"))


def test_a_pruned_result_shows_the_original_and_notes_the_pruning(client: httpx.Client, corpus_dir: Path) -> None:
    rows = twin_rows(client, key_of(client, "built/session.jsonl"))
    (tool, *_) = [r for r in rows if r["kind"] == "tool-call"]
    assert tool["tool"]["output"] == "alpha"
    assert any("pruned" in n for n in tool["tool"]["notes"])
    assert tool["tool"]["pruned"] == "[pruned: 5 bytes]"  # the twin carries what the model saw instead
    assert "[pruned: 5 bytes]" in all_html(client, key_of(client, "built/session.jsonl"))


def test_a_claimed_steering_message_is_a_steering_row(client: httpx.Client, corpus_dir: Path) -> None:
    rows = twin_rows(client, key_of(client, "built/session.jsonl"))
    assert [r["kind"] for r in rows if r["kind"] in ("user", "steering")] == ["user", "user", "steering"]


def test_the_hand_made_replace_stays_model_only(client: httpx.Client, corpus_dir: Path) -> None:
    rows = twin_rows(client, key_of(client, "agent-instructions"))
    assert [r["kind"] for r in rows].count("compaction") == 1
    contexts = [r for r in rows if r["kind"] == "context"]
    assert [c["context"]["label"] for c in contexts][:1] == ["AGENTS.md"]


def test_the_real_compact_lifecycle_is_one_marker_with_its_summary(client: httpx.Client, corpus_dir: Path) -> None:
    key = "session-2d63c78e-16f5-4333-ae51-0ea39805a2a6"
    rows = twin_rows(client, key)
    (marker,) = [r for r in rows if r["kind"] == "manual-compaction"]
    assert marker["title"] == "compact"
    compaction = marker["compaction"]
    assert compaction["items"] == 7 and compaction["tokens"] == "364"
    assert not [r for r in rows if r["kind"] in ("compaction", "command")]
    html = all_html(client, key)
    assert "Compacted 7 history items (~364 tokens)" in html
    assert "context_checkpoint" not in html and "<compacted-summary>" not in html
    found = client.get(f"/api/sessions/{key}/search", params={"kind": "compaction"}).json()["matches"]
    assert len(found) == 1, "the compaction filter finds a /compact marker too"
    page = client.get(f"/sessions/{key}").text
    assert {"turn-max-tokens", "partial-stream"} <= set(
        attrs(page, 'form[data-search] select[name="kind"] option', "value")
    )


def test_the_resumed_session_reads_across_its_end_seed(client: httpx.Client, corpus_dir: Path) -> None:
    rows = twin_rows(client, "session-bbe88c97-9dd2-4991-ad6a-fa0982b5251f")
    assert [r["kind"] for r in rows].count("turn") == 2
    assert any(r.get("type") == "session/end-seed" for r in rows)


def test_every_row_links_its_raw_event(client: httpx.Client, corpus_dir: Path) -> None:
    kinds = set()
    for fragment in (
        "hook-cc-pretool-ask",
        "error-finish",
        "max-tokens-continue",
        "code-mode-turn",
        "agent-instructions",
        "snapshots/cancel/",
        "built/session.jsonl",
    ):
        key = key_of(client, fragment)
        for row in flow_rows(all_html(client, key, unescaped=False)):
            kinds.add(row.kind)
            if row.kind != "diagnostic":  # a record dsh would not read is no event: its bytes show in the row
                links = attrs(row.element, "a[href]", "href")
                assert f"/sessions/{quote(key, safe='')}/events/{row.seq}" in links, (fragment, row.kind, row.seq)
    for key in ("session-2d63c78e-16f5-4333-ae51-0ea39805a2a6", "session-bbe88c97-9dd2-4991-ad6a-fa0982b5251f"):
        for row in flow_rows(all_html(client, key, unescaped=False)):
            kinds.add(row.kind)
            links = attrs(row.element, "a[href]", "href")
            assert f"/sessions/{key}/events/{row.seq}" in links, (key, row.kind, row.seq)
    assert {
        "turn",
        "step",
        "user",
        "context",
        "assistant-step",
        "tool-call",
        "compaction",
        "manual-compaction",
        "turn-error",
        "turn-max-tokens",
        "model-retry",
        "partial-stream",
        "event",
    } <= kinds
    key = key_of(client, "hook-cc-pretool-ask")
    event = client.get(f"/api/sessions/{key}/events/0").json()
    assert event["seq"] == 0 and event["event"]["type"] == event["type"]
    page = client.get(f"/sessions/{key}/events/0").text
    assert select(page, "[data-event-json]")


def test_subagent_relay_and_notice_render_as_their_forms(client: httpx.Client, corpus_dir: Path) -> None:
    rows = twin_rows(client, key_of(client, "subagent-continuable/session.jsonl"))
    forms = {c["context"]["renderedForm"] for c in rows if c["kind"] == "context"}
    assert "notice" in forms


def test_token_usage_per_step_and_per_session(client: httpx.Client, corpus_dir: Path) -> None:
    key = "session-2d63c78e-16f5-4333-ae51-0ea39805a2a6"
    session = client.get(f"/api/sessions/{key}").json()
    steps = [r for r in twin_rows(client, key) if r["kind"] == "assistant-step"]
    # then how fast it streamed, from its events' times: 12 tokens in 8 ms, its first 54 ms after its step began
    assert steps[0]["facts"] == ["in 76", "cache read 64", "out 12", "reasoning 8", "TTFT 54 ms", "1,500 tok/s"]
    assert steps[0]["timing"] == {"ttftMs": 54, "tokensPerSecond": 1500.0}
    assert session["usage"]["inputTokens"] == 500 and session["usage"]["outputTokens"] == 60
    assert "tokens: in 500 · cache read 320 · out 60 · reasoning 40" in client.get(f"/sessions/{key}").text
    turns = [r for r in twin_rows(client, key) if r["kind"] == "turn"]
    assert len(turns) == 3 and all(t["facts"] and t["facts"][0].endswith("ms") for t in turns)
