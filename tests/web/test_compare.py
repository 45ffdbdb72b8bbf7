"""`/compare?a=&b=` over HTTP: the divergences named and linked, rows word by word, folds and
windows, the chooser, and the JSON twin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.builders import header
from tests.support.rows import attrs, one, select, text, texts
from tests.support.runs import fork_pair, tool_run, write_log
from tests.support.server import app_client

WINDOW = 8


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare")
    write_log(root / "run-a" / "session.jsonl", tool_run("alpha", seed=1).events, header("run-a"))
    write_log(root / "run-b" / "session.jsonl", tool_run("beta <b>bold</b>", seed=2).events, header("run-b"))
    fork_pair(root / "lineage")
    long_b = tool_run("alpha", turns=20, seed=3).events
    [e for e in long_b if e["type"] == "tool/result"][-1]["data"]["message"]["content"][0]["content"][0]["text"] = "z"
    write_log(root / "long-a" / "session.jsonl", tool_run("alpha", turns=20).events, header("long-a"))
    write_log(root / "long-b" / "session.jsonl", long_b, header("long-b"))
    return root


@pytest.fixture(scope="module")
def client(logs: Path) -> Iterator[httpx.Client]:
    with app_client([str(logs)], window_rows=WINDOW) as client:
        yield client


def get(client: httpx.Client, path: str) -> httpx.Response:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code, response.text[:500])
    return response


def test_the_page_names_each_divergence_and_links_both_model_views(client: httpx.Client) -> None:
    html = get(client, "/compare?a=run-a&b=run-b").text
    assert one(html, "[data-compare]")["data-same"] == "false"
    first = one(html, '[data-divergence-summary="first"]')
    assert (first["data-step-a"], first["data-step-b"], first["data-part"]) == ("1.1", "1.1", "result")
    request = one(html, '[data-divergence-summary="request"]')
    assert (request["data-step-a"], request["data-part"]) == ("1.2", "messages")
    assert "from message 3" in text(html, '[data-divergence-summary="request"]')
    assert one(html, '[data-divergence-summary="output"]')["data-step-b"] == "1.2"
    links = attrs(html, '[data-divergence-summary="request"] a[data-divergence-link]', "href")
    assert links == ["/sessions/run-a/steps/1.2", "/sessions/run-b/steps/1.2"]
    for link in links:
        get(client, link)  # each is the model view of that step
    # the steps themselves are marked where each divergence lies
    marked = {s["data-step-a"]: s.get("data-divergence") for s in select(html, "[data-compare-step]")}
    assert marked == {"1.1": "first", "1.2": "request output"}


def test_a_changed_result_shows_its_words_removed_and_added_escaped(client: httpx.Client) -> None:
    html = get(client, "/compare?a=run-a&b=run-b").text
    (changed, answer) = select(html, '[data-compare-row][data-status="changed"]')
    assert changed["data-kind"] == "result"
    assert texts(changed, '[data-side="a"] del') == ["alpha"]
    assert texts(changed, '[data-side="b"] ins') == ["beta <b>bold</b>"]  # as text: the log's markup is escaped
    assert not select(changed, "b")
    assert answer["data-kind"] == "answer" and texts(answer, '[data-side="b"] ins') == ["beta <b>bold</b>"]


def test_the_json_twin_carries_the_same_divergences_and_rows(client: httpx.Client) -> None:
    data = get(client, "/api/compare?a=run-a&b=run-b").json()
    assert data["same"] is False and data["a"]["key"] == "run-a" and data["b"]["key"] == "run-b"
    assert data["firstDivergence"]["a"] == "1.1" and data["firstDivergence"]["part"] == "result"
    assert data["requestDivergence"]["links"] == {"a": "/sessions/run-a/steps/1.2", "b": "/sessions/run-b/steps/1.2"}
    items = [r["item"] for r in data["rows"] if "item" in r]
    changed = [i for i in items if i["status"] == "changed"]
    assert changed[0]["words"] == [["del", "alpha"], ["ins", "beta <b>bold</b>"]]


def test_a_session_against_itself_has_no_divergence(client: httpx.Client) -> None:
    html = get(client, "/compare?a=run-a&b=run-a").text
    assert one(html, "[data-compare]")["data-same"] == "true" and select(html, "[data-no-divergence]")
    assert get(client, "/api/compare?a=run-a&b=run-a").json()["firstDivergence"] is None


def test_a_fork_is_the_same_as_its_parent_up_to_the_seed_boundary(client: httpx.Client) -> None:
    data = get(client, "/api/compare?a=session-parent&b=session-fork").json()
    first = data["firstDivergence"]
    assert (first["a"], first["b"], first["part"]) == ("2.1", "2.1", "prompt")
    assert data["seedBoundary"]["b"] is not None
    html = get(client, "/compare?a=session-parent&b=session-fork").text
    steps = select(html, "[data-compare-step]")
    before = [s for s in steps if s["data-step-a"] in ("1.1", "1.2")]
    assert all(s["data-status"] == "same" for s in before) and all(select(s, "[data-inherited]") for s in before)


def test_compare_with_offers_parent_and_children_first(client: httpx.Client) -> None:
    html = get(client, "/compare?a=session-fork").text
    assert attrs(html, "[data-suggested] a", "data-compare-candidate") == ["session-parent"]
    others = attrs(html, "[data-others] a", "data-compare-candidate")
    assert "session-parent" not in others and "run-a" in others and "session-fork" not in others
    parent_page = get(client, "/compare?a=session-parent").text
    assert attrs(parent_page, "[data-suggested] a[data-compare-candidate]", "href") == [
        "/compare?a=session-parent&b=session-fork"
    ]
    # the session page's facts lead there, and so does its lineage
    facts = get(client, "/sessions/session-fork/facts").text
    assert attrs(facts, "a[data-compare-link]", "href") == ["/compare?a=session-fork"]
    assert attrs(facts, "a[data-compare-lineage]", "href") == ["/compare?a=session-fork&b=session-parent"]


def test_long_same_stretches_fold_and_every_window_is_bounded(client: httpx.Client) -> None:
    data = get(client, "/api/compare?a=long-a&b=long-b").json()
    assert data["firstDivergence"]["a"] == "20.1"
    fold = data["rows"][0]["fold"]
    assert fold["from"] == 0 and fold["rows"] > WINDOW
    assert len(data["rows"]) <= WINDOW
    opened = get(client, f"/api/compare?a=long-a&b=long-b&from={fold['from']}&to={fold['to']}").json()
    assert len(opened["rows"]) == WINDOW and opened["nextFrom"] == fold["from"] + WINDOW
    html = get(client, f"/compare/rows?a=long-a&b=long-b&from={fold['from']}&to={fold['to']}").text
    assert len(select(html, "[data-compare-step], [data-compare-row]")) == WINDOW
    loader = one(html, "[data-compare-next]")
    assert loader["hx-get"] == f"/compare/rows?a=long-a&b=long-b&from={WINDOW}&to={fold['to']}"
    page = get(client, "/compare?a=long-a&b=long-b").text
    summary = one(page, "details[data-fold] > summary").get_text()
    assert summary == f"{fold['rows']:,} rows the same"


def test_an_unknown_session_is_a_404(client: httpx.Client) -> None:
    assert client.get("/compare?a=run-a&b=nobody").status_code == 404
    assert client.get("/api/compare?a=nobody&b=run-a").status_code == 404


def test_the_page_speaks_chinese_when_the_browser_prefers_it(client: httpx.Client) -> None:
    html = client.get("/compare?a=run-a&b=run-b", headers={"accept-language": "zh-CN,zh;q=0.9"}).text
    assert text(html, '[data-divergence-summary="first"] dt') == "首个分歧"
    assert "工具结果" in text(html, '[data-divergence-summary="first"] dd')
