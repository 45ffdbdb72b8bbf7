"""Choosing what to compare (issue 41, item 7): "Compare with…" lists its candidates as the session list does
(title, first prompt, project, created, turns), those of the session's project first, newest first, and
filters them by text, on the page and in its JSON twin alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.builders import header
from tests.support.rows import attrs, select, text, texts
from tests.support.server import app_client
from tests.web.test_session_list_columns import one_turn, write

T0 = 1_700_000_000_000
DAY = 86_400_000
# key: (project, created, first prompt, title)
SESSIONS = {
    "mine": ("/work/shop", T0, "Price the blue mug", "Pricing the **blue** mug"),
    "shop-old": ("/work/shop", T0 + 1 * DAY, "Price the red mug", "Pricing the red mug"),
    "shop-new": ("/work/shop", T0 + 3 * DAY, "Price the green mug", "Pricing the `green` mug"),
    "other-new": ("/work/garden", T0 + 4 * DAY, "Water the roses", "Watering roses"),
    "other-old": ("/work/garden", T0 + 2 * DAY, "Prune the hedge", "Pruning the hedge"),
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("chooser")
    for key, (cwd, created, prompt, title) in SESSIONS.items():
        write(
            root / key / "session.jsonl",
            {**header(key), "cwd": cwd, "createdAt": created},
            one_turn(prompt, title).events,
        )
    return root


@pytest.fixture(scope="module")
def client(root: Path) -> Iterator[httpx.Client]:
    with app_client([str(root)]) as client:
        yield client


def chooser(client: httpx.Client, **params: str) -> dict[str, Any]:
    answer = client.get("/api/compare", params={"a": "mine", **params})
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def read_as_the_page_asks(client: httpx.Client, html: str) -> str:
    """What the page's requests for its candidates' reads answer: their cells, to be swapped in by id."""
    answers = []
    for ask in select(html, "[data-summaries-ask]"):
        asked = json.loads(str(ask["hx-vals"]))
        answers.append(client.post(str(ask["hx-post"]), data=asked).text)
    return "".join(answers)


def test_candidates_are_the_same_project_first_then_newest_first(client: httpx.Client) -> None:
    data = chooser(client)
    assert [c["key"] for c in data["others"]] == ["shop-new", "shop-old", "other-new", "other-old"]
    assert [c["sameProject"] for c in data["others"]] == [True, True, False, False]
    html = client.get("/compare", params={"a": "mine"}).text
    assert attrs(html, "[data-others] [data-compare-candidate]", "data-compare-candidate") == [
        "shop-new",
        "shop-old",
        "other-new",
        "other-old",
    ]
    assert len(select(html, "[data-others] tr[data-same-project]")) == 2


def test_each_candidate_shows_what_the_list_shows_once_read(root: Path) -> None:
    with app_client([str(root)]) as client:  # its own server: no candidate read yet
        each_candidate_shows_what_the_list_shows_once_read(client)


def each_candidate_shows_what_the_list_shows_once_read(client: httpx.Client) -> None:
    html = client.get("/compare", params={"a": "mine"}).text
    assert len(select(html, "[data-others] [data-summary-pending]")) == 3 * 4, "title, prompt, turns: being read"
    row = '[data-candidate="shop-new"]'
    assert text(html, f'{row} [data-cell="project"]').startswith("shop")
    assert select(html, f'{row} [data-cell="created"] time[data-local-time]')
    cells = read_as_the_page_asks(client, html)
    assert text(cells, "#title-shop-new") == "Pricing the green mug"  # as text, as the list shows titles
    assert text(cells, "#prompt-shop-new") == "Price the green mug"
    assert text(cells, "#counts-shop-new").startswith("1 turn")
    # read once, the page and its twin show them at once
    html = client.get("/compare", params={"a": "mine"}).text
    assert text(html, f"{row} [data-session-title]") == "Pricing the green mug"
    assert text(html, f"{row} [data-first-prompt]") == "Price the green mug"
    shop_new = next(c for c in chooser(client)["others"] if c["key"] == "shop-new")
    assert (shop_new["title"], shop_new["summary"]["firstPrompt"], shop_new["summary"]["turns"]) == (
        "Pricing the green mug",
        "Price the green mug",
        1,
    )
    assert shop_new["projectName"] == "shop" and shop_new["created"] == "2023-11-17 22:13 UTC"
    assert text(html, "h1.page-title") == "Compare Pricing the blue mug with…"


def test_a_filter_keeps_the_candidates_whose_text_holds_it(client: httpx.Client) -> None:
    read_as_the_page_asks(client, client.get("/compare", params={"a": "mine"}).text)
    assert [c["key"] for c in chooser(client, q="ROSES")["others"]] == ["other-new"]  # by title, any case
    assert [c["key"] for c in chooser(client, q="hedge")["others"]] == ["other-old"]  # by first prompt
    assert [c["key"] for c in chooser(client, q="garden")["others"]] == ["other-new", "other-old"]  # by project
    html = client.get("/compare", params={"a": "mine", "q": "red mug"}).text
    assert attrs(html, "[data-compare-candidate]", "data-compare-candidate") == ["shop-old"]
    assert one_value(html, "[data-compare-filter] input[name=q]") == "red mug"
    none = client.get("/compare", params={"a": "mine", "q": "no such words"}).text
    assert texts(none, "[data-no-candidates]") == ["No other session matches this filter."]


def test_the_chooser_speaks_chinese(client: httpx.Client) -> None:
    html = client.get("/compare", params={"a": "mine"}, headers={"Accept-Language": "zh-CN"}).text
    assert texts(html, "[data-others] [data-same-project-mark]") == ["同一项目", "同一项目"]
    assert attrs(html, "[data-compare-filter] input[name=q]", "placeholder") == ["按标题、首条提示、id、项目或路径筛选"]


def test_a_filter_too_long_is_refused(client: httpx.Client) -> None:
    assert client.get("/api/compare", params={"a": "mine", "q": "x" * 201}).status_code == 422


def one_value(html: str, selector: str) -> str:
    [value] = attrs(html, selector, "value")
    return value
