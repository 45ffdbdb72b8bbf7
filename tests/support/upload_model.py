"""A model of what a sequence of uploads and deletes implies (docs/decisions/0018-session-versions.md), and a
check of a running server against it: listed sessions, `/api/uploads`, versions, search hits and downloads.

The model works on bytes, not digests: an upload extends the longest upload of the same session still kept
(listed, or deleted but extended by another) whose bytes it starts with; versions are the chains those
links make (`Model.versions_of`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from hashlib import sha256

import httpx
import orjson
from hypothesis import strategies as st

from tests.support.builders import T0, LogBuilder, header

SESSIONS = ("alpha", "beta", "gamma")
NAMES = ("session.jsonl", "session.jsonl", "other.jsonl")  # mostly dsh's own name, which tells nothing


def phrase(sid: str, variant: int, turn: int) -> str:
    """Words only this session's turn `turn` of this variant holds: what a search for it must find."""
    return f"zq{sid}v{variant}t{turn}zq"


def log_bytes(sid: str, turns: int, variant: int) -> bytes:
    """A session's log; more turns of one variant extend fewer, and the variants share their first turn and
    differ from the second on (a repaired or rewritten tail)."""
    b = LogBuilder(7)
    for n in range(1, turns + 1):
        b.turn(n, f"Please read a.txt {phrase(sid, variant if n > 1 else 0, n)}")
    return b"".join(orjson.dumps(x) + b"\n" for x in [header(sid, createdAt=T0), *b.events])


@dataclass(frozen=True, slots=True)
class Send:
    sid: str
    turns: int
    variant: int
    name: str

    @property
    def data(self) -> bytes:
        return log_bytes(self.sid, self.turns, self.variant)


@dataclass(frozen=True, slots=True)
class Delete:
    pick: int  # which listed upload, modulo how many there are


Step = Send | Delete

steps = st.lists(
    st.one_of(
        st.builds(
            Send,
            st.sampled_from(SESSIONS),
            st.integers(1, 3),
            st.integers(0, 1),
            st.sampled_from(NAMES),
        ),
        st.builds(Delete, st.integers(0, 50)),
    ),
    min_size=1,
    max_size=8,
)


@dataclass(slots=True)
class Kept:
    data: bytes
    sid: str
    shown: bool  # False: deleted by a user, kept as the start of another upload
    base: Kept | None  # the kept upload of the session whose whole bytes this one's start with, the longest


@dataclass(slots=True)
class Model:
    kept: list[Kept] = field(default_factory=list)  # oldest upload first (one shown again moves last)

    def send(self, step: Send) -> int:
        """The status the upload must answer with."""
        data = step.data
        same = next((k for k in self.kept if k.data == data), None)
        if same is not None and same.shown:
            return 200
        if same is not None:  # deleted, kept as a base: shown again, as new
            self.kept.remove(same)
            same.shown = True
            self.kept.append(same)
            return 201
        bases = [k for k in self.kept if k.sid == step.sid and len(k.data) < len(data) and data.startswith(k.data)]
        self.kept.append(Kept(data, step.sid, True, max(bases, key=lambda k: len(k.data), default=None)))
        return 201

    def delete(self, step: Delete) -> bytes | None:
        """The bytes of the upload deleted, None when nothing is listed."""
        shown = [k for k in self.kept if k.shown]
        if not shown:
            return None
        chosen = shown[step.pick % len(shown)]
        gone: Kept | None = chosen
        while gone is not None and not any(k.base is gone for k in self.kept):
            self.kept.remove(gone)
            below = gone.base
            gone = below if below is not None and not below.shown else None
        if gone is chosen:  # another upload starts with its bytes: hidden, kept
            chosen.shown = False
        return chosen.data

    def shown(self) -> list[Kept]:
        return [k for k in self.kept if k.shown]

    def current(self, sid: str) -> Kept | None:
        """The session's newest listed upload: what its key shows."""
        return next((k for k in reversed(self.kept) if k.shown and k.sid == sid), None)

    def versions_of(self, sid: str) -> list[list[str]]:
        """Each version's listed uploads' digests along its chain; versions in the order their first listed
        upload arrived. A version is a chain of uploads each extending the one before: the first to extend
        an upload (in the order they arrived, an upload after the one it extends) continues its version."""
        arrived: list[Kept] = []
        for k in (k for k in self.kept if k.sid == sid):
            chain = []
            below: Kept | None = k
            while below is not None and below not in arrived and below not in chain:
                chain.append(below)
                below = below.base
            arrived += reversed(chain)
        versions: list[list[Kept]] = []
        tips: dict[int, int] = {}  # id(the newest upload of a version) → that version
        for k in arrived:
            v = tips.pop(id(k.base), None) if k.base is not None else None
            if v is None:
                versions.append([])
                v = len(versions) - 1
            versions[v].append(k)
            tips[id(k)] = v
        shown = [[k for k in v if k.shown] for v in versions]
        shown = sorted((v for v in shown if v), key=lambda v: self.kept.index(v[0]))
        return [[sha256(k.data).hexdigest() for k in v] for v in shown]


def run(servers: list[httpx.Client], sequence: list[Step]) -> None:
    """Apply `sequence` to `servers`, clients of one store's servers (each step sent to the next in turn), and to a
    model; after each step, every server must show the model."""
    _empty(servers[0])  # an example that failed before this one may have left uploads behind
    model = Model()
    for n, step in enumerate(sequence):
        server = servers[n % len(servers)]
        if isinstance(step, Send):
            expected = model.send(step)
            answer = server.post("/api/uploads", params={"name": step.name}, content=step.data, timeout=60)
            assert answer.status_code == expected, (step, answer.text)
        else:
            listed = {u["digest"]: u for u in _uploads(server)}
            data = model.delete(step)
            if data is None:
                continue
            digest = next(d for d, u in listed.items() if _download(server, u) == data)
            assert server.delete(f"/api/uploads/{digest}", timeout=60).status_code == 200
        for reader in servers:
            check(reader, model, step)
    _empty(servers[0])


def _empty(server: httpx.Client) -> None:
    """Delete every listed upload: that must leave nothing listed, nor anything kept only as a base."""
    for u in _uploads(server):
        assert server.delete(f"/api/uploads/{u['digest']}", timeout=60).status_code == 200
    assert _uploads(server) == [] and _sessions(server) == {}


def check(server: httpx.Client, model: Model, after: Step) -> None:
    uploads = _uploads(server)
    assert sorted(_download(server, u) for u in uploads) == sorted(k.data for k in model.shown()), after
    sessions = _sessions(server)
    assert set(sessions) == {k.sid for k in model.shown()}, ("one listed session per identity", after)
    for sid, key in sessions.items():
        twin = server.get(f"/api/sessions/{key}", timeout=60).json()
        current = model.current(sid)
        assert current is not None
        assert server.get(twin["download"], timeout=60).content == current.data, (sid, after)
        versions = [[u["digest"] for u in v["uploads"]] for v in twin["versions"]]
        assert versions == model.versions_of(sid), (sid, after)
        for version in twin["versions"]:
            for u in version["uploads"]:  # each upload at its own URL shows the session as it stood then
                then = server.get(f"/api{u['url']}", timeout=60).json()
                shown = server.get(then["download"], timeout=60).content
                assert sha256(shown).hexdigest() == u["digest"], (sid, u, after)
                assert then["events"] == u["events"], (sid, u, after)
    for sid in SESSIONS:  # search finds what each session's newest upload says, once, and nothing hidden
        for variant in (0, 1):
            found = server.get("/api/search", params={"q": phrase(sid, variant, 2)}, timeout=60).json()
            current = model.current(sid)
            holds = current is not None and phrase(sid, variant, 2).encode() in current.data
            assert (found["sessions"], len(found["hits"])) == ((1, 1) if holds else (0, 0)), (sid, variant, after)
            if holds:
                assert found["hits"][0]["key"] == sessions[sid]


def _uploads(server: httpx.Client) -> list[dict]:
    found: list[dict] = server.get("/api/uploads", params={"limit": 500}, timeout=60).json()["uploads"]
    return found


def _sessions(server: httpx.Client) -> dict[str, str]:
    """Each listed session's id → its key; every id listed once."""
    listed = server.get("/api/sessions", timeout=60).json()["sessions"]
    ids = [s["id"] for s in listed]
    assert len(ids) == len(set(ids)), f"a session listed twice: {ids}"
    return {s["id"]: s["key"] for s in listed}


def _download(server: httpx.Client, upload: dict) -> bytes:
    return server.get(upload["download"], timeout=60).content
