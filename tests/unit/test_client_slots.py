"""Each client's slots (issue 33, `requests_per_client`): past them its requests wait their turn, and another
client's are let in at once."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from dsh_inspect.access.shares import ClientSlots

T = TypeVar("T")


def run(scenario: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run` in a thread of its own: a browser test's Playwright may hold this thread's event loop."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, scenario).result()


def test_a_client_past_its_slots_waits_and_another_is_let_in() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        slots = ClientSlots(2)
        release = asyncio.Event()
        entered: list[str] = []

        async def request(client: str, name: str) -> None:
            async with slots.slot(client):
                entered.append(name)
                await release.wait()

        tasks = [asyncio.create_task(request("abuser", f"a{n}")) for n in range(4)]
        tasks.append(asyncio.create_task(request("reader", "r")))
        for _ in range(10):
            await asyncio.sleep(0)
        early = list(entered)
        release.set()
        await asyncio.gather(*tasks)
        return early, entered

    early, entered = run(scenario())
    assert early == ["a0", "a1", "r"]  # two of the abuser's, and the reader's at once
    assert sorted(entered) == ["a0", "a1", "a2", "a3", "r"]  # the others in their turn


def test_an_idle_client_is_forgotten() -> None:
    async def scenario() -> ClientSlots:
        slots = ClientSlots(1)
        async with slots.slot("once"):
            pass
        return slots

    assert not run(scenario())._slots
