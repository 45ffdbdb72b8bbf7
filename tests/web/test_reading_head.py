"""The session page's head that stays (issue 39, item 2), without a browser: it names the session by its title's
text (never its Markdown or markup), its project by the folder it ran in, with the whole path on hover, and the
pattern the turn in view is worded by; the JSON twin says the same project name. A session without a title is
named by its id."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from dsh_inspect.model.plain_text import title_text

from tests.support.builders import LogBuilder, header, two_turns
from tests.support.rows import one, text
from tests.support.server import app_client

TITLE = "**Fix** the <b>parser</b>"


def write(path: Path, key: str, log: LogBuilder, cwd: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{**header(key), "cwd": cwd}, *log.events]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("heads")
    titled = two_turns()
    titled.add("session/title", {"title": TITLE, "messageSeqs": [], "source": {"kind": "user"}})
    write(root / "titled" / "session.jsonl", "titled", titled, "/work/shop/")
    write(root / "untitled" / "session.jsonl", "untitled", two_turns(), "/srv/api")
    with app_client([str(root)]) as c:
        yield c


def test_the_head_names_the_title_as_text_and_the_project(client: httpx.Client) -> None:
    head = one(client.get("/sessions/titled").text, "[data-toolbar] [data-reading-head]")
    # its text as every place names it, the markup in it shown as text, never as markup
    assert text(head, "[data-reading-title]") == title_text(TITLE) == "Fix the <b>parser</b>"
    assert head.select("b, strong") == []
    project = one(head, "[data-reading-project]")
    assert text(head, "[data-reading-project]") == "shop" and project["title"] == "/work/shop/"
    assert one(head, "[data-reading-turn]")["data-pattern"] == "Turn {turn}"
    assert one(head, "input[data-details-toggle]") is not None
    assert client.get("/api/sessions/titled").json()["projectName"] == "shop"


def test_a_session_without_a_title_is_named_by_its_id_in_either_language(client: httpx.Client) -> None:
    page = client.get("/sessions/untitled", headers={"Accept-Language": "zh-CN"}).text
    head = one(page, "[data-reading-head]")
    assert text(head, "[data-reading-title]") == "untitled"
    assert one(head, "[data-reading-turn]")["data-pattern"] == "第 {turn} 轮"
    assert head["aria-label"] == "当前位置"
