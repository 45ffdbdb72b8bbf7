"""What `cache_mb` counts: the estimate of what a kept value holds, deep and wide ones alike."""

from __future__ import annotations

import gc
import tracemalloc
from dataclasses import dataclass

from dsh_inspect.sessions.caches import approx_bytes


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


def test_a_deep_value_of_many_records_weighs_about_what_it_holds() -> None:
    value, size = held(lambda: request(50_000))
    assert 0.8 < approx_bytes(value) / size < 1.25


def test_a_wide_list_of_strings_weighs_about_what_it_holds() -> None:
    value, size = held(lambda: [f"row {i} " * (1 + i % 5) for i in range(200_000)])
    assert 0.8 < approx_bytes(value) / size < 1.25
