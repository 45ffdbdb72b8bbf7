"""A load test (issue 33): simulated users against two server processes, without and then with one abusive client
among them, driven by Locust (PyPI, the `bench` extra).

Two `python -m dsh_inspect serve` processes on loopback share one `--data-dir` (the embedded store: a SQLite
catalog and blob files), as two `serve`s on one machine may. It is seeded through `POST /api/uploads` with
W1's 1,002 sessions and the copy of W1 long that the compare group makes; the search index is brought up to
date in both, and each has read every session's facts once (the list sorted by tokens). Then
`benchmarks/load_run.py` (Locust, headless, in a process of its own: gevent patches what it imports) runs
`USERS` well-behaved users for `SECONDS` seconds: browsing (the list, session pages and their facts, rows as
they scroll, `?at=end`), searching (across sessions and in one), comparing and uploading a small log (then
deleting it), each request to either process. With the abuser, one more client (its own address, and a Locust
process of its own running at the same time, as another machine would) hammers what issue 33 bounded, without
waiting: fresh compare bombs, 12 KB search phrases and one-letter searches, a large upload (new bytes each time)
and more live tails than one client may hold. Between runs every upload made
during the run is deleted and both indexes are left to settle.

After a warm-up run (without the abuser, `WARMUP_SECONDS`), runs without and with the abuser alternate,
`RUNS` of each. Budgets:

- zero server errors in every run, the warm-up's too: no 5xx answer (a 503 counts: nothing is down here)
  and no request dropped or timed out, for the abuser's requests as much as the users', nor a traceback
  in either server's log (a request meeting a reset as it is sent on a kept-alive connection the server
  just closed is sent again once, as browsers do, and counted in the note);
- the well-behaved users' p95 response time with the abuser ≤ 2× without, each the median of the runs'.

`DSH_INSPECT_LOAD_SECONDS` (and `DSH_INSPECT_LOAD_RUNS`) shorten a trial; the defaults are issue 33's.
`DSH_INSPECT_LOAD_SETTINGS` gives both servers other settings for a trial (`NAME=VALUE`, spaces between).
Registered in run.py's GROUPS as `load`.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import orjson
import zstandard
from dsh_inspect.settings import Settings

from benchmarks.compare import CHANGED_ID, changed_copy
from benchmarks.generate import LONG_ID, MIB, ONE_TURN_ID, Workloads, generate_w3
from benchmarks.run import PROJECT, Budget, Figure, ms
from tests.support.process import ServeProcess, serve_process
from tests.support.runs import tool_run, write_log

SECONDS = float(os.environ.get("DSH_INSPECT_LOAD_SECONDS", "60"))
WARMUP_SECONDS = min(20.0, SECONDS)
KEEPER_ADDRESS = "127.0.0.3"  # neither a reader's (127.0.1.N) nor the abuser's (127.0.0.2)
RUNS = int(os.environ.get("DSH_INSPECT_LOAD_RUNS", "3"))
# settings both servers are given, for a trial of another value: "server_seconds_per_minute=6 requests_per_client=1"
TRIAL_SETTINGS = [
    (name, int(value))
    for name, _, value in (s.partition("=") for s in os.environ.get("DSH_INSPECT_LOAD_SETTINGS", "").split())
]
USERS = 20  # well-behaved users; the abuser is one more
REST_SECONDS = 5  # between runs, once the uploads a run made are deleted and the indexes settled
BIG_UPLOAD = 32 * MIB  # the abuser's large upload: a log of small events
BOMB_WORDS = 5_000  # the compare bomb: `x x x …` against `x y x y …`
# words W1's texts are made of (benchmarks/generate.py), so searches and list filters find something
WORDS = ["module", "patch", "cache", "window", "stream", "verify", "latency", "budget", "decode", "测试", "会话"]


def fixtures(w: Workloads, folder: Path, hosts: list[str]) -> dict[str, Any]:
    """The logs load_run.py uploads (a small one of W1's, plain; a large one; a compare bomb's two sides), and
    what it asks for; the seeded sessions' keys are added once they are uploaded."""
    folder.mkdir(parents=True, exist_ok=True)
    small = folder / "small.jsonl"
    with open(w.small_sessions[0], "rb") as f:
        small.write_bytes(zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True).read())
    big = generate_w3(folder / "big", BIG_UPLOAD)
    bomb_a = write_log(folder / "bomb-a.jsonl", tool_run(" ".join(["x"] * BOMB_WORDS), seed=7).events)
    bomb_b = write_log(folder / "bomb-b.jsonl", tool_run(" ".join(["x", "y"] * BOMB_WORDS), seed=8).events)
    return {
        "hosts": hosts,
        "long": LONG_ID,
        "changed": CHANGED_ID,
        "oneTurn": ONE_TURN_ID,
        "window": Settings().window_rows,
        "words": WORDS,
        "smallLog": str(small),
        "bigLog": str(big),
        "bombA": str(bomb_a),
        "bombB": str(bomb_b),
    }


def seed(client: httpx.Client, hosts: list[str], logs: list[Path]) -> tuple[list[str], set[str]]:
    """Upload every log (to either server in turn); their sessions' keys and the uploads' digests."""
    keys, digests = [], set()
    for i, log in enumerate(logs):
        made = client.post(f"{hosts[i % 2]}/api/uploads", params={"name": log.name}, content=log.read_bytes())
        if made.status_code not in (200, 201):
            raise RuntimeError(f"seeding {log}: {made.status_code} {made.text[:300]}")
        upload = made.json()["upload"]
        digests.add(upload["digest"])
        keys += [s["key"] for s in upload["sessions"]]
    return keys, digests


def settle(client: httpx.Client, hosts: list[str], timeout: float = 900) -> None:
    """Until neither server's search index has sessions pending: each run starts with nothing left to index."""
    deadline = time.monotonic() + timeout
    for host in hosts:
        while polite_get(client, f"{host}/api/search", params={"q": "module"}).json()["pending"]:
            if time.monotonic() > deadline:
                raise RuntimeError("the search indexes did not settle")
            time.sleep(0.5)


def polite_get(client: httpx.Client, url: str, **kwargs: Any) -> httpx.Response:
    """A GET asked again after the wait a 429 names: polling a busy server between runs (the large uploads an
    abuser left being indexed) can spend the polling client's share of the server's time."""
    while (answer := client.get(url, **kwargs)).status_code == 429:
        time.sleep(float(answer.headers.get("retry-after", "1")))
    return answer


def prime(client: httpx.Client, hosts: list[str]) -> None:
    """What a first visit to each server costs, paid before the warm-up: the list sorted by tokens (every
    session's facts read: asked again until none is still being read), the long session whole and its
    comparison with its copy."""
    for host in hosts:
        deadline = time.monotonic() + 900
        while client.get(f"{host}/api/sessions", params={"sort": "tokens", "order": "desc"}).json()["reading"]:
            if time.monotonic() > deadline:
                raise RuntimeError("the list's facts were not read")
            time.sleep(0.5)
        for path in (
            "/?sort=tokens&order=desc",
            f"/sessions/{LONG_ID}/facts",
            f"/sessions/{LONG_ID}?at=end",
            f"/api/compare?a={LONG_ID}&b={CHANGED_ID}",
        ):
            answer = client.get(f"{host}{path}")
            if answer.status_code != 200:
                raise RuntimeError(f"GET {path}: {answer.status_code} {answer.text[:300]}")


def forget_since(client: httpx.Client, host: str, seeded: set[str], errors: list[dict[str, Any]]) -> int:
    """Delete every upload a run made (what the seed did not); how many. A delete answered 5xx is a server
    error like any other (added to `errors`), and tried again once."""
    gone = 0
    for upload in client.get(f"{host}/api/uploads").json()["uploads"]:
        if upload["digest"] not in seeded:
            for _ in range(2):
                answer = client.delete(f"{host}/api/uploads/{upload['digest']}")
                if answer.status_code < 500:
                    break
                name = "cleanup: DELETE /api/uploads/{digest}"
                errors.append(
                    {
                        "who": "cleanup",
                        "method": "DELETE",
                        "name": name,
                        "status": answer.status_code,
                        "detail": answer.text[:300],
                    }
                )
                time.sleep(1)
            if answer.status_code not in (200, 204, 404):
                raise RuntimeError(f"deleting {upload['digest']}: {answer.status_code} {answer.text[:300]}")
            gone += 1
    return gone


def locust(fixtures_file: Path, seconds: float, abuser: bool) -> dict[str, Any]:
    """One run: the users in a Locust process, and the abuser, if any, in another at the same time (load_run.py
    says why); what they saw, as one."""
    args = [sys.executable, "-m", "benchmarks.load_run", str(fixtures_file), "--seconds", str(seconds)]
    runs = [[*args, "--users", str(USERS)], *([[*args, "--users", "0", "--abuser"]] if abuser else [])]
    started = [subprocess.Popen(a, cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for a in runs]
    seen = []
    for process in started:
        out, err = process.communicate(timeout=seconds + 300)
        if process.returncode != 0 or not out.strip():
            raise RuntimeError(f"benchmarks.load_run failed ({process.returncode}): {err.decode()[-3000:]}")
        seen.append(orjson.loads(out.splitlines()[-1]))
    users, *others = seen
    for other in others:  # the abuser's side, and its errors, from its own process
        users["abuser"] = other["abuser"]
        users["names"] |= {name: s for name, s in other["names"].items() if name.startswith("abuser: ")}
        for kept in ("errors", "unexpected"):
            users[kept] += other[kept]
        users["resent"] += other["resent"]
    found: dict[str, Any] = users
    return found


def tracebacks(servers: list[ServeProcess]) -> list[str]:
    """Each traceback either server printed, with the lines after it (the exception)."""
    found = []
    for server in servers:
        lines = server.said().splitlines()
        for i, line in enumerate(lines):
            if line.startswith("Traceback"):
                end = next((j for j in range(i + 1, len(lines)) if lines[j] and not lines[j][0].isspace()), i)
                found.append("\n".join(lines[i : end + 1]))
    return found


def five_hundreds(servers: list[ServeProcess]) -> Counter[str]:
    """The 5xx answers both servers' access logs (stderr, one JSON line a request) record, by route and status."""
    counted: Counter[str] = Counter()
    for server in servers:
        for line in server.err.text().splitlines():
            if line.startswith("{") and '"status"' in line:
                try:
                    entry = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if (entry.get("status") or 0) >= 500:
                    counted[f"{entry['method']} {entry['route']} {entry['status']}"] += 1
    return counted


def keep_logs(servers: list[ServeProcess], out: Path) -> bool:
    """Both servers' logs, kept for a look afterwards (benchmarks/out is git-ignored)."""
    for i, server in enumerate(servers):
        (out / f"load-server-{i}.log").write_text(server.said())
    return False  # an exception on its way goes on


def group(w: Workloads, scratch: Path, runs: int, out: Path) -> tuple[list[Figure], str]:
    del runs  # issue 33 asks for three runs of each, after a warm-up
    if importlib.util.find_spec("locust") is None:
        raise RuntimeError("the load test needs Locust: pip install -e '.[bench]' (make bench installs it)")
    folder = scratch / "load"
    data, empty = folder / "data", folder / "no-logs"
    empty.mkdir(parents=True)
    copy_root = changed_copy(w, out)
    logs = [w.long_session, w.one_turn_session, *w.small_sessions, *copy_root.rglob("session.jsonl*")]
    notes = []
    with ExitStack() as stack:
        # two processes on one data folder; given an empty folder to serve, so only the uploads are listed
        servers = [stack.enter_context(serve_process([str(empty)], data, *TRIAL_SETTINGS)) for _ in range(2)]
        hosts = [s.url for s in servers]
        stack.push(lambda kind, *_: kind is not None and keep_logs(servers, out))  # on failure too
        client = stack.enter_context(httpx.Client(timeout=300))
        # what is done between runs, from an address of its own: the seeding client has had far more than its
        # share of the servers' time (server_seconds_per_minute) and is refused while users are about
        keeper = stack.enter_context(
            httpx.Client(timeout=300, transport=httpx.HTTPTransport(local_address=KEEPER_ADDRESS))
        )
        found = fixtures(w, folder / "fixtures", hosts)
        started = time.perf_counter()
        keys, seeded = seed(client, hosts, logs)
        settle(client, hosts)
        prime(client, hosts)
        notes.append(
            f"load: seeded {len(keys):,} sessions, indexed and read them in {ms(time.perf_counter() - started)}"
        )
        found["sessions"] = [k for k in keys if k.startswith("w1-small-")]
        found["pages"] = max(1, len(keys) // 50)
        found["longRows"] = client.get(f"{hosts[0]}/api/sessions/{LONG_ID}").json()["totalRows"]
        fixtures_file = folder / "fixtures.json"
        fixtures_file.write_bytes(orjson.dumps(found))

        results: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
        errors: list[dict[str, Any]] = []
        deleted = 0

        def run(seconds: float, abuser: bool) -> dict[str, Any]:
            nonlocal deleted
            seen = locust(fixtures_file, seconds, abuser)
            errors.extend(seen["errors"])
            deleted += forget_since(keeper, hosts[0], seeded, errors)
            settle(keeper, hosts)
            time.sleep(REST_SECONDS)  # what the run left to do (the cache's trimmer, closing tails) is done
            return seen

        warm = run(WARMUP_SECONDS, False)
        for _ in range(RUNS):
            for abuser in (False, True):
                results[abuser].append(run(SECONDS, abuser))
        logged, printed = five_hundreds(servers), tracebacks(servers)
        keep_logs(servers, out)  # each request's route, client and time: where the time went

    without = statistics.median(r["reader"]["p95"] for r in results[False])
    with_abuser = statistics.median(r["reader"]["p95"] for r in results[True])
    everything = [warm, *results[False], *results[True]]
    requests = sum(r["reader"]["count"] + r["abuser"]["count"] for r in everything)
    # one failure may be seen three ways (a 500 answered, logged, and its traceback printed): count the most
    # any one way saw, plus the requests that got no answer at all
    answered = sum(1 for e in errors if e["status"])
    dropped = len(errors) - answered
    failures = max(answered, sum(logged.values()), len(printed)) + dropped
    by_kind = Counter(f"{e['who']} {e['method']} {e['name']} {e['status']}" for e in errors)

    def statuses(who: str, rs: list[dict[str, Any]]) -> str:
        total: Counter[str] = Counter()
        for r in rs:
            total.update({str(k): v for k, v in r[who]["statuses"].items()})
        return ", ".join(f"{k}: {v:,}" for k, v in sorted(total.items()))

    figures = [
        Figure(
            f"load: server errors over {len(everything)} runs (5xx, dropped or timed out, tracebacks)",
            f"{answered} 5xx ({sum(logged.values())} logged), {dropped} dropped, {len(printed)} tracebacks; "
            f"{requests:,} requests",
            float(failures),
            Budget("<=", 0, ""),
            count=True,
        ),
        Figure(
            f"load: users' p95, one abuser among {USERS} vs none (two processes, {SECONDS:.0f} s runs)",
            f"{with_abuser:.0f} ms vs {without:.0f} ms",
            with_abuser / without,
            Budget("<=", 2.0),
        ),
    ]
    p95s = "; ".join(
        f"{'with' if a else 'without'} the abuser: " + ", ".join(f"{r['reader']['p95']:.0f}" for r in results[a])
        for a in (False, True)
    )
    notes.append(f"load: users' p95 per run (ms) {p95s}")
    notes.append(
        "load: users' requests per run "
        + ", ".join(str(r["reader"]["count"]) for r in results[False] + results[True])
        + f"; abuser's per run {', '.join(str(r['abuser']['count']) for r in results[True])}; "
        + f"{deleted} uploads the runs made deleted between runs; "
        + f"{sum(r['resent'] for r in everything)} requests sent again after a kept-alive connection was reset"
    )
    notes.append(f"load: users' statuses {statuses('reader', everything)}; abuser's {statuses('abuser', everything)}")
    slowest = sorted(
        (
            (name, s)
            for name, s in results[True][-1]["names"].items()
            if name.startswith("reader: ") and s["p95"] is not None
        ),
        key=lambda x: -x[1]["p95"],
    )[:4]
    notes.append(
        "load: users' slowest requests with the abuser (last run, p95) "
        + ", ".join(f"{name.removeprefix('reader: ')} {s['p95']:.0f} ms" for name, s in slowest)
    )
    unexpected = [u for r in everything for u in r["unexpected"]]
    if unexpected:
        odd = Counter(f"{u['who']} {u['method']} {u['name']} {u['status']}" for u in unexpected)
        notes.append(f"load: unexpected answers {dict(odd)}; the first: {unexpected[0]}")
    if by_kind or logged or printed:
        notes.append(f"load: errors seen by Locust {dict(by_kind)}; 5xx in the servers' access logs {dict(logged)}")
        notes.append(f"load: both servers' logs are in {out}/load-server-0.log and -1.log")
        # each kind once, by its last frames (the project's own) and its exception; the whole in the logs kept
        ends = Counter("\n".join(t.splitlines()[-9:]) for t in printed)
        notes += [f"load: a server's traceback ({n}×), its end:\n{end}" for end, n in ends.most_common(3)]
        notes += [f"load: {e}" for e in errors[:5]]
    return figures, "\n".join(notes)
