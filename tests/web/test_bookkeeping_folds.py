"""Consecutive bookkeeping rows (model.rules.BOOKKEEPING_TYPES) fold into one compact row per run, in
every window: the fold names how many events and which, and holds every one of those rows, nothing dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import Tag
from dsh_inspect.log.writer import write_artifact
from dsh_inspect.model.rules import BOOKKEEPING_TYPES

from tests.support.builders import PROVIDER, LogBuilder, header
from tests.support.rows import flow_rows, parse
from tests.support.server import app_client

SETTINGS = ("permission/preset", "sandbox/mode", "approval/policy")
REQUEST = ("session/title", "request/header", "request/context", "session/title-llm-request")


def _log(root: Path) -> None:
    b = LogBuilder()
    for type_ in SETTINGS:
        b.add(type_, {"value": "default"})
    b.add("turn/start", {"turn": 1})
    b.add("agent/inbox/spliced", {"inbox": "next-step", "messages": []})  # a run of one
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("Read a.txt please")
    b.add("session/title", {"title": "Reading a file"})
    b.add("request/header", {"header": {"config": dict(PROVIDER)}, "reason": "initial"})
    b.add("request/context", {"context": []})
    b.add("session/title-llm-request", {"request": {}})
    b.assistant(1, 1, [{"type": "text", "text": "It says alpha."}])
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    write_artifact(root, header("folds"), [b.events], "none")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("folds")
    _log(root)
    return root


def folds(html: str) -> list[Tag]:
    return list(parse(html).select("[data-fold]"))


def rows_held(fold: Tag) -> int:
    """How many rows the fold's head says it holds (`data-fold-count`)."""
    head = fold.select_one("[data-fold-toggle]")
    assert head is not None
    return int(str(head["data-fold-count"]))


def summary(fold: Tag) -> str:
    head, rows = fold.select_one("[data-fold-toggle]"), fold.select_one("[data-fold-rows]")
    assert head is not None and head.name == "button" and head["aria-expanded"] == "false"
    assert rows is not None and head["aria-controls"] == rows["id"]
    return head.get_text()


def test_each_run_of_bookkeeping_rows_is_one_fold_with_its_count_and_types(logs: Path) -> None:
    with app_client([str(logs)]) as client:
        html = client.get("/sessions/folds").text
        twin = client.get("/api/sessions/folds").json()
    found = folds(html)
    assert [summary(f) for f in found] == [
        "3 events: permission/preset, sandbox/mode, approval/policy",
        "1 event: agent/inbox/spliced",
        "4 events: session/title, request/header, request/context, …",
    ]
    assert [rows_held(f) for f in found] == [3, 1, 4]
    held = [[row.anchor for row in flow_rows(str(f))] for f in found]
    bookkeeping = [r for r in twin["rows"] if r["bookkeeping"]]
    assert [a for run in held for a in run] == [r["anchor"] for r in bookkeeping]
    assert {r["type"] for r in bookkeeping} == {*SETTINGS, "agent/inbox/spliced", *REQUEST} <= BOOKKEEPING_TYPES
    last = found[2].select_one("[data-fold-toggle]")
    assert last is not None and last["title"] == ", ".join(REQUEST), "its title names every type"


def test_nothing_is_dropped_every_anchor_is_on_the_page_in_order(logs: Path) -> None:
    with app_client([str(logs)]) as client:
        html = client.get("/sessions/folds").text
        twin = client.get("/api/sessions/folds").json()
    rows = flow_rows(html)
    assert [r.anchor for r in rows] == [r["anchor"] for r in twin["rows"]]
    for row in rows:  # a bookkeeping row is always inside a fold, a conversation row never
        assert (row.element.find_parent(attrs={"data-fold": True}) is not None) == row.bookkeeping, row.key


def test_folds_are_per_window_and_keep_every_row_of_each(logs: Path) -> None:
    with app_client([str(logs)], window_rows=5) as client:
        twin_rows: list[str] = []
        shown: list[str] = []
        start: int | None = 0
        while start is not None:
            html = client.get("/sessions/folds/rows", params={"from": start}).text
            twin = client.get("/api/sessions/folds/rows", params={"from": start}).json()
            shown += [r.anchor for r in flow_rows(html)]
            twin_rows += [r["anchor"] for r in twin["rows"]]
            for fold in folds(html):
                assert rows_held(fold) == len(flow_rows(str(fold))) >= 1
                assert all(r.bookkeeping for r in flow_rows(str(fold)))
            start = twin["nextFrom"]
    assert shown == twin_rows and len(shown) == len(set(shown))


def test_a_run_row_in_a_fold_counts_each_of_its_events(tmp_path: Path) -> None:
    """70 like bookkeeping events are one run row, held by the fold with the rows around it: the head counts the
    events (72), not the rows (3), as the live tail words it too (app/web/present/folds.py)."""
    b = LogBuilder()
    b.turn(1, "first prompt")
    b.add("session/title", {"title": "Runs"})
    for i in range(70):
        b.add("sandbox/mode", {"mode": f"m{i}"})
    b.add("approval/policy", {"policy": "never"})
    b.turn(2, "second prompt")
    write_artifact(tmp_path, header("runs"), [b.events], "none")
    with app_client([str(tmp_path)]) as client:
        html = client.get("/sessions/runs").text
    (fold,) = [f for f in folds(html) if f.select_one("[data-run]")]
    assert summary(fold) == "72 events: session/title, sandbox/mode, approval/policy"
    assert rows_held(fold) == 3
