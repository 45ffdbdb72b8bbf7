"""One headless Locust run against dsh-inspect servers, for benchmarks/load.py; prints what it saw as JSON.

`python -m benchmarks.load_run FIXTURES --seconds 60 --users 20 [--abuser]`: `FIXTURES` is the JSON file
load.py writes (the servers' URLs, the seeded sessions' keys, the logs to upload). It runs in a process of its
own because Locust's gevent patches the standard library on import. load.py runs the users and the abuser
(`--users 0 --abuser`) in two such processes at once, as two machines would be: in one process, the abuser's
own work as a client (32 MiB bodies copied and sent, thousands of refusals read) held the one event loop that
times the users' requests, counted as the server's slowness, and slowed the abuser itself.

Well-behaved users (`Reader`) each come from an address of their own (127.0.1.N: a person at a machine of
their own) and pick one of the servers at random for every request; they wait 0.5–2 s between actions, as a
reader does, and browse (the list, a session page and its facts, its rows as they scroll, its end), search
(across sessions and in one), compare two sessions and upload a small log of their own (then delete it). The
abuser (`Abuser`, exactly one, from 127.0.0.2) waits for nothing: it makes compare bombs (two sessions whose
tool results differ in every other of 5,000 words, uploaded fresh, compared on the other server), sends
12 KB search phrases and one-letter searches (a scan of every row), uploads a large log (new bytes each time)
and keeps more live tails open on each server than one client may hold.

Every request's time is recorded from Locust's request event, tagged with who sent it; the JSON holds, for
each side, the count, percentiles and statuses, and every 5xx answer or failed request of either.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402 (after gevent's patches, as Locust needs)
import itertools  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, ClassVar  # noqa: E402
from urllib.parse import urlencode  # noqa: E402

import gevent  # noqa: E402
import orjson  # noqa: E402
from locust import HttpUser, User, between, constant, task  # noqa: E402
from locust.clients import LocustHttpAdapter  # noqa: E402
from locust.env import Environment  # noqa: E402
from urllib3 import PoolManager  # noqa: E402
from urllib3.exceptions import ProtocolError  # noqa: E402
from urllib3.util.retry import Retry  # noqa: E402

READER_TIMEOUT = 60  # seconds a reader's request may take before it counts as failed
ABUSER_TIMEOUT = 120
TAILS = 40  # live tails the abuser keeps open on each server: more than `live_streams_per_client` (32)
TAIL_SECONDS = (5, 15)  # how long it holds each
# what either side may be answered: the abuser's refusals too (a phrase too long, a client past its share)
EXPECTED = frozenset({200, 201, 422, 429})
LONG_PHRASE = "word " * 2_400  # 12 KB: over what one search may ask (`MAX_QUERY`)


class Fixtures:
    """What load.py seeded and prepared, read from its JSON file."""

    def __init__(self, path: Path) -> None:
        found = orjson.loads(path.read_bytes())
        self.hosts: list[str] = found["hosts"]
        self.sessions: list[str] = found["sessions"]  # the small sessions' keys
        self.long: str = found["long"]
        self.changed: str = found["changed"]  # the long session with one tool result changed
        self.one_turn: str = found["oneTurn"]
        self.long_rows: int = found["longRows"]
        self.window: int = found["window"]
        self.words: list[str] = found["words"]
        self.pages: int = found["pages"]
        self.small_log = Path(found["smallLog"]).read_bytes()
        self.big_log = Path(found["bigLog"]).read_bytes()
        self.bomb_a = Path(found["bombA"]).read_bytes()
        self.bomb_b = Path(found["bombB"]).read_bytes()


def renamed(log: bytes, session_id: str) -> bytes:
    """`log` as another session's: its header's `id` replaced, so its bytes are new (no upload deduplicates it)."""
    head, _, rest = log.partition(b"\n")
    return orjson.dumps({**orjson.loads(head), "id": session_id}) + b"\n" + rest


def query(path: str, **params: object) -> str:
    return f"{path}?{urlencode({k.rstrip('_'): v for k, v in params.items()})}"


_reader_addresses = itertools.count(1)
resent = [0]  # requests sent again after a reset (ResendOnReset)


class ResendOnReset(Retry):
    """Send a request again, once, when its connection was closed before any answer came, as browsers do: the
    server closes a kept-alive connection once it has been idle for 5 s (uvicorn's `timeout_keep_alive`), and
    a request sent on it just then meets a reset. Counted in `resent`; a timeout is never sent again (it is a
    failed request), nor is a request whose answer had begun."""

    def _is_read_error(self, err: Exception) -> bool:
        return isinstance(err, ProtocolError)  # not ReadTimeoutError: that goes to `other`, which is 0

    def increment(self, *args: Any, **kwargs: Any) -> ResendOnReset:
        again = super().increment(*args, **kwargs)  # raises unless the request may be sent again
        resent[0] += 1
        return again


class Client(HttpUser):
    """What both kinds of user share: an address of their own, requests named for the statistics."""

    abstract = True
    fix: ClassVar[Fixtures]  # set by main() before any user starts
    who: ClassVar[str]
    timeout: ClassVar[float]

    def __init__(self, environment: Environment) -> None:
        self.pool_manager = PoolManager(maxsize=2 * TAILS + 8, source_address=(self.address(), 0))
        super().__init__(environment)
        # a 429's Retry-After is the client's to honour or not: it is answered as it is, never retried here
        resend = ResendOnReset(
            total=1,
            connect=0,
            read=1,
            redirect=0,
            status=0,
            other=0,
            allowed_methods=None,
            respect_retry_after_header=False,
        )
        for scheme in ("http://", "https://"):
            self.client.mount(scheme, LocustHttpAdapter(pool_manager=self.pool_manager, max_retries=resend))

    def address(self) -> str:
        raise NotImplementedError

    def context(self) -> dict[str, Any]:
        return {"who": self.who}

    def send(self, method: str, path: str, name: str, host: str | None = None, **kwargs: Any) -> Any:
        """One request to `host` (one of the servers at random when None), named for the statistics."""
        url = (host or random.choice(self.fix.hosts)) + path
        with self.client.request(
            method, url, name=f"{self.who}: {name}", timeout=self.timeout, catch_response=True, **kwargs
        ) as response:
            response.success()  # statuses are judged from the recorded events, not by Locust
            return response

    def session(self) -> str:
        pick = random.random()
        return self.fix.long if pick < 0.25 else self.fix.one_turn if pick < 0.3 else random.choice(self.fix.sessions)


class Reader(Client):
    """A well-behaved user: reads, searches, compares and now and then uploads a log of their own."""

    wait_time = between(0.5, 2)
    who = "reader"
    timeout = READER_TIMEOUT

    def address(self) -> str:
        # each reader is a client of its own, as people at their machines are
        return f"127.0.1.{next(_reader_addresses) % 250 + 1}"

    @task(18)
    def list_sessions(self) -> None:
        page = random.randint(1, self.fix.pages)
        if random.random() < 0.5:
            self.send("GET", query("/", page=page), "GET / (the list)")
        elif random.random() < 0.5:
            self.send("GET", query("/api/sessions", page=page), "GET /api/sessions")
        else:
            self.send(
                "GET", query("/", q=random.choice(self.fix.words), sort="tokens", order="desc"), "GET /?q= (filter)"
            )

    @task(24)
    def open_session(self) -> None:
        key = self.session()
        host = random.choice(self.fix.hosts)  # the page and the facts it asks for, from one server
        self.send("GET", f"/sessions/{key}", "GET /sessions/{key}", host)
        self.send("GET", f"/sessions/{key}/facts", "GET /sessions/{key}/facts", host)

    @task(18)
    def scroll(self) -> None:
        start = random.randrange(0, max(1, self.fix.long_rows - self.fix.window), self.fix.window)
        path = query(f"/sessions/{self.fix.long}/rows", from_=start, direction="later")
        self.send("GET", path, "GET /sessions/{key}/rows")

    @task(6)
    def open_end(self) -> None:
        self.send("GET", query(f"/sessions/{self.fix.long}", at="end"), "GET /sessions/{key}?at=end")

    @task(12)
    def search(self) -> None:
        words = " ".join(random.sample(self.fix.words, random.choice((1, 2))))
        pick = random.random()
        if pick < 0.4:
            self.send("GET", query("/search", q=words), "GET /search")
        elif pick < 0.7:
            self.send("GET", query("/api/search", q=words), "GET /api/search")
        else:
            self.send("GET", query(f"/api/sessions/{self.session()}/search", q=words), "GET /api/sessions/{key}/search")

    @task(6)
    def compare(self) -> None:
        a, b = (self.fix.long, self.fix.changed) if random.random() < 0.3 else random.sample(self.fix.sessions, 2)
        if random.random() < 0.5:
            self.send("GET", query("/compare", a=a, b=b), "GET /compare")
        else:
            self.send("GET", query("/api/compare", a=a, b=b), "GET /api/compare")

    @task(1)  # of 85: a reader uploads about once every two minutes, 20 of them every six seconds
    def upload(self) -> None:
        host = random.choice(self.fix.hosts)
        body = renamed(self.fix.small_log, f"reader-{uuid.uuid4().hex[:12]}")
        made = self.send("POST", query("/api/uploads", name="session.jsonl"), "POST /api/uploads", host, data=body)
        if made.status_code == 201:
            digest = made.json()["upload"]["digest"]
            # deleted from either server: the other sees it gone
            self.send("DELETE", f"/api/uploads/{digest}", "DELETE /api/uploads/{digest}")


class Abuser(Client):
    """One client that waits for nothing and asks for what costs the most."""

    fixed_count = 1
    wait_time = constant(0)
    who = "abuser"
    timeout = ABUSER_TIMEOUT
    tails: ClassVar[list[gevent.Greenlet]] = []

    def address(self) -> str:
        return "127.0.0.2"

    def on_start(self) -> None:
        for host in self.fix.hosts:
            Abuser.tails += [gevent.spawn(self.keep_tail, host) for _ in range(TAILS)]

    def keep_tail(self, host: str) -> None:
        """A live tail on `host`, held open a while, again and again; refused ones are asked for every second."""
        while True:
            key = self.session()
            tail = self.send("GET", f"/sessions/{key}/live", "GET /sessions/{key}/live", host, stream=True)
            if tail.status_code == 200:
                gevent.sleep(random.uniform(*TAIL_SECONDS))
            else:
                gevent.sleep(1)
            tail.close()

    @task(3)
    def compare_bomb(self) -> None:
        """A fresh compare bomb: uploaded to one server, compared (the page and its twin) on the other."""
        first, other = random.sample(self.fix.hosts, 2)
        keys = []
        for log in (self.fix.bomb_a, self.fix.bomb_b):
            body = renamed(log, f"bomb-{uuid.uuid4().hex[:12]}")
            made = self.send(
                "POST", query("/api/uploads", name="bomb.jsonl"), "POST /api/uploads (bomb)", first, data=body
            )
            if made.status_code not in (200, 201):
                return
            keys.append(made.json()["upload"]["sessions"][0]["key"])
        self.send("GET", query("/api/compare", a=keys[0], b=keys[1]), "GET /api/compare (bomb)", other)
        self.send("GET", query("/compare", a=keys[0], b=keys[1]), "GET /compare (bomb)", first)

    @task(3)
    def long_phrases(self) -> None:
        self.send("GET", query("/api/search", q=LONG_PHRASE), "GET /api/search (12 KB)")
        self.send("GET", query("/search", q=LONG_PHRASE), "GET /search (12 KB)")
        self.send(
            "GET",
            query(f"/api/sessions/{self.fix.long}/search", q=LONG_PHRASE),
            "GET /api/sessions/{key}/search (12 KB)",
        )

    @task(2)
    def scans(self) -> None:
        letter = random.choice("etaoinsr")
        self.send("GET", query("/api/search", q=letter), "GET /api/search (one letter)")
        self.send(
            "GET",
            query(f"/api/sessions/{self.fix.long}/search", q=letter, raw="true"),
            "GET /api/sessions/{key}/search (one letter, raw)",
        )

    @task(1)
    def big_upload(self) -> None:
        body = renamed(self.fix.big_log, f"big-{uuid.uuid4().hex[:12]}")
        self.send("POST", query("/api/uploads", name="big.jsonl"), "POST /api/uploads (large)", data=body)


class Recorder:
    """Every request Locust reports, by who sent it."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {"reader": [], "abuser": []}
        self.statuses: dict[str, dict[int, int]] = {"reader": {}, "abuser": {}}
        self.by_name: dict[str, list[float]] = {}  # both sides' requests, by name (it says whose)
        self.name_statuses: dict[str, dict[int, int]] = {}
        self.errors: list[dict[str, Any]] = []
        self.unexpected: list[dict[str, Any]] = []  # answers neither side should get: a 404, a 400, …

    def __call__(
        self,
        request_type: str,
        name: str,
        response_time: float,
        response: Any,
        context: dict[str, Any],
        exception: BaseException | None,
        **_: Any,
    ) -> None:
        who = context.get("who", "reader")
        status = int(getattr(response, "status_code", 0) or 0)
        self.statuses[who][status] = self.statuses[who].get(status, 0) + 1
        self.times[who].append(response_time)
        self.by_name.setdefault(name, []).append(response_time)
        counted = self.name_statuses.setdefault(name, {})
        counted[status] = counted.get(status, 0) + 1
        # a 5xx (a 503 too: nothing is down here) or no answer at all (a dropped connection, a timeout)
        if status >= 500 or status == 0:
            failed = getattr(response, "error", None) or exception
            detail = repr(failed) if status == 0 else (getattr(response, "text", "") or "")[:500]
            self.errors.append({"who": who, "method": request_type, "name": name, "status": status, "detail": detail})
        elif status not in EXPECTED and len(self.unexpected) < 50:
            detail = (getattr(response, "text", "") or "")[:300]
            self.unexpected.append(
                {"who": who, "method": request_type, "name": name, "status": status, "detail": detail}
            )

    def summary(self, seconds: float) -> dict[str, Any]:
        def spread(times: list[float]) -> dict[str, Any]:
            if len(times) < 2:
                return {"count": len(times), "p50": None, "p95": None, "p99": None}
            cuts = statistics.quantiles(times, n=100, method="inclusive")
            return {"count": len(times), "p50": cuts[49], "p95": cuts[94], "p99": cuts[98], "max": max(times)}

        return {
            "seconds": seconds,
            "reader": {**spread(self.times["reader"]), "statuses": self.statuses["reader"]},
            "abuser": {**spread(self.times["abuser"]), "statuses": self.statuses["abuser"]},
            "names": {
                name: {**spread(times), "statuses": self.name_statuses[name]}
                for name, times in sorted(self.by_name.items())
            },
            "errors": self.errors,
            "unexpected": self.unexpected,
            "resent": resent[0],
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.load_run", description=__doc__.splitlines()[0])
    parser.add_argument("fixtures", type=Path, help="the JSON file benchmarks/load.py wrote")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--users", type=int, default=20, help="well-behaved users (0: the abuser alone)")
    parser.add_argument("--abuser", action="store_true", help="and one abusive client among them")
    args = parser.parse_args(argv)
    Client.fix = fix = Fixtures(args.fixtures)
    classes: list[type[User]] = ([Reader] if args.users else []) + ([Abuser] if args.abuser else [])
    env = Environment(user_classes=classes, host=fix.hosts[0])
    recorder = Recorder()
    env.events.request.add_listener(recorder)
    runner = env.create_local_runner()
    count = args.users + (1 if args.abuser else 0)
    started = time.monotonic()
    runner.start(count, spawn_rate=count)
    gevent.sleep(args.seconds)
    runner.quit()
    gevent.killall(Abuser.tails, block=True, timeout=10)
    took = time.monotonic() - started
    sys.stdout.write(orjson.dumps(recorder.summary(took), option=orjson.OPT_NON_STR_KEYS).decode() + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
