"""Long session keys: the list's titles, counts and verdicts still fill in, and no URL a page builds
carries more than one key's worth of log data (a page of long keys once made a request line the
client refused, so the titles never came)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests.support.builders import LogBuilder, header
from tests.support.rows import asked_keys, attributes, attrs, one, parse, select, text
from tests.support.server import app_client

SESSIONS = 200
ID_LENGTH = 500
URL_ATTRIBUTES = frozenset({"href", "src", "action", "hx-get", "hx-post", "sse-connect"})


def long_id(i: int) -> str:
    return f"{i:03d}-" + "k" * (ID_LENGTH - 4)


def titled(title: str) -> list[dict]:
    b = LogBuilder()
    b.turn(1, "Read a.txt please")
    b.add("session/title", {"title": title, "messageSeqs": [2], "source": {"kind": "fallback"}})
    return b.events


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("long-keys")
    for i in range(SESSIONS):
        folder = root / f"s{i:03d}"
        folder.mkdir()
        head = {**header(long_id(i)), "createdAt": 1_700_000_000_000 + i}
        lines = [head, *titled(f"Title {i:03d}")]
        (folder / "session.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    with app_client([str(root)]) as client:
        yield client


def test_every_session_of_the_page_is_summarised_from_a_posted_form(client: httpx.Client) -> None:
    page = client.get("/").text
    assert len(select(page, "tr[data-session-key]")) == 50
    keys = asked_keys(page)  # htmx posts these
    assert len(keys) == 50 and all(len(k) == ID_LENGTH for k in keys)

    answer = client.post("/sessions-summaries", data={"key": keys})
    assert answer.status_code == 200, answer.text[:200]
    summaries = parse(answer.text)  # once: fifty sessions' cells, each looked up below
    for key in keys:
        title = one(summaries, f'a[id="title-{key}"]')
        assert title.get_text() == f"Title {key[:3]}"
        assert attrs(summaries, f'span[id="verdict-{key}"] .verdict', "data-verdict") == ["accepted"]
        assert text(summaries, f'span[id="counts-{key}"]') == "1 turn · 2 steps"


def test_no_url_on_the_list_carries_more_than_one_key(client: httpx.Client) -> None:
    page = client.get("/").text
    urls = [value for _, name, value in attributes(page) if name in URL_ATTRIBUTES]
    assert urls
    longest = max(urls, key=len)
    assert len(longest) < ID_LENGTH + 64, longest[:100]
    session = client.get(f"/sessions/{long_id(7)}")
    assert session.status_code == 200
    urls = [value for _, name, value in attributes(session.text) if name in URL_ATTRIBUTES]
    assert max(len(u) for u in urls) < ID_LENGTH + 128


def test_a_summaries_post_from_another_site_is_refused(client: httpx.Client) -> None:
    answer = client.post("/sessions-summaries", data={"key": long_id(1)}, headers={"Origin": "http://evil.example"})
    assert answer.status_code == 403
    assert "title" not in answer.text


def test_keys_that_are_not_loaded_and_an_endless_body_fill_nothing(client: httpx.Client) -> None:
    answer = client.post("/sessions-summaries", data={"key": ["nope", long_id(3)]})
    assert [a["id"] for a in parse(answer.text).select("a[data-session-title]")] == [f"title-{long_id(3)}"]
    flood = client.post("/sessions-summaries", content=b"key=" + b"k" * (5 << 20))
    assert flood.status_code == 413
