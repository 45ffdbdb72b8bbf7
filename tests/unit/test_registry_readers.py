"""Deriving a view of one session never holds up reading another (issue 33): each session's reads and
derivations wait only for that session's, and a comparison holds both of its sessions, taken in one order
so two comparisons of one pair, asked either way round, never wait for each other."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest
from dsh_inspect.sessions.registry import Registry
from dsh_inspect.store import UploadStore

from tests.support.uploads import jsonl_bytes, put

WAIT = 30  # a thread still blocked after this long was held up


def _registry(tmp_path: Path, *names: str) -> Registry:
    for name in names:
        (tmp_path / f"{name}.jsonl").write_bytes(jsonl_bytes(name))
    return Registry([str(tmp_path)])


def test_a_slow_derivation_of_one_session_holds_up_no_other(tmp_path: Path) -> None:
    registry = _registry(tmp_path, "slow", "other")
    started, release = threading.Event(), threading.Event()

    def slow(_: object) -> str:
        started.set()
        release.wait(WAIT)
        return "slow"

    building = threading.Thread(target=registry.derived, args=("slow", "view", slow))
    building.start()
    try:
        assert started.wait(WAIT)
        done: list[object] = []
        other = threading.Thread(
            target=lambda: done.append(registry.derived("other", "view", lambda log: log.header.id))
        )
        other.start()
        other.join(WAIT)
        assert done == ["other"], "reading another session waited for the slow one"
        assert building.is_alive()  # it was still deriving all that time
    finally:
        release.set()
        building.join(WAIT)


def test_a_session_is_derived_once_while_it_is_being_derived(tmp_path: Path) -> None:
    registry = _registry(tmp_path, "one")
    built: list[int] = []
    gate = threading.Barrier(4)

    def build(_: object) -> int:
        built.append(1)
        return len(built)

    def ask() -> None:
        gate.wait(WAIT)
        registry.derived("one", "view", build)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert built == [1]  # the askers that waited took the value the first built
    assert registry.derived("one", "view", build) == 1


def test_comparisons_of_one_pair_asked_both_ways_round_never_wait_for_each_other(tmp_path: Path) -> None:
    registry = _registry(tmp_path, "a", "b")
    meet = threading.Barrier(2, timeout=WAIT)
    results: list[str] = []

    def compare(first: str, second: str) -> None:
        def build(_: object) -> str:
            # both inside their build at once only if neither holds the other's session: it breaks instead
            with contextlib.suppress(threading.BrokenBarrierError):
                meet.wait(2)
            return f"{first}-{second}"

        results.append(registry.derived(first, f"compare:{second}", build, also=(second,)))

    threads = [threading.Thread(target=compare, args=pair) for pair in (("a", "b"), ("b", "a"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert sorted(results) == ["a-b", "b-a"]  # both finished: no deadlock
    assert meet.broken  # and one waited for the other, as both read both sessions


def test_a_refresh_under_way_holds_up_look_ups_of_listed_keys_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After another process's upload moved the catalog, one look-up refreshes the registry; meanwhile a look-up
    of a key listed already is answered as listed, and one of a key not listed yet waits for that refresh."""
    store = UploadStore(tmp_path / "data")
    put(store, jsonl_bytes("listed"), "listed.jsonl")
    registry = Registry([], store)
    put(UploadStore(tmp_path / "data"), jsonl_bytes("arrived"), "arrived.jsonl")  # another process's upload
    reading, release = threading.Event(), threading.Event()
    read_catalog = store.sessions

    def slow_read():  # type: ignore[no-untyped-def]
        reading.set()
        release.wait(WAIT)
        return read_catalog()

    monkeypatch.setattr(store, "sessions", slow_read)
    refreshing = threading.Thread(target=registry.entry, args=("listed",))
    refreshing.start()
    try:
        assert reading.wait(WAIT)
        answered: list[object] = []
        listed = threading.Thread(target=lambda: answered.append(registry.entry("listed")))
        listed.start()
        listed.join(WAIT)
        assert answered and answered[0] is not None and not release.is_set()  # not held by the refresh
        arrived: list[object] = []
        waiting = threading.Thread(target=lambda: arrived.append(registry.entry("arrived")))
        waiting.start()
        waiting.join(0.2)
        assert waiting.is_alive() and not arrived  # it may be what the refresh finds: it waits for it
    finally:
        release.set()
        refreshing.join(WAIT)
    waiting.join(WAIT)
    assert arrived and arrived[0] is not None
