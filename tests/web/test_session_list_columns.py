"""The session list's columns, sorting and filters (issue 14): every column a reader tells sessions apart by,
titles as plain text, counts in the plural rules of each language, every choice in the URL, and the JSON
twin answering the same parameters with the same sessions in the same order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson
import pytest

from tests.support.builders import LogBuilder, header, two_turns
from tests.support.rows import attrs, one, select, text
from tests.support.server import app_client
from tests.support.writers import write_zstd

T0 = 1_700_000_000_000
COLUMNS = [
    "title", "prompt", "project", "created", "activity", "turns", "steps", "tokens", "duration", "cost", "verdict",
    "carrier",
]  # fmt: skip


def write(path: Path, head: dict[str, Any], events: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [head, *events]))


def one_turn(prompt: str, title: str | None = None, tokens: int | None = None, failing: bool = False) -> LogBuilder:
    b = LogBuilder()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user(prompt)
    b.assistant(1, 1, [{"type": "tool-call", "id": "call_1", "name": "read", "arguments": "{}"}])
    b.tool_round(1, 1, "call_1", "no such file" if failing else "alpha", is_error=failing)
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("step/start", {"turn": 1, "step": 2})
    usage = {"inputTokens": tokens, "outputTokens": 10} if tokens is not None else None
    b.assistant(1, 2, [{"type": "text", "text": "Done."}], **({"usage": usage} if usage else {}))
    b.add("step/end", {"turn": 1, "step": 2})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    if title is not None:
        b.add("session/title", {"title": title, "messageSeqs": [2], "source": {"kind": "fallback"}})
    return b


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("columns")
    alpha = one_turn("Read a.txt please", "Done. The file says **alpha**.", tokens=1_234_000)
    write(
        root / "alpha" / "session.jsonl", {**header("alpha"), "createdAt": T0 + 3, "cwd": "/work/alpha"}, alpha.events
    )
    failing = one_turn("Read the missing file", "Look for `b.txt`", tokens=50, failing=True)
    write(
        root / "failing" / "session.jsonl",
        {**header("failing"), "createdAt": T0 + 1, "cwd": "/work/alpha"},
        failing.events,
    )
    twice = two_turns()
    twice.turn(3, "Zip it up")
    write_zstd(
        root / "zipped" / "session.jsonl.zstd",
        {**header("zipped"), "createdAt": T0 + 2, "cwd": "/work/beta"},
        [twice.events],
    )
    events = two_turns().events
    lines = [orjson.dumps(x) for x in [{**header("broken"), "createdAt": T0 + 4, "cwd": "/srv/gamma"}, *events]]
    first_end = next(e["seq"] for e in events if e["type"] == "turn/end")
    lines.insert(first_end + 2, b"{garbage")  # after turn 1, before turn 2's end: dsh refuses the log
    (root / "broken").mkdir()
    (root / "broken" / "session.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    with app_client([str(root)]) as client:
        client.get("/api/sessions", params={"summaries": "true"})  # every session read once
        yield client


def listed(client: httpx.Client, **params: str) -> list[dict[str, Any]]:
    answer = client.get("/api/sessions", params=params)
    assert answer.status_code == 200, answer.text
    sessions: list[dict[str, Any]] = answer.json()["sessions"]
    return sessions


def page_keys(client: httpx.Client, **params: str) -> list[str]:
    return attrs(client.get("/", params=params).text, "tr[data-session-key]", "data-session-key")


def column_value(session: dict[str, Any], column: str) -> Any:
    s = session["summary"] or {}
    return {
        "title": session["title"].casefold(),
        "prompt": (s.get("firstPrompt") or "").casefold() or None,
        "project": session["project"],
        "created": session["createdAt"],
        "activity": s.get("lastActivityAt"),
        "turns": s.get("turns"),
        "steps": s.get("steps"),
        "tokens": s.get("tokens"),
        "duration": (s.get("durations") or {}).get("wallMs"),
        "cost": (s.get("cost") or {}).get("total"),
        "verdict": ["accepted", "repaired", "refused", "unsupported", "unreadable"].index(s["verdict"]),
        "carrier": session["carrier"],
    }[column]


def test_the_list_has_every_column_and_each_row_fills_each(client: httpx.Client) -> None:
    html = client.get("/").text
    assert attrs(html, "[data-session-list] thead th", "data-column") == [c for c in COLUMNS if c != "steps"]
    assert attrs(html, "[data-session-list] thead a[data-sort]", "data-sort") == COLUMNS
    rows = select(html, "tr[data-session-key]")
    assert len(rows) == 4
    for row in rows:
        assert [td["data-cell"] for td in row.find_all("td")] == [
            "title", "prompt", "project", "created", "activity", "counts", "tokens", "duration", "cost", "verdict",
            "carrier",
        ]  # fmt: skip
    alpha = one(html, 'tr[data-session-key="alpha"]')
    assert text(alpha, "[data-first-prompt]") == "Read a.txt please"
    assert (
        text(alpha, '[data-cell="project"]') == "alpha"
        and alpha.select_one('[data-cell="project"]')["title"] == "/work/alpha"
    )
    # UTC in the markup; the page's script words each <time> in the reader's zone (tests/e2e/test_session_list.py)
    assert text(alpha, '[data-cell="created"]') == "2023-11-14 22:13 UTC"
    assert one(alpha, '[data-cell="created"] time[data-local-time]')["datetime"] == "2023-11-14T22:13:20.003Z"
    assert text(alpha, "[data-last-activity]") == "2026-09-21 14:13 UTC"
    assert one(alpha, "[data-last-activity] time[data-local-time]")["datetime"].startswith("2026-09-21T14:13:")
    assert text(alpha, "[data-tokens]") == "1,234,010"  # grouped, as every count
    assert text(alpha, '[data-cell="carrier"]').startswith("jsonl")
    assert text(one(html, 'tr[data-session-key="zipped"]'), '[data-cell="carrier"]').startswith("jsonl-zstd")
    assert text(one(html, 'tr[data-session-key="failing"]'), "[data-errors]") == "1 error"
    assert text(one(html, 'tr[data-session-key="broken"]'), ".verdict") == "refused"


def test_titles_are_plain_text_and_a_session_without_one_shows_its_id(client: httpx.Client) -> None:
    html = client.get("/").text
    assert text(html, "#title-alpha") == "Done. The file says alpha."
    assert text(html, "#title-failing") == "Look for b.txt"
    assert text(html, "#title-zipped") == "zipped"
    assert "**" not in text(html, "[data-session-list]")
    alpha = next(s for s in listed(client) if s["key"] == "alpha")
    assert alpha["title"] == alpha["summary"]["plainTitle"] == "Done. The file says alpha."
    assert alpha["summary"]["title"] == "Done. The file says **alpha**.", "the twin keeps the title as logged too"
    partial = client.post("/sessions-summaries", data={"key": ["alpha"]}).text
    assert text(partial, "#title-alpha") == "Done. The file says alpha."


@pytest.mark.parametrize("column", COLUMNS)
def test_every_column_sorts_both_ways_on_the_page_and_its_twin(client: httpx.Client, column: str) -> None:
    for order in ("asc", "desc"):
        sessions = listed(client, sort=column, order=order)
        values = [column_value(s, column) for s in sessions]
        known = [v for v in values if v is not None]
        assert values == known + [None] * (len(values) - len(known)), "sessions without a value come last"
        assert known == sorted(known, reverse=order == "desc"), (column, order, values)
        assert page_keys(client, sort=column, order=order) == [s["key"] for s in sessions]
        html = client.get("/", params={"sort": column, "order": order}).text
        th = one(html, f'th[data-column="{"turns" if column == "steps" else column}"]')
        assert th["aria-sort"] == ("ascending" if order == "asc" else "descending")
        # the header link turns the order round; the form carries the sort along with a new search
        link = parse_qs(urlsplit(one(html, f'a[data-sort="{column}"]')["href"]).query)
        assert link.get("order", ["desc"]) == ["desc" if order == "asc" else "asc"]  # newest first: the default
        default = (column, order) == ("created", "desc")
        assert attrs(html, "form[data-list-form] input[name=sort]", "value") == ([] if default else [column])
    assert [s["key"] for s in listed(client, sort="turns", order="desc")][:1] == ["zipped"]
    assert [s["key"] for s in listed(client, sort="created", order="asc")] == ["failing", "zipped", "alpha", "broken"]


def test_the_default_is_newest_first_and_each_header_says_it_is_not_sorted(client: httpx.Client) -> None:
    html = client.get("/").text
    assert page_keys(client) == ["broken", "alpha", "zipped", "failing"]
    assert one(html, 'th[data-column="created"]')["aria-sort"] == "descending"
    assert one(html, 'th[data-column="title"]')["aria-sort"] == "none"
    assert one(html, 'a[data-sort="created"]')["href"] == "/?sort=created&order=asc"
    assert select(html, "form[data-list-form] input[name=sort]") == []


@pytest.mark.parametrize(
    ("params", "keys"),
    [
        ({"verdict": "refused"}, ["broken"]),
        ({"verdict": "accepted"}, ["alpha", "zipped", "failing"]),
        ({"project": "/work/alpha"}, ["alpha", "failing"]),
        ({"carrier": "jsonl-zstd"}, ["zipped"]),
        ({"errors": "true"}, ["broken", "failing"]),
        ({"errors": "true", "verdict": "accepted"}, ["failing"]),
        ({"project": "/work/alpha", "sort": "tokens", "order": "asc"}, ["failing", "alpha"]),
        ({"q": "MISSING file"}, ["failing"]),  # the first prompt answers a search too
        ({"q": "says alpha"}, ["alpha"]),
        ({"verdict": "unsupported"}, []),
    ],
)
def test_filters_narrow_the_page_and_its_twin_alike(
    client: httpx.Client, params: dict[str, str], keys: list[str]
) -> None:
    assert [s["key"] for s in listed(client, **params)] == keys
    assert page_keys(client, **params) == keys
    html = client.get("/", params=params).text
    form = one(html, "form[data-list-form]")
    assert (form["method"], form["action"]) == ("get", "/")
    for name, value in params.items():
        if name == "errors":
            assert form.select_one("input[name=errors]").has_attr("checked")
        elif name in ("verdict", "project", "carrier"):
            assert attrs(form, f"select[name={name}] option[selected]", "value") == [value]
        else:
            assert attrs(form, f"input[name={name}]", "value") == [value]
    assert text(html, "[data-list-part=count]") == f"{len(keys)} session" + ("" if len(keys) == 1 else "s")
    assert bool(select(html, "[data-session-list][hidden]")) == (not keys)


def test_the_filters_offer_the_loaded_projects_and_carriers(client: httpx.Client) -> None:
    html = client.get("/").text
    assert attrs(html, "select[name=project] option", "value") == ["", "/srv/gamma", "/work/alpha", "/work/beta"]
    assert attrs(html, "select[name=carrier] option", "value") == ["", "jsonl", "jsonl-zstd"]
    assert "unreadable" in attrs(html, "select[name=verdict] option", "value")
    gone = client.get("/", params={"project": "/nowhere"}).text
    assert attrs(gone, "select[name=project] option[selected]", "value") == ["/nowhere"], "the form shows the filter"
    assert page_keys(client, project="/nowhere") == []


def test_the_pager_keeps_every_choice(tmp_path: Path) -> None:
    for i in range(60):
        write(
            tmp_path / f"s{i:02d}" / "session.jsonl", {**header(f"s{i:02d}"), "createdAt": T0 + i}, two_turns().events
        )
    with app_client([str(tmp_path)]) as client:
        html = client.get("/", params={"carrier": "jsonl", "sort": "created", "order": "asc", "q": "s"}).text
        assert attrs(html, "nav.pager a[rel~=next]", "href") == ["/?q=s&carrier=jsonl&sort=created&order=asc&page=2"]
        second = client.get("/api/sessions", params={"carrier": "jsonl", "sort": "created", "order": "asc", "page": 2})
        assert [s["id"] for s in second.json()["sessions"]] == [f"s{i:02d}" for i in range(50, 60)]
        assert page_keys(client, carrier="jsonl", sort="created", order="asc", page="2") == [
            f"s{i:02d}" for i in range(50, 60)
        ]


def test_a_choice_the_list_does_not_know_is_refused_by_name(client: httpx.Client) -> None:
    for params in ({"sort": "colour"}, {"order": "sideways"}, {"verdict": "maybe"}):
        ((name, value),) = params.items()
        for path in ("/api/sessions", "/"):
            answer = client.get(f"{path}", params=params)
            assert answer.status_code == 422
            assert name in answer.text and repr(value).strip("'") in answer.text, answer.text


def test_counts_follow_each_languages_plural_rules(client: httpx.Client) -> None:
    english = client.get("/").text
    assert text(english, "#counts-alpha") == "1 turn · 2 steps"
    assert text(english, "#counts-zipped") == "3 turns · 6 steps"
    assert text(english, "#counts-broken [data-errors]") == "2 errors"  # its two findings
    assert text(english, "[data-list-part=count]") == "4 sessions"
    assert text(client.get("/", params={"carrier": "jsonl-zstd"}).text, "[data-list-part=count]") == "1 session"
    chinese = client.get("/", headers={"Accept-Language": "zh-CN"}).text
    assert text(chinese, "#counts-alpha") == "1 轮 · 2 步"
    assert text(chinese, "#counts-zipped") == "3 轮 · 6 步"
    assert text(chinese, "#counts-failing [data-errors]") == "1 个错误"
    assert text(chinese, "[data-list-part=count]") == "共 4 个会话"
    partial = client.post("/sessions-summaries", data={"key": ["alpha"]}, headers={"Accept-Language": "zh-CN"}).text
    assert text(partial, "#counts-alpha") == "1 轮 · 2 步"
