"""The reader's language (issue 41 item 6): `?lang=en|zh` on any page or twin, remembered by a cookie; the top
bar's switch links this page in each language; `Accept-Language` decides while the reader has chosen none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.row_logs import PARENT, timed_log, write
from tests.support.rows import attrs, one, parse, text
from tests.support.server import app_client

CHINESE_BROWSER = {"Accept-Language": "zh-CN,zh;q=0.9"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[httpx.Client]:
    write(tmp_path, PARENT, timed_log())
    with app_client([str(tmp_path)]) as client:
        yield client


def page_lang(answer: httpx.Response) -> str:
    return str(one(parse(answer.text), "html")["lang"])


def test_the_browsers_language_rules_until_the_reader_chooses(client: httpx.Client) -> None:
    assert page_lang(client.get("/")) == "en"
    assert page_lang(client.get("/", headers=CHINESE_BROWSER)) == "zh-CN"
    assert text(parse(client.get("/", headers=CHINESE_BROWSER).text), "h1") == "会话"
    assert page_lang(client.get("/", params={"lang": "fr"}, headers=CHINESE_BROWSER)) == "zh-CN", "no such choice"


def test_a_choice_is_worded_and_remembered(client: httpx.Client) -> None:
    chosen = client.get(f"/sessions/{PARENT}", params={"lang": "zh"})
    assert page_lang(chosen) == "zh-CN"
    assert chosen.cookies.get("dsh-inspect-lang") == "zh"
    later = client.get("/")  # no `?lang=`: the cookie the client kept
    assert page_lang(later) == "zh-CN" and text(parse(later.text), "h1") == "会话"
    assert "set-cookie" not in later.headers, "nothing new to remember"
    back = client.get("/", params={"lang": "en"}, headers=CHINESE_BROWSER)
    assert page_lang(back) == "en" and client.cookies.get("dsh-inspect-lang") == "en"
    assert page_lang(client.get("/", headers=CHINESE_BROWSER)) == "en", "the choice outranks the browser's"


def test_the_switch_links_this_page_in_each_language(client: httpx.Client) -> None:
    doc = parse(client.get("/", params={"sort": "title", "order": "asc"}).text)
    assert attrs(doc, "[data-lang-switch] a", "href") == [
        "/?sort=title&order=asc&lang=en",
        "/?sort=title&order=asc&lang=zh",
    ]
    assert attrs(doc, "[data-lang-switch] a[aria-current]", "data-lang") == ["en"]
    assert [a.get_text() for a in doc.select("[data-lang-switch] a")] == ["EN", "中文"]
    zh = parse(client.get(f"/sessions/{PARENT}", params={"lang": "zh"}).text)
    assert attrs(zh, "[data-lang-switch] a[aria-current]", "data-lang") == ["zh"]
    assert attrs(zh, "[data-lang-switch]", "aria-label") == ["语言"]


def test_every_twin_takes_the_choice_and_answers_alike(client: httpx.Client) -> None:
    """A twin is for scripts: its words are the same in either language (English), `?lang=` or not."""
    for path in ("/api/sessions", f"/api/sessions/{PARENT}", f"/api/sessions/{PARENT}/steps"):
        chosen = client.get(path, params={"lang": "zh"}, headers=CHINESE_BROWSER)
        assert chosen.status_code == 200 and chosen.headers["content-type"].startswith("application/json"), path
        assert chosen.json() == client.get(path).json(), path
