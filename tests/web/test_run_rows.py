"""A run of like rows on the session page and its JSON twin (issue 15 item 4): one row that says how many
events and of what, and opens to show them a page at a time, each as it would be on its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.support.bombs import tiny_records_root
from tests.support.builders import LogBuilder, header
from tests.support.rows import flow_rows, parse
from tests.support.server import app_client

WINDOW = 50
RUN = "seq-1000-4999"  # 5,000 `{}` lines: the first 1,000 stay rows, each after its two listed findings
CONTEXT = 5


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tiny_records_root(tmp_path_factory.mktemp("runs"), 5_000)
    with app_client([str(root)], window_rows=WINDOW) as client:
        yield client


def api(client: httpx.Client, path: str, **params: Any) -> Any:
    response = client.get(f"/api/sessions/tiny-records{path}", params=params, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_twin_shows_the_run_as_one_row_with_its_count_and_seqs(client: httpx.Client) -> None:
    window = api(client, "/rows", at=RUN)
    [run] = [r for r in window["rows"] if r["run"] is not None]
    assert run["key"] == run["anchor"] == RUN
    assert run["run"] == {"count": 4000, "first": 1000, "last": 4999}
    assert window["totalRows"] < 3_100, "no row per event"


def test_paging_through_a_run_gives_each_of_its_rows_once(client: httpx.Client) -> None:
    keys: list[str] = []
    start: int | None = 0
    while start is not None:
        page = api(client, "/rows", run=RUN, **{"from": start})
        assert page["run"] == RUN and page["totalRows"] == 4000
        keys += [r["key"] for r in page["rows"]]
        start = page["nextFrom"]
    assert keys == [f"seq-{seq}" for seq in range(1000, 5000)]
    assert {r["kind"] for r in page["rows"]} == {"unknown"}


def test_the_page_shows_the_run_row_closed_with_how_many_events_and_of_what(client: httpx.Client) -> None:
    html = client.get("/sessions/tiny-records", params={"at": RUN}).text
    [row] = [r for r in flow_rows(html) if r.anchor == RUN]
    run = row.element.select_one("details[data-run]")
    assert run is not None and not run.has_attr("open")
    assert run["data-run-count"] == "4000"
    assert "4,000 events whose type is not a string" in run.get_text()
    assert "#1000–#4999" in run.get_text()
    assert run.select(".flow-item") == [], "its rows wait until it is opened"
    zh = client.get("/sessions/tiny-records", params={"at": RUN}, headers={"accept-language": "zh-CN"}).text
    assert "4,000 个类型不是字符串的事件" in zh


def test_a_run_page_partial_renders_its_rows_as_rows_with_the_next_loader(client: httpx.Client) -> None:
    html = client.get("/sessions/tiny-records/rows", params={"run": RUN, "from": 100}).text
    page = parse(html)
    anchors = [r.anchor for r in flow_rows(html)]
    assert anchors == [f"seq-{seq}" for seq in range(1100, 1100 + WINDOW)]
    assert page.select_one("[data-run-next]")["data-run-next"] == str(100 + WINDOW)  # type: ignore[index]
    assert page.select_one("[data-run-earlier]") is not None


def test_each_row_of_a_run_opens_its_body_the_first_too(client: httpx.Client) -> None:
    """A run's first row has the run's seq: its body, sent when it opens (decision 0048), is its own, as
    every other row's of the run is."""
    html = client.get("/sessions/tiny-records/rows", params={"run": RUN, "from": 0}).text
    first, second = flow_rows(html)[:2]
    for row in (first, second):
        assert row.element.select("[data-lazy-body]"), row.anchor
        body = client.get(f"/sessions/tiny-records/row-bodies/{row.seq}")
        assert body.status_code == 200 and f'"seq": {row.seq}' in body.text, (row.anchor, body.status_code)
    assert api(client, f"/row-bodies/{first.seq}")["key"] == first.key  # the twin is that row's, not the run's


def test_an_anchor_inside_a_run_opens_the_run_at_that_row(client: httpx.Client) -> None:
    html = client.get("/sessions/tiny-records", params={"at": "seq-2500"}).text
    run = parse(html).select_one("details[data-run]")
    assert run is not None and run.has_attr("open")
    inner = [r.anchor for r in flow_rows(str(run))]
    assert inner[0] == f"seq-{2500 - CONTEXT}" and "seq-2500" in inner
    twin = api(client, "", at="seq-2500")
    assert twin["atIndex"] is not None and twin["rows"][twin["atIndex"] - twin["from"]]["key"] == RUN
    assert "seq-2500" in [r["key"] for r in twin["openedRun"]["rows"]]
    assert api(client, "/locate", anchor="seq-2500")["index"] == twin["atIndex"]


def test_a_run_key_no_row_has_is_not_found(client: httpx.Client) -> None:
    response = client.get("/api/sessions/tiny-records/rows", params={"run": "seq-1-2"})
    assert response.status_code == 404


def test_a_run_of_bookkeeping_events_folds_and_its_fold_counts_its_events(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    for i in range(100):
        b.add("session/title", {"title": f"title number {i}"})
    path = tmp_path / "titles" / "session.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("titles"), *b.events]))
    with app_client([str(tmp_path)]) as client:
        html = client.get("/sessions/titles").text
        body = client.get(f"/sessions/titles/bodies/{len(b.events) - 1}", params={"part": "detail"})
    folds = [f.get_text() for f in parse(html).select("[data-fold] .fold-head")]
    assert "100 events: session/title" in folds, folds
    assert body.status_code == 200 and "title number 99" in body.text, "a row inside a run has its body"


AT_FEW_ROWS_IN = "seq-1020"  # 20 rows into the run: its page opens 5 rows before, fewer than a page from the start


@pytest.mark.slow  # 4,000 rows paged and parsed as HTML; its twin is in the fast lanes
def test_a_run_opened_a_few_rows_in_pages_each_of_its_rows_once_on_the_page(client: httpx.Client) -> None:
    page = parse(client.get("/sessions/tiny-records", params={"at": AT_FEW_ROWS_IN}).text)
    run = page.select_one("details[data-run]")
    assert run is not None and run.has_attr("open")
    anchors = [r.anchor for r in flow_rows(str(run))]
    loader = run.select_one("[data-run-earlier]")
    while loader is not None:  # the reader clicks "Show earlier rows of the run" until there are none
        earlier = client.get(f"{loader['hx-get']}").text
        anchors = [r.anchor for r in flow_rows(earlier)] + anchors
        loader = parse(earlier).select_one("[data-run-earlier]")
    later = run.select_one("[data-run-next]")
    while later is not None:  # and scrolls down to the run's end
        html = client.get(f"{later['hx-get']}").text
        anchors += [r.anchor for r in flow_rows(html)]
        later = parse(html).select_one("[data-run-next]")
    assert anchors == [f"seq-{seq}" for seq in range(1000, 5000)], "every row of the run once, in order"


def test_a_run_opened_a_few_rows_in_pages_each_of_its_rows_once_in_the_twin(client: httpx.Client) -> None:
    opened = api(client, "", at=AT_FEW_ROWS_IN)["openedRun"]
    assert opened["from"] == 15 and opened["previousFrom"] == 0
    keys = [r["key"] for r in opened["rows"]]
    page = opened
    while page["previousFrom"] is not None:
        page = api(client, "/rows", run=RUN, **{"from": page["previousFrom"], "to": page["from"]})
        keys = [r["key"] for r in page["rows"]] + keys
    page = opened
    while page["nextFrom"] is not None:
        page = api(client, "/rows", run=RUN, **{"from": page["nextFrom"]})
        keys += [r["key"] for r in page["rows"]]
    assert keys == [f"seq-{seq}" for seq in range(1000, 5000)], "every row of the run once, in order"


# Anchors that look like a seq and are not one: `²` is a digit to `str.isdigit` and not to `int`, and Python
# will not make an int of more than 4,300 digits.
MALFORMED = ["seq-²", "seq-1²", "outside-²", "seq-" + "9" * 5_000, "seq-" + "9" * 900, "seq-1-²"]


@pytest.mark.parametrize(
    "anchor", MALFORMED, ids=["superscript", "digit-superscript", "outside", "huge", "long", "run"]
)
def test_a_malformed_anchor_is_an_unknown_anchor_never_a_server_error(client: httpx.Client, anchor: str) -> None:
    base = "/sessions/tiny-records"
    page = client.get(base, params={"at": anchor})
    assert page.status_code in (200, 422), page.text
    if page.status_code == 200:
        assert parse(page.text).select_one("[data-at-missing]") is not None, "the page says no row has it"
    for url, params in [
        (f"{base}/rows", {"at": anchor}),
        ("/api/sessions/tiny-records", {"at": anchor}),
        ("/api/sessions/tiny-records/rows", {"at": anchor}),
        ("/api/sessions/tiny-records/locate", {"anchor": anchor}),
    ]:
        response = client.get(url, params=params)
        assert response.status_code in (200, 404, 422), (url, response.status_code, response.text[:200])
        if response.status_code == 200:  # the twin: the session, opened at no row
            assert response.json()["atIndex"] is None, url
        else:  # said why, not a bare status
            assert anchor[:40] in response.text or "at most" in response.text or "no row" in response.text, url
