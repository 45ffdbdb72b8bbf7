"""What `cache_mb` counts (the estimate of what a kept value holds, deep and wide ones alike) and what the
caches let go: the least recently used sessions past `cache_mb`, the archives past the few kept open."""

from __future__ import annotations

import contextlib
import gc
import os
import tracemalloc
import zipfile
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from dsh_inspect.history.compare import compare_logs
from dsh_inspect.log.sources import SessionSource, forget_archive, open_member
from dsh_inspect.sessions.caches import SessionCache, approx_bytes

from tests.support.builders import LogBuilder, header
from tests.support.logs import load_path


@dataclass(frozen=True, slots=True)
class Block:
    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class Record:
    seq: int
    fields: dict[str, str]
    blocks: tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class Request:
    """Like a model view's request: a few small fields, and below one of them many records."""

    key: str
    header: dict[str, str]
    messages: tuple[Record, ...]


def request(n: int) -> Request:
    messages = tuple(
        Record(
            i,
            {"id": f"message-{i}", "role": ("user", "assistant")[i % 2], "note": "x" * (i % 97)},
            tuple(Block("text", f"block {i}.{j} " + "y" * (j * 40)) for j in range(1 + i % 3)),
        )
        for i in range(n)
    )
    return Request("12.2", {"model": "m", "route": "r"}, messages)


def held(build: type[Request] | object) -> tuple[object, int]:
    """What `build()` makes and the bytes it holds (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        value = build()  # type: ignore[operator]
        gc.collect()
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return value, size


@pytest.mark.slow  # 50,000 records built and weighed under tracemalloc
def test_a_deep_value_of_many_records_weighs_about_what_it_holds() -> None:
    value, size = held(lambda: request(50_000))
    assert 0.8 < approx_bytes(value) / size < 1.25


def test_a_wide_list_of_strings_weighs_about_what_it_holds() -> None:
    value, size = held(lambda: [f"row {i} " * (1 + i % 5) for i in range(200_000)])
    assert 0.8 < approx_bytes(value) / size < 1.25


def test_a_comparison_of_frozen_structs_weighs_about_what_it_holds(tmp_path: Path) -> None:
    """The comparison a server keeps is made of Structs the collector does not track: weighed by their fields."""
    prompt = "z" * 30_000
    logs = []
    for name in ("a", "b"):
        b = LogBuilder()
        for turn in range(1, 21):
            b.add("turn/start", {"turn": turn})
            b.user(f"{turn} {name} {prompt}")
            b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        path = tmp_path / name / "session.jsonl"
        path.parent.mkdir()
        path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(), *b.events]))
        logs.append(load_path(path))
    value, size = held(lambda: compare_logs(*logs))
    assert size > 20 * 30_000  # the prompts' texts, held twice by the items of each side
    assert 0.7 < approx_bytes(value) / size < 1.4


def source(name: str) -> SessionSource:
    return SessionSource(f"/logs/{name}.jsonl", "jsonl")


@dataclass(frozen=True)
class Log:
    """What the cache asks of a session log it keeps a value of: its source."""

    source: SessionSource


def test_past_the_limit_the_least_recently_used_session_goes_whole() -> None:
    cache: SessionCache[str] = SessionCache(100)
    cache.keep_log("a", source("a"), "log a", 40)
    cache.keep_log("b", source("b"), "log b", 40)
    cache.keep_derived("b", "rows", Log(source("b")), "rows b", 10)
    assert cache.log("a") == "log a"  # a used since: b is the least recent
    cache.keep_log("c", source("c"), "log c", 40)
    assert [cache.log(k, touch=False) for k in "abc"] == ["log a", None, "log c"]
    assert cache.derived("b", "rows") is None and cache.size == 80


def test_a_look_without_touch_leaves_the_order_in_which_sessions_go() -> None:
    cache: SessionCache[str] = SessionCache(100)
    cache.keep_log("a", source("a"), "log a", 40)
    cache.keep_log("b", source("b"), "log b", 40)
    assert cache.log("a", touch=False) == "log a"
    cache.keep_log("c", source("c"), "log c", 40)
    assert [cache.log(k, touch=False) for k in "abc"] == [None, "log b", "log c"]


def test_a_value_kept_for_a_session_weighs_with_it_and_makes_others_go() -> None:
    cache: SessionCache[str] = SessionCache(100)
    cache.keep_log("a", source("a"), "log a", 30)
    cache.keep_log("b", source("b"), "log b", 30)
    cache.keep_derived("a", "rows", Log(source("a")), "rows a", 50)  # a: 80, b: 30
    assert [cache.log(k, touch=False) for k in "ab"] == ["log a", None] and cache.size == 80


def test_the_session_in_use_stays_however_large_and_is_counted_whole() -> None:
    cache: SessionCache[str] = SessionCache(100)
    cache.keep_log("a", source("a"), "log a", 40)
    cache.keep_log("huge", source("huge"), "log huge", 500)
    assert [cache.log(k, touch=False) for k in ("a", "huge")] == [None, "log huge"] and cache.size == 500
    cache.keep_log("b", source("b"), "log b", 40)  # and goes when another is in use
    assert [cache.log(k, touch=False) for k in ("huge", "b")] == [None, "log b"] and cache.size == 40


def open_files(paths: list[Path]) -> list[str]:
    """The files among `paths` this process holds open, by name (a replaced one's old file as it was)."""
    wanted, held = {str(p) for p in paths}, []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # the listing's own descriptor, closed by now
            held.append(os.readlink(f"/proc/self/fd/{fd}").removesuffix(" (deleted)"))
    return sorted(p for p in held if p in wanted)


def export(path: Path, text: str) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("session.jsonl", text)
    return path


def test_four_archives_stay_open_the_least_recently_read_are_closed(tmp_path: Path) -> None:
    zips = [export(tmp_path / f"export-{i}.zip", f"log {i}\n") for i in range(6)]
    for z in [*zips[:3], zips[0], *zips[3:]]:  # the first read again: the second and third go
        with open_member(str(z), "session.jsonl") as member:
            assert member.read().startswith(b"log")
    assert open_files(zips) == [str(z) for z in [zips[0], *zips[3:]]]
    for z in zips:
        forget_archive(str(z))
    assert open_files(zips) == []


def test_a_rewritten_archive_is_read_anew_and_its_old_version_closed(tmp_path: Path) -> None:
    path = export(tmp_path / "export.zip", "before\n")
    with open_member(str(path), "session.jsonl") as member:
        assert member.read() == b"before\n"
    os.replace(export(tmp_path / "new.zip", "after, longer\n"), path)
    with open_member(str(path), "session.jsonl") as member:
        assert member.read() == b"after, longer\n"
    assert open_files([path]) == [str(path)]  # one open: the new version's
    forget_archive(str(path))
    assert open_files([path]) == []
