"""The push wire (docs/decisions/0024-push.md), answered by the app in process (on a real server where the open
page's live tail is the point): `GET /api/pushes/{id}?created=` says what the server holds of a session, `POST`
the same URL with `Upload-Offset` and `If-Match` appends a log's new bytes to the upload that is its start. An
append repeated changes nothing, one that does not continue what is held is refused with what is, and a grown
session reads on: its download, its events and its versions."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.support.builders import T0
from tests.support.server import app_client, live_server
from tests.support.upload_model import log_bytes, phrase
from tests.support.uploads import jsonl_bytes


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with app_client([], data_dir=str(tmp_path_factory.mktemp("data"))) as client:
        yield client


def held(server: httpx.Client, sid: str, created: int = T0) -> httpx.Response:
    return server.get(f"/api/pushes/{sid}", params={"created": created}, timeout=60)


def append(
    server: httpx.Client, sid: str, data: bytes, offset: int, prefix: str, *, created: int = T0, **headers: str
) -> httpx.Response:
    """The bytes of `data` after `offset`, sent as an append to the upload whose digest is `prefix`."""
    sent = {"Upload-Offset": str(offset), "If-Match": f'"{prefix}"', **headers}
    return server.post(
        f"/api/pushes/{sid}", params={"created": created}, content=data[offset:], headers=sent, timeout=60
    )


def upload_whole(server: httpx.Client, data: bytes) -> dict[str, Any]:
    answer = server.post("/api/uploads", params={"name": "session.jsonl"}, content=data, timeout=60)
    assert answer.status_code == 201, answer.text
    upload: dict[str, Any] = answer.json()["upload"]
    return upload


def twin(server: httpx.Client, sid: str) -> dict[str, Any]:
    answer = server.get(f"/api/sessions/{sid}", timeout=60)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def versions(server: httpx.Client, sid: str) -> list[list[str]]:
    """Each version of the session, oldest first, as the digests of its uploads along the chain."""
    return [[u["digest"] for u in v["uploads"]] for v in twin(server, sid)["versions"]]


def raw(server: httpx.Client, sid: str) -> bytes:
    answer = server.get(f"/sessions/{sid}/raw", timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.content


def digest(data: bytes) -> str:
    return sha256(data).hexdigest()


def test_what_is_held_is_not_held_before_and_each_upload_after(server: httpx.Client) -> None:
    before = held(server, "asked")
    assert before.status_code == 404
    assert before.json()["error"]["code"] == "not-held"
    one = log_bytes("asked", 1, 0)
    upload_whole(server, one)
    after = held(server, "asked")
    assert after.status_code == 200, after.text
    body = after.json()
    assert (body["id"], body["created"]) == ("asked", T0)
    [only] = body["held"]
    assert (only["digest"], only["size"], only["carrier"]) == (digest(one), len(one), "jsonl")
    assert only["url"] == f"/uploads/{digest(one)}"
    assert isinstance(only["uploadedAt"], int)
    other_run = held(server, "asked", T0 + 1)  # the same id created at another time is another session
    assert other_run.status_code == 404 and other_run.json()["error"]["code"] == "not-held"


def test_an_append_continues_the_upload_and_the_session_reads_on(server: httpx.Client) -> None:
    one, two, three = (log_bytes("grows", turns, 0) for turns in (1, 2, 3))
    first = upload_whole(server, one)
    assert (twin(server, "grows")["events"], twin(server, "grows")["turns"]) == (12, 1)

    answer = append(server, "grows", two, len(one), first["digest"])
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["created"] is True
    assert (body["upload"]["digest"], body["upload"]["size"]) == (digest(two), len(two))
    assert [s["id"] for s in body["upload"]["sessions"]] == ["grows"]
    assert raw(server, "grows") == two, "the download is the grown log, byte for byte"
    grown = twin(server, "grows")
    assert (grown["events"], grown["turns"]) == (24, 2), "the session page reads the appended turn"
    assert versions(server, "grows") == [[digest(one), digest(two)]], "one more upload in the same version"
    assert [h["digest"] for h in held(server, "grows").json()["held"]] == [digest(two), digest(one)]

    again = append(server, "grows", two, len(one), first["digest"])
    assert again.status_code == 200, again.text
    assert again.json()["created"] is False and again.json()["upload"]["digest"] == digest(two)
    assert versions(server, "grows") == [[digest(one), digest(two)]], "a repeated append adds nothing"
    assert raw(server, "grows") == two

    third = append(server, "grows", three, len(two), digest(two))
    assert third.status_code == 201, third.text
    assert raw(server, "grows") == three
    assert versions(server, "grows") == [[digest(one), digest(two), digest(three)]]
    assert twin(server, "grows")["turns"] == 3
    listed = [s for s in server.get("/api/sessions", timeout=60).json()["sessions"] if s["id"] == "grows"]
    assert len(listed) == 1, "the session is listed once, however often it grew"
    for state, data in ((one, one), (two, two)):  # each earlier state still answers at its own URL
        assert server.get(f"/uploads/{digest(state)}/raw", timeout=60).content == data


def test_an_append_that_does_not_continue_what_is_held_is_refused_with_what_is(server: httpx.Client) -> None:
    one, two = log_bytes("refused", 1, 0), log_bytes("refused", 2, 0)
    upload_whole(server, one)
    expected = held(server, "refused").json()["held"]
    cases = {
        "wrong digest": append(server, "refused", two, len(one), digest(b"something else")),
        "wrong offset": append(server, "refused", two, len(one) - 1, digest(one[:-1])),
        "offset past it": append(server, "refused", two, len(one) + 1, digest(two[: len(one) + 1])),
    }
    for case, answer in cases.items():
        assert answer.status_code == 409, (case, answer.text)
        body = answer.json()
        assert body["error"]["code"] == "prefix-mismatch", case
        assert body["held"] == expected, case
    assert raw(server, "refused") == one, "nothing was stored"
    assert versions(server, "refused") == [[digest(one)]]


def test_an_append_to_a_session_the_server_does_not_hold_is_not_held(server: httpx.Client) -> None:
    one, two = log_bytes("unknown", 1, 0), log_bytes("unknown", 2, 0)
    answer = append(server, "unknown", two, len(one), digest(one))
    assert answer.status_code == 404, answer.text
    assert answer.json()["error"]["code"] == "not-held"
    upload_whole(server, log_bytes("held-once", 1, 0))
    created_else = append(server, "held-once", two, len(one), digest(one), created=T0 + 5)
    assert created_else.status_code == 404 and created_else.json()["error"]["code"] == "not-held"
    assert held(server, "unknown").status_code == 404, "a refused append stores nothing"


@pytest.mark.parametrize(
    "headers",
    [
        {"If-Match": "DIGEST"},
        {"Upload-Offset": "OFFSET"},
        {"Upload-Offset": "-1", "If-Match": "DIGEST"},
        {"Upload-Offset": "OFFSET", "If-Match": '"not-a-digest"'},
        {"Upload-Offset": "a lot", "If-Match": "DIGEST"},
    ],
    ids=["no offset", "no if-match", "negative offset", "malformed digest", "offset not a number"],
)
def test_an_append_without_its_headers_is_a_bad_request(server: httpx.Client, headers: dict[str, str]) -> None:
    sid = "headers"
    one, two = log_bytes(sid, 1, 0), log_bytes(sid, 2, 0)
    if held(server, sid).status_code == 404:
        upload_whole(server, one)
    sent = {k: v.replace("OFFSET", str(len(one))).replace("DIGEST", f'"{digest(one)}"') for k, v in headers.items()}
    answer = server.post(
        f"/api/pushes/{sid}", params={"created": T0}, content=two[len(one) :], headers=sent, timeout=60
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "bad-request"
    assert "Upload-Offset" in answer.json()["detail"] and "If-Match" in answer.json()["detail"]
    assert versions(server, sid) == [[digest(one)]], "nothing was stored"


def test_an_append_without_created_is_refused(server: httpx.Client) -> None:
    one, two = log_bytes("no-created", 1, 0), log_bytes("no-created", 2, 0)
    upload_whole(server, one)
    answer = server.post(
        "/api/pushes/no-created",
        content=two[len(one) :],
        headers={"Upload-Offset": str(len(one)), "If-Match": f'"{digest(one)}"'},
        timeout=60,
    )
    assert answer.status_code in (400, 422), answer.text
    assert held(server, "no-created").json()["held"][0]["digest"] == digest(one)


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    """(event, data) of each server-sent event read from `lines`."""
    event, data = "message", []
    for line in lines:
        if line.startswith("event:"):
            event = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            data.append(line.removeprefix("data:").removeprefix(" "))
        elif line == "" and data:
            yield event, "\n".join(data)
            event, data = "message", []


def test_an_open_page_reads_on_as_appends_arrive(tmp_path: Path) -> None:
    """On a real server: the open page's live tail is a stream that never ends."""
    one, two, three = (log_bytes("followed", turns, 0) for turns in (1, 2, 3))
    with live_server([], data_dir=str(tmp_path / "data")) as url, httpx.Client(base_url=url, timeout=30) as server:
        upload_whole(server, one)
        page = server.get("/sessions/followed").text
        [live] = re.findall(r'sse-connect="([^"]+)"', page)
        with httpx.stream("GET", url + html.unescape(live), timeout=30) as stream:
            events = sse_events(stream.iter_lines())
            for turns, (before, after) in enumerate(((one, two), (two, three)), start=2):
                answer = append(server, "followed", after, len(before), digest(before))
                assert answer.status_code == 201, answer.text
                seen: list[tuple[str, str]] = []
                for event, data in events:  # until the page's facts say the new turn arrived
                    seen.append((event, data))
                    if event == "facts" and f"{turns} turns" in data:
                        break
                kinds = [event for event, _ in seen]
                assert "notice" not in kinds, "the page reads on: its rows are not replaced as if the log was rewritten"
                assert "rows" in kinds
                sent = "".join(data for event, data in seen if event == "rows")
                assert phrase("followed", 0, turns) in sent, "the new turn's rows are sent to the open page"
                assert phrase("followed", 0, turns - 1) not in sent, "the rows it has are not sent again"


@pytest.mark.parametrize(
    "sid",
    ["with/slash", "..", "x" * 450, "sp ace?#%", "ünïcode"],
    ids=["slash", "dot-dot", "450 characters", "reserved characters", "unicode"],
)
def test_what_is_held_answers_for_any_session_id(server: httpx.Client, sid: str) -> None:
    """dsh's ids are opaque strings (docs/format.md §1.1 encodes any of them in a folder name), and the server
    takes an upload of any of them; a push must be able to ask about each and append to it."""
    one, two = jsonl_bytes(sid, 1), jsonl_bytes(sid, 2)
    upload_whole(server, one)
    url = f"/api/pushes/{quote(sid, safe='').replace('.', '%2E')}"  # as README says: dots escaped too
    asked = server.get(url, params={"created": T0}, timeout=60)
    assert asked.status_code == 200, asked.text[:300]
    assert [h["digest"] for h in asked.json()["held"]] == [digest(one)]
    sent = {"Upload-Offset": str(len(one)), "If-Match": f'"{digest(one)}"'}
    answer = server.post(url, params={"created": T0}, content=two[len(one) :], headers=sent, timeout=60)
    assert answer.status_code == 201, answer.text[:300]
    assert answer.json()["upload"]["digest"] == digest(two)
