"""`dsh-inspect push` onto the team store (issue 34, docs/decisions/0024-push.md): real PostgreSQL and SeaweedFS,
two `serve` processes A and B on them, each with a data folder of its own as two machines have. A log growing
turn by turn is pushed with the real command after each turn; the other process serves it byte for byte, reads
its new events, and finds its newest words; the command sends only the bytes appended, and nothing the second
time; appends to a process that did not store their base are correct; a rewritten log is a new version, the old
one kept."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.support.process import PROJECT, ServeProcess, serve_process
from tests.support.upload_model import log_bytes, phrase
from tests.team.conftest import TeamStore

pytestmark = pytest.mark.team

SEARCH_SECONDS = 30.0  # indexing runs in the background: how long a search may take to find new words


def start(team: TeamStore, data_dir: Path) -> Any:
    return serve_process([], data_dir, options=team.options, env=team.env)


class Pusher:
    """The real `dsh-inspect push DIR --to URL --json`, with its state file in a cache folder of its own."""

    def __init__(self, root: Path, sid: str) -> None:
        self.home = root / "home"
        self.folder = root / "dsh" / sid  # a session folder as dsh writes it
        self.folder.mkdir(parents=True)
        self.log = self.folder / "session.jsonl"

    def write(self, data: bytes) -> None:
        """The log as dsh leaves it: appended to in place when it only grew (same inode), rewritten otherwise."""
        if self.log.exists() and data.startswith(before := self.log.read_bytes()):
            with self.log.open("ab") as f:
                f.write(data[len(before) :])
        else:
            self.log.write_bytes(data)

    def push(self, server: ServeProcess) -> dict[str, Any]:
        env = {k: v for k, v in os.environ.items() if k != "DSH_INSPECT_TOKEN"}
        env |= {"HOME": str(self.home), "XDG_CACHE_HOME": str(self.home / "cache")}
        args = [sys.executable, "-m", "dsh_inspect", "push", str(self.folder), "--to", server.url, "--json"]
        done = subprocess.run(args, cwd=PROJECT, env=env, capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
        tally: dict[str, Any] = orjson.loads(done.stdout)
        assert tally["refused"] == [], tally
        return tally


def twin(server: ServeProcess, key: str) -> dict[str, Any]:
    response = httpx.get(f"{server.url}/api/sessions/{key}", timeout=60)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def raw(server: ServeProcess, key: str) -> bytes:
    response = httpx.get(f"{server.url}/sessions/{key}/raw", timeout=60)
    assert response.status_code == 200, response.text
    return response.content


def events_in(data: bytes) -> int:
    """The events of a log `log_bytes` wrote: a line each, after the header."""
    return data.count(b"\n") - 1


def search(server: ServeProcess, q: str) -> dict[str, Any]:
    response = httpx.get(f"{server.url}/api/search", params={"q": q}, timeout=120)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def eventually_found(server: ServeProcess, key: str, present: list[str], absent: tuple[str, ...] = ()) -> float:
    """Seconds until a search on `server` finds each phrase of `present` once, in `key`, and none of `absent`;
    fails with the last answers after SEARCH_SECONDS."""
    began = time.monotonic()
    while True:
        answers = {q: search(server, q) for q in [*present, *absent]}
        hits = {q: [h["key"] for h in a["hits"]] for q, a in answers.items()}
        if all(hits[q] == [key] for q in present) and all(hits[q] == [] for q in absent):
            return time.monotonic() - began
        if time.monotonic() - began > SEARCH_SECONDS:
            pending = {q: a["pending"] for q, a in answers.items()}
            raise AssertionError(f"{server.url} after {SEARCH_SECONDS} s: hits {hits}, pending {pending}")
        time.sleep(0.2)


def served_everywhere(servers: list[ServeProcess], key: str, data: bytes) -> list[dict[str, Any]]:
    """Each server serves the session as `data`, byte for byte, at its newest upload (whose digest is theirs),
    and has read every event of it; their twins."""
    digest = hashlib.sha256(data).hexdigest()
    twins = []
    for server in servers:
        assert raw(server, key) == data, f"{server.url} serves {key} as the log is, byte for byte"
        found = twin(server, key)
        assert found["upload"] == digest, f"{server.url}: the newest upload is the log's bytes"
        assert (found["size"], found["events"]) == (len(data), events_in(data)), server.url
        assert found["verdict"]["category"] == "accepted", (server.url, found["verdict"])
        twins.append(found)
    return twins


def test_a_log_pushed_after_each_turn_through_b_is_served_and_read_on_by_a(
    team_store: TeamStore, tmp_path: Path
) -> None:
    sid = "pushed-through-b"
    pusher = Pusher(tmp_path, sid)
    with ExitStack() as stack:
        a = stack.enter_context(start(team_store, tmp_path / "a"))
        b = stack.enter_context(start(team_store, tmp_path / "b"))
        sent = 0
        events: list[int] = []
        for turns in range(1, 5):
            data = log_bytes(sid, turns, 0)
            pusher.write(data)
            tally = pusher.push(b)
            assert tally == {"sessions": 1, "sent": 1, "bytes": len(data) - sent, "skipped": 0, "refused": []}, (
                f"turn {turns}: only the bytes appended since the last push go over the wire"
            )
            sent = len(data)
            (seen_on_a, _) = served_everywhere([a, b], sid, data)
            events.append(seen_on_a["events"])
            (version,) = seen_on_a["versions"]
            assert [u["size"] for u in version["uploads"]] == [len(log_bytes(sid, n, 0)) for n in range(1, turns + 1)]
            again = pusher.push(b)
            assert again == {"sessions": 1, "sent": 0, "bytes": 0, "skipped": 1, "refused": []}, "nothing twice"
        assert events == sorted(set(events)), f"A read more events after each push: {events}"
        eventually_found(a, sid, [phrase(sid, 0, 4), phrase(sid, 0, 1)])
        eventually_found(b, sid, [phrase(sid, 0, 4)])


def test_pushes_alternating_between_processes_each_continue_a_base_the_other_stored(
    team_store: TeamStore, tmp_path: Path
) -> None:
    """Each append reaches the process that did not store its base: that one hashes the base's bytes (from
    the object store) to continue its digest, and the digest is still the log's."""
    sid = "pushed-alternately"
    pusher = Pusher(tmp_path, sid)
    with ExitStack() as stack:
        a = stack.enter_context(start(team_store, tmp_path / "a"))
        b = stack.enter_context(start(team_store, tmp_path / "b"))
        sent = 0
        for turns, through in zip(range(1, 6), [b, a, b, a, a], strict=True):
            data = log_bytes(sid, turns, 0)
            pusher.write(data)
            tally = pusher.push(through)
            assert (tally["sent"], tally["bytes"]) == (1, len(data) - sent), (turns, through.url, tally)
            sent = len(data)
            served_everywhere([a, b], sid, data)
            assert pusher.push(a if through is b else b)["sent"] == 0, "the other process holds it already"
        (version,) = twin(a, sid)["versions"]
        assert len(version["uploads"]) == 5, "one version, an upload per push"
        eventually_found(a, sid, [phrase(sid, 0, 5)])


def test_a_rewritten_log_is_pushed_as_a_new_version_and_the_old_one_is_kept(
    team_store: TeamStore, tmp_path: Path
) -> None:
    sid = "pushed-rewritten"
    pusher = Pusher(tmp_path, sid)
    with ExitStack() as stack:
        a = stack.enter_context(start(team_store, tmp_path / "a"))
        b = stack.enter_context(start(team_store, tmp_path / "b"))
        for turns in range(1, 4):
            pusher.write(log_bytes(sid, turns, 0))
            pusher.push(b)
        old = log_bytes(sid, 3, 0)
        served_everywhere([a, b], sid, old)
        eventually_found(a, sid, [phrase(sid, 0, 3)])

        # the same session rewritten from its second turn on (a repaired tail): only its first turn is held
        new = log_bytes(sid, 3, 1)
        first_turn = log_bytes(sid, 1, 0)
        assert new.startswith(first_turn) and not new.startswith(log_bytes(sid, 2, 0))
        pusher.write(new)
        tally = pusher.push(b)
        assert (tally["sent"], tally["bytes"]) == (1, len(new) - len(first_turn)), (
            f"the bytes after the held first turn, appended to it: {tally}"
        )
        (now, _) = served_everywhere([a, b], sid, new)
        versions = [[u["digest"] for u in v["uploads"]] for v in now["versions"]]
        digest = {n: hashlib.sha256(log_bytes(sid, n, 0)).hexdigest() for n in range(1, 4)}
        assert versions == [
            [digest[1], digest[2], digest[3]],
            [hashlib.sha256(new).hexdigest()],
        ], "the rewrite is a second version; the first is kept whole"
        for server in (a, b):
            kept = now["versions"][0]["uploads"][-1]
            then = httpx.get(f"{server.url}/api{kept['url']}", timeout=60).json()
            assert httpx.get(f"{server.url}{then['download']}", timeout=60).content == old, "the old version's bytes"
            assert then["events"] == events_in(old)
        eventually_found(a, sid, [phrase(sid, 1, 3), phrase(sid, 1, 2)], absent=(phrase(sid, 0, 3),))

        # and it grows on as the new version
        newer = log_bytes(sid, 4, 1)
        pusher.write(newer)
        assert pusher.push(a)["bytes"] == len(newer) - len(new)
        (grown, _) = served_everywhere([a, b], sid, newer)
        assert [len(v["uploads"]) for v in grown["versions"]] == [3, 2]
        eventually_found(a, sid, [phrase(sid, 1, 4)])
