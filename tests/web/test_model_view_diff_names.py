"""A model view's diff names the messages it lists as a reader knows them (issue 41 item 9): each shadowed and
each added message by its role and its first line, linked to its identity page, its id on hover, not bare ids."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.request_logs import compaction_between_calls, write_log
from tests.support.rows import attrs, one, select, text_of
from tests.support.server import app_client


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root: Path = tmp_path_factory.mktemp("logs")
    write_log(root / "compaction" / "session.jsonl", compaction_between_calls().events, "compaction")
    with app_client([str(root)]) as client:
        yield client


def test_shadowed_and_added_messages_go_by_role_and_first_line(client: httpx.Client) -> None:
    html = client.get("/sessions/compaction/steps/2.1").text
    data = client.get("/api/sessions/compaction/steps/2.1").json()
    answered = next(c for c in data["calls"] if c["answered"])
    (replace,) = answered["diff"]["replaced"]
    diff = next(d for d in select(html, "section[data-request-diff]") if select(d, "li[data-diff-replaced]"))
    shadowed = select(one(diff, "li[data-diff-replaced]"), "[data-shadowed-messages] li[data-seq]")
    assert [int(str(li["data-seq"])) for li in shadowed] == [s["seq"] for s in replace["shadowed"]]
    first = shadowed[0]
    assert text_of(first) == "User Read a.txt please", "its role, then its first line"
    assert attrs(first, "a[data-identity-link]", "title") == [replace["shadowed"][0]["id"]], "the id on hover"
    later = client.get("/sessions/compaction/steps/1.2").text  # after step 1.1: its tool call and result added
    added = select(one(later, "section[data-request-diff]"), "[data-diff-added] li[data-seq]")
    assert len(added) == 2
    for li in added:
        link = one(li, "a[data-identity-link]")
        assert text_of(link) != link["title"], "an added message reads as its words, not its id"
