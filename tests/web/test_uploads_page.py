"""The uploads page tells uploads apart (issue 30, item 3): each upload by its sessions' titles and ids, when it
came, its size and carrier, with a delete button that names what goes; paged newest first through the catalog's
index, the JSON twin beside it with the same pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from dsh_inspect.web.present.clock import WallClock
from jinja2.filters import do_filesizeformat

from tests.support.builders import LogBuilder, header
from tests.support.rows import asks, attrs, one, select, text, text_of, texts
from tests.support.server import app_client
from tests.support.uploads import sqlite_bytes

TITLES = [
    "Fix the flaky login test",
    "Refactor the billing module",
    "为缓存层添加单元测试",
    "Investigate the leak",
    "Write release notes",
    "Bump the dependencies",
    "Answer the review",
]


def titled_log(session_id: str, title: str, turns: int = 1) -> bytes:
    """A dsh log whose session has a title (`session/title`, the last one wins)."""
    b = LogBuilder()
    for n in range(1, turns + 1):
        b.turn(n)
    b.add("session/title", {"title": title, "messageSeqs": [0], "source": {"kind": "fallback"}})
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *b.events])


def upload(client: httpx.Client, data: bytes, name: str = "session.jsonl") -> dict[str, Any]:
    response = client.post("/api/uploads", params={"name": name}, content=data, timeout=60)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()["upload"]
    return body


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """Seven different sessions, each uploaded as `session.jsonl`, as dsh names every log."""
    with app_client([], data_dir=str(tmp_path_factory.mktemp("data"))) as client:
        for n, title in enumerate(TITLES):
            upload(client, titled_log(f"run-{n}", title))
        yield client


def twin(client: httpx.Client, **params: Any) -> dict[str, Any]:
    response = client.get("/api/uploads", params=params, timeout=60)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def page(client: httpx.Client, path: str = "/uploads", **headers: str) -> str:
    response = client.get(path, headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    return response.text


def test_the_twin_pages_through_every_upload_newest_first(client: httpx.Client) -> None:
    every = twin(client)
    assert (every["total"], every["offset"], every["limit"], every["next"]) == (7, 0, None, None)
    oldest_first = [u["digest"] for u in every["uploads"]]
    assert sorted(u["sessions"][0]["id"] for u in every["uploads"]) == [f"run-{n}" for n in range(7)], "every one"
    assert oldest_first == [u["digest"] for u in sorted(every["uploads"], key=lambda u: (u["uploadedAt"], u["digest"]))]
    seen: list[tuple[int, int, int, list[str]]] = []
    following: str | None = "/api/uploads?limit=3"
    while following is not None:
        body = client.get(following, timeout=60).json()
        seen.append((body["total"], body["offset"], body["limit"], [u["digest"] for u in body["uploads"]]))
        following = body["next"]
        if following is not None:
            last = body["uploads"][-1]
            assert following == f"/api/uploads?limit=3&before={last['uploadedAt']}-{last['digest']}"
    newest_first = oldest_first[::-1]
    assert seen == [(7, 0, 3, newest_first[:3]), (7, 3, 3, newest_first[3:6]), (7, 6, 3, newest_first[6:])]
    # the default page is 50, said by leaving `limit` out
    last = twin(client, limit=3)["uploads"][-1]
    rest = twin(client, before=f"{last['uploadedAt']}-{last['digest']}")
    assert (rest["limit"], rest["offset"], rest["next"]) == (50, 3, None)
    assert [u["digest"] for u in rest["uploads"]] == newest_first[3:]


def test_each_row_tells_its_upload_apart(client: httpx.Client) -> None:
    first = twin(client, limit=3)
    html = page(client, "/uploads?limit=3")
    rows = select(html, "[data-upload-list] tbody tr[data-upload]")
    assert [r["data-upload"] for r in rows] == [u["digest"] for u in first["uploads"]], "the twin's page"
    for row, u in zip(rows, first["uploads"], strict=True):
        (session,) = u["sessions"]
        assert text(row, "[data-upload-name]") == "session.jsonl" and attrs(row, "[data-upload-name]", "href") == [
            f"/uploads/{u['digest']}"
        ]
        assert u["digest"][:12] in text(row, "[data-cell='upload'] code")
        assert attrs(row, "[data-session-title]", "href") == [f"/sessions/{session['key']}"]
        assert texts(row, "[data-session-id]") == [session["id"]]
        moment = WallClock.of(u["uploadedAt"])
        assert moment is not None
        time = one(row, "time[data-local-time]")
        assert (time["datetime"], text_of(time)) == (moment.iso, moment.utc), "UTC until the page words it"
        assert text(row, "[data-cell='size']") == do_filesizeformat(u["size"], binary=True)
        assert text(row, "[data-cell='carrier']") == "jsonl"
        button = one(row, "button[data-upload-delete]")
        assert button["data-upload-delete"] == f"/api/uploads/{u['digest']}"
        assert button["aria-label"] == "Delete session.jsonl"
        assert button["data-confirm-title"] == "Delete the upload “session.jsonl”?"
        assert "its session" in button["data-confirm-sessions"]
        assert attrs(row, "[data-goes-with]", "data-goes-with") == [u["digest"]]
    assert select(html, "dialog[data-delete-dialog]"), "the dialog the buttons open"
    assert text(html, "[data-uploads-count]") == "7 uploads · 1–3 shown"
    assert attrs(html, "[data-uploads-pager] a[rel='next']", "href") == [
        first["next"].replace("/api/uploads?", "/uploads?")
    ]
    assert not select(html, "[data-uploads-pager] a[rel='first']"), "the first page links no newer one"


def test_titles_fill_in_once_read_and_the_twin_says_them(client: httpx.Client) -> None:
    html = page(client, "/uploads?limit=3")
    (asked,) = asks(html)  # one request, three sessions
    keys = asked["key"]
    assert keys, "unread sessions wait for their titles"
    assert all(s["title"] is None for u in twin(client, limit=3)["uploads"] for s in u["sessions"])
    # what the page asks for: the session list's summaries, swapped in by id
    cells = client.post("/sessions-summaries", data=asked, timeout=60).text  # as htmx posts it
    assert not select(cells, "[data-counts], [data-first-prompt]"), "only the cells the page has"
    titles = {str(a["id"]): text_of(a) for a in select(cells, "a[data-session-title]")}
    shown = [TITLES[int(key.removeprefix("run-"))] for key in keys]  # the newest three, newest first
    assert [titles[f"title-{key}"] for key in keys] == shown
    html = page(client, "/uploads?limit=3")
    assert not select(html, "[data-upload-list] [data-summary-pending]")
    assert texts(html, "[data-upload-list] a[data-session-title]") == shown
    assert [s["title"] for u in twin(client, limit=3)["uploads"] for s in u["sessions"]] == shown


def test_a_later_page_links_the_newest_and_past_the_end_says_so(client: httpx.Client) -> None:
    second = twin(client, limit=3)["next"].replace("/api/uploads?", "/uploads?")
    html = page(client, second)
    assert text(html, "[data-uploads-count]") == "7 uploads · 4–6 shown"
    assert attrs(html, "[data-uploads-pager] a[rel='first']", "href") == ["/uploads?limit=3"]
    oldest = twin(client)["uploads"][0]
    after = f"{oldest['uploadedAt']}-{oldest['digest']}"
    past = twin(client, before=after)
    assert (past["uploads"], past["total"], past["offset"], past["next"]) == ([], 7, 7, None)
    html = page(client, f"/uploads?before={after}")
    assert "No older uploads." in html and attrs(html, "a[rel='first']", "href") == ["/uploads"]


@pytest.mark.parametrize("cursor", ["x", "12-abc", f"-1-{'a' * 64}", f"1-{'A' * 64}", f"{'9' * 19}-{'a' * 64}"])
def test_a_cursor_is_checked(client: httpx.Client, cursor: str) -> None:
    assert client.get("/api/uploads", params={"before": cursor}).status_code == 422
    assert client.get("/uploads", params={"before": cursor}).status_code == 422


def test_a_cursor_newer_than_every_upload_pages_from_the_newest(client: httpx.Client) -> None:
    body = twin(client, limit=3, before=f"{'9' * 18}-{'f' * 64}")
    assert (body["offset"], [u["digest"] for u in body["uploads"]]) == (
        0,
        [u["digest"] for u in twin(client, limit=3)["uploads"]],
    )


def test_the_page_speaks_chinese(client: httpx.Client) -> None:
    html = page(client, "/uploads?limit=3", **{"Accept-Language": "zh-CN,zh;q=0.9"})
    assert text(html, "[data-uploads-count]") == "7 个上传 · 显示第 1–3 个"
    assert texts(html, "[data-upload-list] thead th")[:5] == ["上传", "会话", "上传时间", "大小", "载体"]
    assert set(texts(html, "button[data-upload-delete]")) == {"删除"}
    assert attrs(html, "[data-uploads-pager] a[rel='next']", "href") and "older →" not in html


def test_an_upload_of_many_sessions_names_five_and_links_the_rest(tmp_path: Path) -> None:
    with app_client([], data_dir=str(tmp_path / "data")) as client:
        store = upload(client, sqlite_bytes(tmp_path, [f"store-{n}" for n in range(7)]), "history.sqlite")
        single = upload(client, titled_log("alone", "Alone"))
        html = page(client)
        row = one(html, f"tr[data-upload='{store['digest']}']")
        assert texts(row, "[data-session-id]") == [f"store-{n}" for n in range(5)]
        assert texts(row, "[data-more-sessions]") == ["… and 2 more"]
        assert attrs(row, "[data-more-sessions]", "href") == [f"/uploads/{store['digest']}"]
        button = one(row, "button[data-upload-delete]")
        assert button["data-confirm-sessions"].startswith("Its bytes go, and with them its 7 sessions")
        assert text(html, "[data-uploads-count]") == "2 uploads"
        assert not select(html, "[data-uploads-pager]"), "one page: nothing to page to"
        # a delete is gone from the list, its page and its twin at once
        assert client.delete(f"/api/uploads/{single['digest']}").status_code == 200
        after = twin(client, limit=50)
        assert [u["digest"] for u in after["uploads"]] == [store["digest"]] and after["total"] == 1
        assert text(page(client), "[data-uploads-count]") == "1 upload"
        assert "data-upload-delete" in page(client, f"/uploads/{store['digest']}")
    with app_client([], data_dir=str(tmp_path / "empty")) as client:
        html = page(client)
        assert "Nothing uploaded yet." in html and not select(html, "[data-upload-list]")
        assert twin(client, limit=5) == {"uploads": [], "total": 0, "offset": 0, "limit": 5, "next": None}
