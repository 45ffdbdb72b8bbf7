"""A session's title is text wherever it names the session (issue 41, item 4): a model's `**alpha**` reads
"alpha" on the session page and in its <title>, in search hits, the model view, compare and the export, as it
does in the list; the twins keep the title as logged beside its plain text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dsh_inspect.web.render import render_path

from tests.support.builders import header
from tests.support.rows import one, parse, text
from tests.support.server import app_client
from tests.web.test_session_list_columns import one_turn, write

LOGGED = "Done. The file says **alpha** in `a.txt`."
PLAIN = "Done. The file says alpha in a.txt."


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("titles")
    for key in ("titled", "other"):
        log = one_turn("Read a.txt please", LOGGED if key == "titled" else "Other **beta**")
        write(root / key / "session.jsonl", {**header(key), "cwd": "/work/alpha"}, log.events)
    return root


@pytest.fixture(scope="module")
def client(root: Path) -> Iterator[httpx.Client]:
    with app_client([str(root)]) as client:
        yield client


def page_title(html: str) -> str:
    return text(html, "head title")


def test_the_session_page_heading_and_its_title_are_text(client: httpx.Client) -> None:
    html = client.get("/sessions/titled").text
    assert text(html, ".session-head h1.page-title") == PLAIN
    assert page_title(html) == f"{PLAIN} · dsh-inspect"
    twin = client.get("/api/sessions/titled").json()
    assert (twin["title"], twin["plainTitle"]) == (LOGGED, PLAIN), "the twin keeps the title as logged too"


def test_the_session_page_read_whole_names_it_as_text_too(client: httpx.Client) -> None:
    # `?at=` skips the first screen read from the log's first bytes: the page reads the whole log first
    html = client.get("/sessions/titled", params={"at": "end"}).text
    assert text(html, ".session-head h1.page-title") == PLAIN


def test_search_hits_name_their_session_as_text(client: httpx.Client) -> None:
    html = client.get("/search", params={"q": "a.txt"}).text
    assert text(html, '[data-finder-session="titled"] .finder-title a') == PLAIN
    hit = next(h for h in client.get("/api/search", params={"q": "a.txt"}).json()["hits"] if h["key"] == "titled")
    assert (hit["title"], hit["plainTitle"]) == (LOGGED, PLAIN)


@pytest.mark.parametrize("path", ["/sessions/titled/steps", "/sessions/titled/steps/1.1"])
def test_the_model_view_names_its_session_as_text(client: httpx.Client, path: str) -> None:
    assert f" · {PLAIN} · " in page_title(client.get(path).text)


def test_the_compare_page_names_both_sessions_as_text(client: httpx.Client) -> None:
    html = client.get("/compare", params={"a": "titled", "b": "other"}).text
    assert text(html, "[data-session-a]") == PLAIN
    assert text(html, "[data-session-b]") == "Other beta"
    assert PLAIN in page_title(html)
    twin = client.get("/api/compare", params={"a": "titled", "b": "other"}).json()
    assert (twin["a"]["plainTitle"], twin["b"]["plainTitle"]) == (PLAIN, "Other beta")


def test_the_export_names_its_session_as_text(root: Path) -> None:
    html = render_path(str(root / "titled" / "session.jsonl"))
    assert text(html, ".session-head h1.page-title") == PLAIN
    assert page_title(html) == f"{PLAIN} · dsh-inspect"
    assert "**alpha**" not in str(one(parse(html), ".session-head"))
