"""A session with more steps than the budget page shows at once: the page and its JSON twin show the
newest steps, the same window for the same `from`, and page to the earlier ones, where the compaction
is marked; the chart draws the window's steps."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from dsh_inspect.web.routes.steps import STEPS_SHOWN

from tests.support.request_logs import compaction_between_calls, write_log
from tests.support.rows import attrs, select, text
from tests.support.server import app_client

TURNS = 105  # two steps a turn after the first two: more steps than one page shows
LAST = f"{TURNS}.2"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    b = compaction_between_calls()  # turns 1 and 2, a compaction before step 2.1 (the third step)
    for turn in range(3, TURNS + 1):
        b.turn(turn, f"Prompt {turn}")
    root = tmp_path_factory.mktemp("logs")
    write_log(root / "long" / "session.jsonl", b.events, "long")
    with app_client([str(root)]) as client:
        yield client


def page(client: httpx.Client, query: str = "") -> tuple[str, dict]:
    html = client.get(f"/sessions/long/steps{query}")
    twin = client.get(f"/api/sessions/long/steps{query}")
    assert html.status_code == twin.status_code == 200, html.text[:300]
    return html.text, twin.json()


def rows(html: str) -> list[str]:
    return attrs(html, "table[data-budget-table] tr[data-step-row]", "data-step-row")


def test_the_newest_steps_show_first_with_a_link_to_the_earlier_ones(client: httpx.Client) -> None:
    html, twin = page(client)
    total = twin["totalSteps"]
    assert total > STEPS_SHOWN
    shown = rows(html)
    assert shown == [s["key"] for s in twin["steps"]] and len(shown) == STEPS_SHOWN and shown[-1] == LAST
    assert attrs(html, "[data-budget-chart] svg a.budget-bar[data-bar]", "data-bar") == shown
    assert (twin["from"], twin["to"], twin["nextFrom"]) == (total - STEPS_SHOWN, total, None)
    # the range in the axis's units, turn.step
    assert text(html, "[data-steps-shown]") == f"Steps {shown[0]}–{LAST}: {STEPS_SHOWN} of {total}"
    assert attrs(html, "a[data-steps-earlier]", "href") == [f"/sessions/long/steps?from={twin['previousFrom']}"]
    assert not select(html, "a[data-steps-later]")
    # the compaction lies before the third step, on the earlier page: neither its row nor its marker here
    assert not twin["shrinks"] and not select(html, "[data-shrink]") and not select(html, "[data-marker]")


def test_the_earlier_page_and_its_twin_hold_the_first_steps_and_the_compaction(client: httpx.Client) -> None:
    newest, _ = page(client)
    html, first = page(client, "?from=0")
    shown = rows(html)
    assert shown == [s["key"] for s in first["steps"]] and len(shown) == STEPS_SHOWN and shown[0] == "1.1"
    assert set(shown) | set(rows(newest)) == {f"{t}.{s}" for t in range(1, TURNS + 1) for s in (1, 2)} - {"2.2"}
    assert (first["from"], first["previousFrom"], first["nextFrom"]) == (0, None, STEPS_SHOWN)
    assert attrs(html, "a[data-steps-later]", "href") == [f"/sessions/long/steps?from={STEPS_SHOWN}"]
    (shrink,) = first["shrinks"]
    assert shrink["kind"] == "compaction" and shrink["beforeStep"] == 2  # counted among all the steps
    assert attrs(html, "table[data-budget-table] tr[data-shrink]", "data-shrink") == ["compaction"]
    assert len(select(html, "[data-budget-chart] svg [data-marker]")) == 1
    assert "/api/sessions/long/steps?from=0" in attrs(html, ".budget-page nav a", "href")  # its twin, this window
