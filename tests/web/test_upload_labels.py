"""Labels end to end (issue 34: "CI: push the run's dsh root after the job, with the job's id as a label the list
can filter by"): the real `dsh-inspect push --label` sends them with every upload and append; a CI job run again
labels what an earlier run sent; the list and its JSON twin filter by a label and show each session's; an
upload's twin gives its labels; a label the server cannot keep is a 422 naming the parameter."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.support.builders import T0
from tests.support.process import PROJECT
from tests.support.rows import attrs, one, select
from tests.support.server import app_client, live_server
from tests.support.uploads import jsonl_bytes, sqlite_bytes


@pytest.fixture
def served(tmp_path: Path) -> Path:
    """A folder the server serves from disk: its session has no labels."""
    folder = tmp_path / "served"
    folder.mkdir()
    (folder / "on-disk.jsonl").write_bytes(jsonl_bytes("on-disk"))
    return folder


@pytest.fixture
def server(tmp_path: Path, served: Path) -> Iterator[str]:
    """A real server, for the `push` command to send to."""
    with live_server([str(served)], data_dir=str(tmp_path / "data")) as url:
        yield url


@pytest.fixture
def client(tmp_path: Path, served: Path) -> Iterator[httpx.Client]:
    """The same app answering in process, for what asks it over HTTP alone."""
    with app_client([str(served)], data_dir=str(tmp_path / "data")) as answering:
        yield answering


def push(url: str, home: Path, *paths: Path, labels: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    """The real command, its state file in a cache folder of its own."""
    env = {k: v for k, v in os.environ.items() if k != "DSH_INSPECT_TOKEN"}
    env |= {"HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
    args = [sys.executable, "-m", "dsh_inspect", "push", *map(str, paths), "--to", url, "--json"]
    for label in labels:
        args += ["--label", label]
    return subprocess.run(args, cwd=PROJECT, env=env, capture_output=True, timeout=120, check=False)


def pushed(url: str, home: Path, *paths: Path, labels: tuple[str, ...] = ()) -> dict[str, Any]:
    done = push(url, home, *paths, labels=labels)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    tally: dict[str, Any] = orjson.loads(done.stdout)
    assert tally["refused"] == [], tally
    return tally


def listed(site: httpx.Client | str, **params: str) -> dict[str, dict[str, Any]]:
    """The list's twin, as chosen: each session by its id (from an `app_client`, or a live server at its URL)."""
    if isinstance(site, str):
        with httpx.Client(base_url=site) as client:
            return listed(client, **params)
    answer = site.get("/api/sessions", params=params, timeout=60)
    assert answer.status_code == 200, answer.text
    return {s["id"]: s for s in answer.json()["sessions"]}


def dsh_root(tmp_path: Path, *sids: str) -> Path:
    root = tmp_path / "dsh" / "sessions"
    for sid in sids:
        (root / sid).mkdir(parents=True)
        (root / sid / "session.jsonl").write_bytes(jsonl_bytes(sid, turns=1))
    return root


@pytest.mark.slow  # `dsh-inspect push` processes
def test_push_labels_what_it_sends_and_the_list_filters_by_it(server: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = dsh_root(tmp_path, "job-a", "job-b")
    tally = pushed(server, home, root, labels=("ci-1234",))
    assert (tally["sent"], tally["skipped"]) == (2, 0)

    every = listed(server)
    assert every["job-a"]["labels"] == ["ci-1234"] and every["job-b"]["labels"] == ["ci-1234"]
    assert every["on-disk"]["labels"] == [], "a session served from disk has none"
    chosen = httpx.get(f"{server}/api/sessions", params={"label": "ci-1234"}, timeout=60).json()
    assert {s["id"] for s in chosen["sessions"]} == {"job-a", "job-b"}
    assert chosen["filters"]["label"] == "ci-1234" and chosen["total"] == 2
    assert listed(server, label="ci-9999") == {}
    assert listed(server, label="ci-1234", q="job-a").keys() == {"job-a"}, "with the other choices"

    digest = every["job-a"]["upload"]
    upload = httpx.get(f"{server}/api/uploads/{digest}", timeout=60).json()
    assert upload["labels"] == ["ci-1234"]

    # the job run again, nothing new: what it sent before is labelled with this run's id, nothing sent twice
    rerun = pushed(server, home, root, labels=("ci-1235",))
    assert (rerun["sent"], rerun["skipped"], rerun["bytes"]) == (0, 2, 0)
    assert listed(server, label="ci-1235").keys() == {"job-a", "job-b"}
    assert httpx.get(f"{server}/api/uploads/{digest}", timeout=60).json()["labels"] == ["ci-1234", "ci-1235"]
    assert len(httpx.get(f"{server}/api/uploads", timeout=60).json()["uploads"]) == 2, "no upload was made"

    # a log that grew: its append carries what its base had and this run's
    log = root / "job-a" / "session.jsonl"
    grown = jsonl_bytes("job-a", turns=2)
    with log.open("ab") as f:
        f.write(grown[log.stat().st_size :])
    third = pushed(server, home, root, labels=("ci-1236",))
    assert third["sent"] == 1 and third["bytes"] < len(grown), "only the new bytes"
    now = listed(server)
    assert now["job-a"]["labels"] == ["ci-1234", "ci-1235", "ci-1236"]
    assert now["job-a"]["upload"] != digest
    assert now["job-b"]["labels"] == ["ci-1234", "ci-1235", "ci-1236"], "held whole: labelled by an empty append"
    assert listed(server, label="ci-1234").keys() == {"job-a", "job-b"}, "a session keeps its older labels"

    # without --label nothing is asked or sent for labels
    quiet = pushed(server, home, root)
    assert (quiet["sent"], quiet["skipped"]) == (0, 2)


@pytest.mark.slow  # `dsh-inspect push` processes
def test_a_file_pushed_whole_is_labelled_when_pushed_again(server: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = tmp_path / "stores"
    folder.mkdir()
    (folder / "store.sqlite").write_bytes(sqlite_bytes(tmp_path, ["in-store-1", "in-store-2"]))
    assert pushed(server, home, folder, labels=("ci-1",))["sent"] == 1
    assert listed(server, label="ci-1").keys() == {"in-store-1", "in-store-2"}
    again = pushed(server, home, folder, labels=("ci-2", "ci-1"))
    assert (again["sent"], again["skipped"]) == (0, 1)
    assert listed(server, label="ci-2").keys() == {"in-store-1", "in-store-2"}
    held = pushed(server, home, folder, labels=("ci-2",))
    assert (held["skipped"], held["bytes"]) == (1, 0), "labels it has: its bytes are not sent again"


def test_the_list_page_shows_labels_as_chips_and_the_filter_as_removable(client: httpx.Client) -> None:
    data = jsonl_bytes("chipped")
    answer = client.post(
        "/api/uploads", params=[("name", "s.jsonl"), ("label", "ci-7"), ("label", "nightly")], content=data
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["upload"]["labels"] == ["ci-7", "nightly"]

    page = client.get("/", timeout=60).text
    row = one(page, 'tr[data-session-key="chipped"]')
    assert attrs(row, "[data-labels] a.label-chip", "data-label") == ["ci-7", "nightly"]
    assert attrs(row, 'a[data-label="ci-7"]', "href") == ["/?label=ci-7"]
    assert select(one(page, 'tr[data-session-key="on-disk"]'), "[data-labels]") == []
    assert select(page, '[data-filter="label"]') == [], "no label filter while none is chosen"

    chosen = client.get("/", params={"label": "ci-7", "carrier": "jsonl"}, timeout=60).text
    assert attrs(chosen, "tr[data-session-key]", "data-session-key") == ["chipped"]
    shown = one(chosen, 'form[data-list-form] [data-filter="label"]')
    assert shown["data-label"] == "ci-7" and "ci-7" in shown.get_text()
    assert attrs(shown, 'input[type="hidden"][name="label"]', "value") == ["ci-7"], "a search keeps it"
    assert attrs(shown, '[data-filter-remove="label"]', "href") == ["/?carrier=jsonl"], "removable, the rest kept"
    assert attrs(chosen, "a[data-label-active]", "data-label") == ["ci-7"]

    zh = client.get("/", params={"label": "ci-7"}, headers={"Accept-Language": "zh-CN"}, timeout=60).text
    assert "标签：ci-7" in one(zh, '[data-filter="label"]').get_text()


@pytest.mark.parametrize(
    ("labels", "why"),
    [
        (["x" * 101], "1 to 100 characters"),
        ([""], "1 to 100 characters"),
        (["ok", "line\nbreak"], "control characters"),
        (["tab\there"], "control characters"),
        ([f"ci-{n}" for n in range(21)], "at most 20"),
    ],
)
def test_a_label_the_server_cannot_keep_is_a_422_naming_the_parameter(
    client: httpx.Client, labels: list[str], why: str
) -> None:
    data = jsonl_bytes("refused-label")
    params = [("name", "s.jsonl"), *(("label", label) for label in labels)]
    answer = client.post("/api/uploads", params=params, content=data, timeout=60)
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert "`label`" in body["detail"] and why in body["detail"]
    assert body["error"]["code"] == "bad-label" and body["parameter"] == "label"
    assert "x" * 20 not in answer.text, "never says a long value back"
    assert client.get("/api/uploads", timeout=60).json()["uploads"] == [], "nothing stored"

    pushed_whole = client.post("/api/uploads", params={"name": "s.jsonl"}, content=data, timeout=60)
    assert pushed_whole.status_code == 201
    append = client.post(
        "/api/pushes/refused-label",
        params=[("created", str(T0)), *(("label", label) for label in labels)],
        content=b"",
        headers={"Upload-Offset": str(len(data)), "If-Match": f'"{hashlib.sha256(data).hexdigest()}"'},
        timeout=60,
    )
    assert append.status_code == 422, append.text
    assert "`label`" in append.json()["detail"] and "x" * 20 not in append.text
    assert listed(client)["refused-label"]["labels"] == [], "the append labelled nothing"


@pytest.mark.slow  # `dsh-inspect push` processes
def test_the_command_refuses_a_label_before_it_sends_anything(server: str, tmp_path: Path) -> None:
    root = dsh_root(tmp_path, "never-sent")
    for bad, why in ((("x" * 101,)), "1 to 100 characters"), ((("a\tb",)), "control characters"):
        done = push(server, tmp_path / "home", root, labels=bad)
        assert done.returncode == 2 and why in done.stderr.decode(), done.stderr
    many = tuple(f"ci-{n}" for n in range(21))
    done = push(server, tmp_path / "home", root, labels=many)
    assert done.returncode == 2 and b"at most 20" in done.stderr
    assert "never-sent" not in listed(server)


@pytest.mark.slow  # `dsh-inspect push` processes
def test_a_watching_push_labels_a_held_log_once(server: str, tmp_path: Path) -> None:
    from dsh_inspect.commands.push import Pusher, PushState

    root = dsh_root(tmp_path, "watched")
    log = root / "watched" / "session.jsonl"
    pushed(server, tmp_path / "home", root)  # held already, unlabelled
    pusher = Pusher(server, None, PushState(tmp_path / "state.json"), labels=("ci-w",))
    asked: list[tuple[str, str]] = []
    pusher.client.event_hooks["request"] = [lambda r: asked.append((r.method, r.url.path))]
    header = orjson.loads(log.read_bytes().split(b"\n")[0])
    try:
        for _ in range(2):  # as `--watch` pushes a file each time it is told of a change
            pusher.push(str(log), "jsonl", header, finished_only=True)
    finally:
        pusher.close()
    assert listed(server)["watched"]["labels"] == ["ci-w"]
    assert asked == [("GET", "/api/pushes/watched"), ("POST", "/api/pushes/watched")], "then nothing more"
    assert (pusher.tally.sent, pusher.tally.skipped, pusher.tally.bytes) == (0, 2, 0)
