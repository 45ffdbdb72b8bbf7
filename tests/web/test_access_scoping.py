"""Each identity sees its own sessions and no more (docs/decisions/0020-access-control.md), on a real app: a
token scoped to one project finds nothing of another's in the list, its twin, the summaries, search, compare
or a 404 page; a `metrics` token gets the list's facts without a title or a prompt, and no content; a viewer
of every project sees both."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from dsh_inspect.settings import Settings
from dsh_inspect.web.app import create_app
from fastapi.testclient import TestClient

from tests.support.builders import LogBuilder, header
from tests.support.rows import attrs

A_KEY, A_PROJECT = "sess-alpha-1", "/srv/proj-alpha"
A_PROMPT, A_TITLE = "Please tidy the ocelot ledger", "Zoned ocelot tidy"
B_KEY, B_PROJECT = "sess-zulu-7f3", "/srv/proj-zulu"
B_PROMPT, B_TITLE = "Please sort the pangolin archive", "Pangolin sort"
HIDDEN = "zulu"  # in B's key, id and project, and nowhere else a scoped reader of A could be shown
SHARED = "The file says"  # a phrase of a row in each session


def events(prompt: str, title: str) -> list[dict[str, Any]]:
    """One turn whose first prompt is `prompt`, titled `title` after it."""
    log = LogBuilder()
    log.turn(1, prompt)
    data = {"title": title, "messageSeqs": [2], "source": {"kind": "fallback"}}  # named after the prompt (seq 2)
    named = {"type": "session/title", "seq": 3, "time": 0, "data": data}
    out = [*log.events[:3], named, *log.events[3:]]
    for seq, event in enumerate(out):
        event["seq"] = seq
        if event.get("sourceEventSeqs"):
            event["sourceEventSeqs"] = [s + 1 if s >= 3 else s for s in event["sourceEventSeqs"]]
    return out


def write(path: Path, head: dict[str, Any], body: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [head, *body]))


@dataclass(frozen=True)
class Served:
    client: TestClient
    secrets: dict[str, str]  # by who: `alpha` (viewer of A's project), `metrics`, `viewer` (every project)

    def get(self, who: str, path: str, **params: Any) -> Any:
        return self.client.get(path, params=params, headers=self.auth(who))

    def summaries(self, who: str, *keys: str) -> Any:
        return self.client.post("/sessions-summaries", data={"key": list(keys)}, headers=self.auth(who))

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.secrets[who]}"}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    logs = tmp_path / "logs"
    write(logs / "a" / "session.jsonl", header(A_KEY, cwd=A_PROJECT), events(A_PROMPT, A_TITLE))
    write(logs / "z" / "session.jsonl", header(B_KEY, cwd=B_PROJECT), events(B_PROMPT, B_TITLE))
    app = create_app([str(logs)], Settings(data_dir=str(tmp_path / "data"), require_auth=True))
    tokens = app.state.web.access.tokens
    secrets = {
        "alpha": tokens.create("alpha", "viewer", [A_PROJECT])[1],
        "metrics": tokens.create("metrics", "metrics")[1],
        "viewer": tokens.create("viewer", "viewer")[1],
    }
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield Served(client, secrets)


def listed(served: Served, who: str, **params: Any) -> dict[str, Any]:
    response = served.get(who, "/api/sessions", **params)
    assert response.status_code == 200, response.text
    if who == "alpha" and HIDDEN not in str(params):  # a search's own words come back as asked
        assert HIDDEN not in response.text
    found: dict[str, Any] = response.json()
    return found


def test_a_scoped_token_lists_counts_and_filters_only_its_projects_sessions(served: Served) -> None:
    every = listed(served, "viewer", summaries="true")  # the unscoped list first: kept per registry version
    assert (every["total"], every["loaded"]) == (2, 2)
    assert every["choices"]["projects"] == [A_PROJECT, B_PROJECT]
    for params in ({}, {"summaries": "true"}, {"page": 1}, {"sort": "title"}, {"verdict": "accepted"}):
        mine = listed(served, "alpha", **params)
        assert [s["key"] for s in mine["sessions"]] == [A_KEY], params
        assert (mine["total"], mine["loaded"], mine["pages"]) == (1, 1, 1)
        assert mine["choices"]["projects"] == [A_PROJECT], "the project filter names no hidden project"
    assert listed(served, "alpha", q=HIDDEN)["total"] == 0
    assert listed(served, "alpha", q="pangolin")["total"] == 0, "nor a title or prompt of a hidden session"
    for path in ("/", "/?page=1", "/?sort=title", "/?errors=true"):
        page = served.get("alpha", path)
        assert page.status_code == 200 and HIDDEN not in page.text and "pangolin" not in page.text.lower()
    assert attrs(served.get("alpha", "/").text, "tr[data-session-key]", "data-session-key") == [A_KEY]
    assert listed(served, "viewer")["total"] == 2, "the scoped list, kept too, is not the unscoped one's"


def test_the_summaries_answer_nothing_for_a_hidden_key_as_for_an_unknown_one(served: Served) -> None:
    hidden = served.summaries("alpha", B_KEY)
    unknown = served.summaries("alpha", "sess-nowhere")
    assert hidden.status_code == unknown.status_code == 200
    assert hidden.text == unknown.text and HIDDEN not in hidden.text
    both = served.summaries("alpha", A_KEY, B_KEY).text
    assert f'id="verdict-{A_KEY}"' in both and HIDDEN not in both
    assert f'id="verdict-{B_KEY}"' in served.summaries("viewer", B_KEY).text


def search(served: Served, who: str, q: str) -> dict[str, Any]:
    response = served.get(who, "/api/search", q=q)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def test_search_finds_and_counts_only_the_sessions_a_scoped_token_sees(served: Served) -> None:
    only_b = search(served, "alpha", "pangolin")
    assert (only_b["total"], only_b["sessions"], only_b["hits"]) == (0, 0, [])
    assert search(served, "viewer", "pangolin")["sessions"] == 1, "the phrase is there, for whoever sees B"
    every, mine = search(served, "viewer", SHARED), search(served, "alpha", SHARED)
    assert {h["key"] for h in every["hits"]} == {A_KEY, B_KEY} and every["sessions"] == 2
    assert {h["key"] for h in mine["hits"]} == {A_KEY} and mine["sessions"] == 1
    assert mine["total"] * 2 == every["total"], "the hidden session's rows are not counted"
    page = served.get("alpha", "/search", q=SHARED)
    assert page.status_code == 200 and HIDDEN not in page.text and A_KEY in page.text


def test_compare_with_a_hidden_session_is_a_missing_one(served: Served) -> None:
    assert served.get("viewer", "/api/compare", a=A_KEY, b=B_KEY).status_code == 200
    hidden = served.get("alpha", "/api/compare", a=A_KEY, b=B_KEY)
    missing = served.get("alpha", "/api/compare", a=A_KEY, b="sess-nowhere")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == {"detail": f"no session {B_KEY!r}"}
    assert missing.json() == {"detail": "no session 'sess-nowhere'"}
    assert served.get("alpha", "/api/compare", a=B_KEY, b=A_KEY).status_code == 404
    for path in ("/compare", "/compare/rows"):
        assert served.get("alpha", path, a=A_KEY, b=B_KEY).status_code == 404, path
    assert served.get("alpha", "/compare", a=B_KEY).status_code == 404
    chooser = served.get("alpha", "/api/compare", a=A_KEY)
    assert chooser.status_code == 200 and chooser.json()["others"] == [] and HIDDEN not in chooser.text
    assert HIDDEN not in served.get("alpha", "/compare", a=A_KEY).text
    offered = served.get("viewer", "/api/compare", a=A_KEY).json()["others"]
    assert [o["key"] for o in offered] == [B_KEY], "a viewer of every project is offered B"


@pytest.mark.parametrize(
    "path", ["/sessions/{}", "/api/sessions/{}", "/sessions/{}/rows", "/api/sessions/{}/rows", "/sessions/{}/raw"]
)
def test_a_hidden_sessions_pages_are_missing_with_no_suggestion(served: Served, path: str) -> None:
    assert served.get("viewer", path.format(B_KEY)).status_code == 200
    assert served.get("alpha", path.format(B_KEY)).status_code == 404


def test_a_404_page_suggests_no_hidden_key(served: Served) -> None:
    near = "sess-zulu-7f4"  # one character from B's key
    assert f'href="/sessions/{B_KEY}"' in served.get("viewer", f"/sessions/{near}").text
    for asked in (B_KEY, near):
        page = served.get("alpha", f"/sessions/{asked}")
        assert page.status_code == 404
        assert attrs(page.text, "[data-missing-nearest] a", "href") == []


def test_a_metrics_token_lists_facts_without_titles_or_prompts(served: Served) -> None:
    twin = served.get("metrics", "/api/sessions", summaries="true")
    assert twin.status_code == 200
    for text in ("ocelot", "pangolin"):
        assert text not in twin.text.lower()
    by_key = {s["key"]: s for s in twin.json()["sessions"]}
    assert set(by_key) == {A_KEY, B_KEY}
    a = by_key[A_KEY]
    assert (a["id"], a["project"], a["title"]) == (A_KEY, A_PROJECT, None)
    assert a["summary"]["verdict"] == "accepted" and a["summary"]["turns"] == 1
    assert (a["summary"]["title"], a["summary"]["plainTitle"], a["summary"]["firstPrompt"]) == (None, None, None)
    seen = served.get("viewer", "/api/sessions", summaries="true").json()["sessions"]
    assert {s["title"] for s in seen} == {A_TITLE, B_TITLE}, "a viewer reads the same titles"
    page = served.get("metrics", "/")
    assert page.status_code == 200 and "ocelot" not in page.text.lower() and "pangolin" not in page.text.lower()
    assert attrs(page.text, f"#title-{A_KEY}", "title") == [A_KEY], "the id in the title's place"
    cells = served.summaries("metrics", A_KEY, B_KEY)
    assert cells.status_code == 200 and 'data-verdict="accepted"' in cells.text
    assert "ocelot" not in cells.text.lower() and "pangolin" not in cells.text.lower()


def test_a_metrics_tokens_search_of_the_list_matches_no_title_or_prompt(served: Served) -> None:
    assert listed(served, "viewer", q="ocelot")["total"] == 1
    assert listed(served, "viewer", q="sort the pangolin")["total"] == 1
    assert listed(served, "metrics", q="ocelot")["total"] == 0
    assert listed(served, "metrics", q="sort the pangolin")["total"] == 0
    assert [s["key"] for s in listed(served, "metrics", q="proj-zulu")["sessions"]] == [B_KEY], "its project"
    assert [s["key"] for s in listed(served, "metrics", q="alpha-1")["sessions"]] == [A_KEY], "its id"
    by_title = [s["key"] for s in listed(served, "viewer", sort="title", order="asc")["sessions"]]
    assert by_title == [B_KEY, A_KEY], "Pangolin… before Zoned…"
    by_id = [s["key"] for s in listed(served, "metrics", sort="title", order="asc")["sessions"]]
    assert by_id == [A_KEY, B_KEY], "sorted by the ids shown, not by the titles withheld"


@pytest.mark.parametrize(
    "path",
    [
        f"/sessions/{A_KEY}",
        f"/api/sessions/{A_KEY}",
        f"/sessions/{A_KEY}/rows",
        f"/api/sessions/{A_KEY}/rows",
        f"/sessions/{A_KEY}/raw",
        "/search?q=ocelot",
        "/api/search?q=ocelot",
        f"/compare?a={A_KEY}&b={B_KEY}",
        f"/compare/rows?a={A_KEY}&b={B_KEY}",
        f"/api/compare?a={A_KEY}&b={B_KEY}",
        f"/api/compare?a={A_KEY}",
    ],
)
def test_a_metrics_token_reads_no_content(served: Served, path: str) -> None:
    response = served.get("metrics", path)
    assert response.status_code == 403
    assert "ocelot" not in response.text.lower()
