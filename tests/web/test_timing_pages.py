"""Where the time went, where it is read: the session header, the session twin and `check --json` (issue 40)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from dsh_inspect.cli import run_check

from tests.support.rows import parse, select, text_of
from tests.support.server import app_client
from tests.support.timed_logs import CHILD_TITLES, CHILDREN, PARENT, one_call, timed_log, write_subagent_family

HOME = Path("/work/shared/corpus/dsh-home/sessions")
COMPACTED = "session-2d63c78e-16f5-4333-ae51-0ea39805a2a6"  # three turns, a /compact between the second and third
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with app_client([str(HOME)]) as client:
        yield client


def checked(path: Path) -> dict:
    out = io.StringIO()
    run_check([str(path)], as_json=True, out=out, err=io.StringIO())
    (report,) = orjson.loads(out.getvalue())["sessions"]
    return report


def test_the_twin_gives_the_durations_check_json_gives(client: httpx.Client) -> None:
    twin = client.get(f"/api/sessions/{COMPACTED}").json()
    durations = twin["durations"]
    assert durations == checked(next(HOME.glob(f"*/{COMPACTED}")))["durations"]
    assert durations["wallMs"] == 25_863 and durations["clockBackwards"] == 0 and durations["openSpans"] == 0
    assert [s["key"] for s in durations["steps"]] == ["1.1", "1.2", "2.1", "3.1", "3.2"]
    assert durations["modelMs"] == sum(s["modelMs"] for s in durations["steps"])
    assert durations["idleMs"] > durations["modelMs"] + durations["toolMs"], "most of it was between turns"


def test_the_session_header_says_the_wall_model_and_tool_time(client: httpx.Client) -> None:
    figures = {
        el.get("data-timing"): text_of(el)
        for el in select(parse(client.get(f"/sessions/{COMPACTED}/facts").text), "[data-timing]")
    }
    assert figures == {"wall": "Wall time 25.9 s", "model": "model 145 ms", "tool": "tools 26 ms"}
    zh = {
        el.get("data-timing"): text_of(el)
        for el in select(parse(client.get(f"/sessions/{COMPACTED}/facts", headers=ZH).text), "[data-timing]")
    }
    assert zh["wall"] == "总耗时 25.9 秒"


def test_a_clock_that_ran_backwards_is_said_in_the_header(tmp_path: Path) -> None:
    """A second turn resumed on a machine whose clock is an hour behind: the header and the timeline say so."""
    behind = [(at - 3_600_000, event) for at, event in one_call()]
    timed_log(tmp_path, [*one_call(), *behind])
    with app_client([str(tmp_path)]) as client:
        (key,) = [s["key"] for s in client.get("/api/sessions").json()["sessions"]]
        pages = [f"/sessions/{key}/facts", f"/sessions/{key}/timeline"]
        said = [
            {el.get("data-timing"): text_of(el) for el in select(parse(client.get(p).text), "[data-timing]")}
            for p in pages
        ]
        zh = text_of(select(parse(client.get(pages[0], headers=ZH).text), "[data-timing=backwards]")[0])
    assert [s["backwards"] for s in said] == ["clock ran backwards 1 time"] * 2 and zh == "时钟倒退 1 次"
    assert said[0]["wall"] == "Wall time 8 ms", "each machine's own stretch; the jump back counts as nothing"


def test_the_timeline_twin_gives_every_span_with_the_row_it_opens(client: httpx.Client) -> None:
    twin = client.get(f"/api/sessions/{COMPACTED}/timeline").json()
    kinds = [s["kind"] for s in twin["spans"]]
    assert kinds.count("model") == 5 and kinds.count("tool") == 2 and kinds.count("idle") == 2
    assert kinds.count("command") == 1 and kinds.count("compaction") == 1
    assert twin["totals"] == {
        k: v for k, v in client.get(f"/api/sessions/{COMPACTED}").json()["durations"].items() if k != "steps"
    }
    for span in twin["spans"]:
        assert span["durationMs"] == span["end"] - span["start"] >= 0
        assert (span["ttftMs"] is not None) == (span["kind"] == "model")
        if span["kind"] == "model":
            assert span["ttftMs"] + span["decodingMs"] == span["durationMs"]
        page = client.get(f"/api/sessions/{COMPACTED}", params={"at": span["at"]}).json()
        assert page["atIndex"] is not None, f"{span['kind']} at {span['at']} opens a row"
    tools = [s for s in twin["spans"] if s["kind"] == "tool"]
    assert [s["durationMs"] for s in twin["slowest"]["tools"]] == sorted((s["durationMs"] for s in tools), reverse=True)


def test_the_timeline_page_ranks_the_slowest_steps_each_opening_its_row(client: httpx.Client) -> None:
    page = parse(client.get(f"/sessions/{COMPACTED}/timeline").text)
    steps = [(text_of(a), a.get("href")) for a in select(page, "[data-slowest=steps] a")]
    assert steps[0] == ("1.1", f"/sessions/{COMPACTED}?at=seq-6")
    assert len(steps) == 5
    zh = parse(client.get(f"/sessions/{COMPACTED}/timeline", headers=ZH).text)
    assert text_of(select(zh, "h1")[0]) == "时间线"
    drawn = orjson.loads(select(zh, "[data-timeline-data]")[0].text)
    assert [name for _, name in drawn["lanes"]] == ["模型调用", "工具运行", "命令", "压缩", "轮次之间"]


def test_a_log_without_times_has_nothing_to_draw(tmp_path: Path) -> None:
    fixture = Path("/work/shared/corpus/sessions/examples/acp-agent/tests/snapshots/bash-tool-turn")
    with app_client([str(fixture)]) as client:
        (key,) = [s["key"] for s in client.get("/api/sessions").json()["sessions"]]
        assert client.get(f"/api/sessions/{key}/timeline").json()["spans"] == []
        assert select(parse(client.get(f"/sessions/{key}/timeline").text), "[data-no-spans]")
        assert client.get(f"/api/sessions/{key}").json()["durations"] is None


def test_the_model_calls_table_gives_each_steps_duration_and_ttft_and_sorts_by_them(client: httpx.Client) -> None:
    steps = client.get(f"/api/sessions/{COMPACTED}/steps").json()["steps"]
    durations = {
        s["key"]: s["durationMs"] for s in client.get(f"/api/sessions/{COMPACTED}").json()["durations"]["steps"]
    }
    assert {s["key"]: s["durationMs"] for s in steps} == durations
    assert [s["key"] for s in steps] == ["1.1", "1.2", "2.1", "3.1", "3.2"], "the log's order unless sorted"
    by_ttft = client.get(f"/api/sessions/{COMPACTED}/steps", params={"sort": "ttft"}).json()["steps"]
    assert [s["ttftMs"] for s in by_ttft] == sorted((s["ttftMs"] for s in steps), reverse=True)
    page = parse(client.get(f"/sessions/{COMPACTED}/steps", params={"sort": "duration"}).text)
    assert [r.get("data-step-row") for r in select(page, "[data-step-row]")] == ["1.1", "3.1", "3.2", "1.2", "2.1"]
    assert select(page, "[data-sort-column=duration]")[0].get("aria-sort") == "descending"
    first = select(page, "[data-step-row]")[0]
    assert [text_of(td) for td in select(first, "td")[2:4]] == ["82 ms", "54 ms"]
    assert client.get(f"/api/sessions/{COMPACTED}/steps", params={"sort": "tokens"}).status_code == 422


def test_the_model_calls_table_gives_each_steps_cost_as_the_session_twin_sums_it(client: httpx.Client) -> None:
    twin = client.get(f"/api/sessions/{COMPACTED}/steps", params={"sort": "cost"}).json()
    summed = {s["key"]: s["total"] for s in client.get(f"/api/sessions/{COMPACTED}").json()["cost"]["steps"]}
    assert twin["currency"] == "USD"
    assert [(s["key"], s["cost"]["total"]) for s in twin["steps"]] == sorted(summed.items(), key=lambda kv: -kv[1])
    page = parse(client.get(f"/sessions/{COMPACTED}/steps").text)
    assert text_of(select(page, "[data-sort-column=cost]")[0]) == "Cost (USD)"
    cells = [text_of(td) for td in select(page, "[data-step-cost]")]
    assert cells[0] == "0.0000376" and len(cells) == 5


def test_the_timeline_opens_the_subagents_sessions_each_on_its_own_timeline() -> None:
    demos = Path(__file__).resolve().parents[2] / "app/demo/sessions"
    with app_client([str(demos)]) as client:
        page = parse(client.get("/sessions/demo-subagent-parent/timeline").text)
        (link,) = select(page, "[data-subagent-lanes] a[data-subagent-timeline]")
        assert (text_of(link), link.get("href")) == ("demo-subagent-child", "/sessions/demo-subagent-child/timeline")
        assert text_of(link.parent) == "demo-subagent-child 37 ms"
        spans = client.get("/api/sessions/demo-subagent-parent/timeline").json()["spans"]
        assert [s["child"] for s in spans if s["kind"] == "subagent"] == ["demo-subagent-child"]
        assert client.get(link.get("href")).status_code == 200


def test_the_page_carries_a_bounded_number_of_spans_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dsh_inspect.web.present.spend.timeline.DRAWN_MOST", 3)
    demos = Path(__file__).resolve().parents[2] / "app/demo/sessions"
    with app_client([str(demos)]) as client:
        page = parse(client.get("/sessions/demo-tools/timeline").text)
        assert len(orjson.loads(select(page, "[data-timeline-data]")[0].text)["spans"]) == 3
        assert text_of(select(page, "[data-timeline-cut]")[0]) == (
            "The first 3 of 11 spans are drawn; the JSON twin has every one."
        )
        assert len(client.get("/api/sessions/demo-tools/timeline").json()["spans"]) == 11


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("family")
    write_subagent_family(root)
    with app_client([str(root)]) as client:
        yield client


def test_the_timeline_twin_nests_each_subagent_sessions_spans(family: httpx.Client) -> None:
    twin = family.get(f"/api/sessions/{PARENT}/timeline").json()
    started = [s["child"] for s in twin["spans"] if s["kind"] == "subagent"]
    assert started == list(CHILDREN)
    children = twin["children"]
    assert [(c["id"], c["title"]) for c in children] == list(zip(CHILDREN, CHILD_TITLES, strict=True))
    for child in children:
        own = family.get(f"/api/sessions/{child['key']}/timeline").json()
        assert (child["spans"], child["totals"]) == (own["spans"], own["totals"]), "as its own timeline gives them"
        assert [s["kind"] for s in child["spans"]] == ["model", "tool", "model"]
        (tool,) = [s for s in child["spans"] if s["kind"] == "tool"]
        assert tool["durationMs"] == 1000
        row = family.get(f"/api/sessions/{child['key']}", params={"at": tool["at"]}).json()
        assert row["atIndex"] is not None, "a nested span opens its row on its own session's page"


def test_the_timeline_page_gives_each_subagent_a_lane_named_by_its_title(family: httpx.Client) -> None:
    page = parse(family.get(f"/sessions/{PARENT}/timeline").text)
    toggles = select(page, "[data-timeline] button[data-timeline-child]")
    assert [(text_of(b), b.get("aria-expanded")) for b in toggles] == [(t, "false") for t in CHILD_TITLES]
    drawn = orjson.loads(select(page, "[data-timeline-data]")[0].text)
    assert [lane[1] for lane in drawn["lanes"]] == ["Model calls", *CHILD_TITLES], "no Subagents lane left over"
    header = len(drawn["lanes"]) - len(CHILDREN)
    assert [s[0] for s in drawn["spans"] if s[0] >= header] == [header, header + 1], "each start on its lane"
    flaky = drawn["children"][0]
    assert flaky["url"] == f"/sessions/{CHILDREN[0]}"
    assert [name for _, name in flaky["lanes"]] == ["Model calls", "Tool runs"]
    assert [s[5] for s in flaky["spans"]][1] == "Find the flaky test · tool run · bash · 1.0 s"
    # drawn on its parent's clock: its first call asked 310 ms after the parent began
    assert min(s[1] for s in flaky["spans"]) == 310
    zh = parse(family.get(f"/sessions/{PARENT}/timeline", headers=ZH).text)
    assert select(zh, "button[data-timeline-child]")[0].get("title") == "显示或隐藏 Find the flaky test 的时间段"
