"""Deep JSON and huge numbers through a real client (issue 15): served and uploaded, each log's page, event
page and JSON twins answer, showing the deep part as its JSON text and saying where it begins."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dsh_inspect.log.jsonvalues import MAX_DEPTH

from tests.support.deep_logs import WARNING, deep_at, log_lines, nested, wrapped, write
from tests.support.rows import parse
from tests.support.server import app_client

DEEP = log_lines(nested(100_000))
HUGE = log_lines("9" * 5000)
HUGE_TIME = log_lines("1e400", ("time",))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served")
    write(root / "deep" / "session.jsonl", DEEP)
    write(root / "huge" / "session.jsonl", HUGE)
    write(root / "huge-time" / "session.jsonl", HUGE_TIME)
    return root


@pytest.fixture(scope="module")
def client(served: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with app_client([str(served)], data_dir=str(tmp_path_factory.mktemp("data"))) as client:
        yield client


def session_url(client: httpx.Client, folder: str) -> str:
    sessions = client.get("/api/sessions", timeout=60).json()["sessions"]
    return next(s["url"] for s in sessions if f"/{folder}/" in s["path"])


def finding(html: str, code: str) -> str:
    """What the page's finding row of `code` says."""
    row = parse(html).select_one(f'.diagnostic-row[data-diagnostic-code="{code}"] .status-text')
    assert row is not None, f"no {code} finding on the page"
    return row.get_text(strip=True)


def test_a_served_deep_log_shows_where_it_is_deep_and_its_text(client: httpx.Client, served: Path) -> None:
    url = session_url(client, "deep")
    page = client.get(url, timeout=120)
    assert page.status_code == 200
    path = served / "deep" / "session.jsonl"
    assert finding(page.text, "deep-json") == f"{path}, line 2, byte {deep_at(DEEP, 2)}: {WARNING}"

    twin = client.get(f"/api{url}", timeout=120).json()
    assert twin["verdict"]["category"] == "accepted"
    assert [(d["code"], d["line"], d["offset"]) for d in twin["diagnostics"]] == [("deep-json", 2, deep_at(DEEP, 2))]
    event = client.get(f"/api{url}/events/0", timeout=120).json()["event"]
    assert event["data"]["x"] == wrapped(MAX_DEPTH - 2, nested(100_000 - MAX_DEPTH + 2))
    shown = parse(client.get(f"{url}/events/0", timeout=120).text).select_one("pre").get_text()
    assert nested(100_000 - MAX_DEPTH + 2) in shown.replace("\\", "")


def test_huge_numbers_are_read_and_judged_on_served_pages(client: httpx.Client) -> None:
    huge = session_url(client, "huge")
    assert client.get(huge, timeout=60).status_code == 200
    assert client.get(f"/api{huge}", timeout=60).json()["verdict"]["category"] == "accepted"
    assert client.get(f"/api{huge}/events/0", timeout=60).json()["event"]["data"]["x"] is None  # Infinity
    bad_time = session_url(client, "huge-time")
    page = client.get(bad_time, timeout=60)
    assert page.status_code == 200 and "time is not a safe integer" in page.text
    verdict = client.get(f"/api{bad_time}", timeout=60).json()["verdict"]
    assert (verdict["category"], verdict["reason"]) == ("refused", "invalid event envelope: time is not a safe integer")


@pytest.mark.parametrize(
    ("name", "lines", "verdict"), [("deep.jsonl", DEEP, "accepted"), ("huge.jsonl", HUGE, "accepted")]
)
def test_an_uploaded_deep_or_huge_log_is_read(
    client: httpx.Client, tmp_path: Path, name: str, lines: list[bytes], verdict: str
) -> None:
    data = write(tmp_path / name, lines).read_bytes()
    response = client.post("/api/uploads", params={"name": name}, content=data, timeout=120)
    assert response.status_code == 201, response.text
    (session,) = response.json()["upload"]["sessions"]
    assert session["verdict"] == verdict
    page = client.get(session["url"], timeout=120)
    assert page.status_code == 200
    if lines is DEEP:
        assert finding(page.text, "deep-json") == f"{name}, line 2, byte {deep_at(DEEP, 2)}: {WARNING}"
