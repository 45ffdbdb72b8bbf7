"""A run row in the one-file export (`dsh-inspect render`): one closed row that says how many events and of what,
holding each of its events as one line, its seq and its JSON, so nothing in it is lost and the browser's find
reaches them; no row per event, so a log of a million like events exports in about the time `check` takes."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from bs4 import Tag
from dsh_inspect.sessions.registry import Registry
from dsh_inspect.settings import Settings
from dsh_inspect.web.present.windows import transcript
from dsh_inspect.web.render import EXPORT_WINDOW, LONGEST_WINDOW, render_path
from dsh_inspect.web.state import WebState

from tests.support.bombs import tiny_records_jsonl
from tests.support.builders import LogBuilder, header
from tests.support.rows import flow_rows, parse


def run_lines(page: str | Tag) -> tuple[dict[str, str], list[str]]:
    """The one run row's attributes and summary, and the lines of the events it holds."""
    [run] = (parse(page) if isinstance(page, str) else page).select("details[data-run]")
    events = run.select_one("[data-run-events]")
    assert events is not None
    assert not run.has_attr("open"), "closed until the reader opens it"
    assert flow_rows(run) == [], "its events are lines, not rows"
    summary = run.select_one("summary")
    assert summary is not None
    facts = {name: str(run[name]) for name in ("data-run-count", "data-run-first", "data-run-last")}
    return {**facts, "summary": summary.get_text()}, events.get_text().splitlines()


@pytest.mark.slow  # an export of thousands of rows
def test_the_export_of_a_tiny_log_holds_one_run_row_listing_each_of_its_4000_events(tmp_path: Path) -> None:
    path = tiny_records_jsonl(tmp_path / "tiny.jsonl", 5_000)
    page = parse(render_path(str(path)))  # parsed once: a few MB of HTML
    run, lines = run_lines(page)
    assert run == {
        "data-run-count": "4000",
        "data-run-first": "1000",
        "data-run-last": "4999",
        "summary": "4,000 events whose type is not a string#1000–#4999",
    }
    assert [line.split(" ", 1)[0] for line in lines] == [f"#{seq}" for seq in range(1000, 5000)]
    # each `{}` as dsh reads it: numbered and timed by its upgrade, as its own row's JSON shows it
    assert lines[0] == '#1000 {"seq":1000,"time":0}' and lines[-1] == '#4999 {"seq":4999,"time":0}'
    assert len(flow_rows(page)) < 3_100, "no row per event"
    zh, _ = run_lines(render_path(str(path), lang="zh-CN"))
    assert zh["summary"].startswith("4,000 个类型不是字符串的事件")


def test_each_event_of_an_exported_run_shows_its_seq_and_its_json_as_text(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    first = len(b.events)
    for i in range(100):
        b.add("vendor/probe", {"n": i, "note": f'<b>bold</b> & "quoted" {i}', "名": "值"}, ignorable=True)
    path = tmp_path / "probes.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("probes"), *b.events]))
    html = render_path(str(path))
    run, lines = run_lines(html)
    assert run["data-run-count"] == "100"
    assert run["summary"] == f"100 events of type vendor/probe#{first}–#{first + 99}"
    assert len(lines) == 100
    for i, line in enumerate(lines):
        seq, _, json = line.partition(" ")
        assert seq == f"#{first + i}"
        assert orjson.loads(json) == b.events[first + i], "the event whole, markup in it as text"
    assert "<b>bold</b>" not in html, "escaped"


@pytest.mark.slow  # an export of thousands of rows
def test_a_long_stretch_of_bookkeeping_exports_every_row_in_folds_of_a_few_windows(tmp_path: Path) -> None:
    """Folds are drawn whole up to LONGEST_WINDOW rows, so a session of ordinary length exports as its page
    shows it; a longer stretch goes on in further folds (as the page's windows fold it), never as one fold
    that made the export quadratic and held every row at once (100,000 titles: 65 s and 1.2 GB, now 40 s and
    150 MB)."""
    b = LogBuilder()
    b.turn(1)
    # a short one crosses windows of EXPORT_WINDOW rows, and is still one fold
    stretches = {"short": LONGEST_WINDOW - EXPORT_WINDOW // 2, "long": 4_500}
    for name, n in stretches.items():
        for i in range(n):  # two kinds in turn: like events in a row would make one run row instead
            if i % 2:
                b.add("session/title", {"title": f"{name} {i}"})
            else:
                b.add("sandbox/mode", {"mode": f"m{i}"})
        b.turn(2 if name == "short" else 3)
    path = tmp_path / "titles.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("titles"), *b.events]))
    page = parse(render_path(str(path)))  # parsed once: a few MB of HTML
    folds = [int(head["data-fold-count"]) for head in page.select("[data-fold] > [data-fold-toggle]")]
    short = next(c for c in folds if c >= stretches["short"])
    assert short < LONGEST_WINDOW, "the short stretch is one fold"
    after = folds[folds.index(short) + 1 :]
    assert max(folds) <= LONGEST_WINDOW and sum(after) >= stretches["long"] and len(after) >= 3
    state = WebState(settings=Settings(), registry=Registry([str(path)]))
    shown = transcript(state, state.entry("titles")).rows
    assert [row.seq for row in flow_rows(page)] == [row.seq for row in shown], "every row, in order, once"
