"""A serving process's full garbage collections stay short (issue 33, docs/decisions/0045-frozen-survivors.md):
what a full collection leaves is frozen, so the next walks only what was made since, and it is all handed back
in time for a dead cycle among it to be freed. Run in a process of its own: freezing is the whole process's."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import gc, sys, time, weakref
    from dsh_inspect.web.pauses import keep_full_collections_short

    def until(check, what):
        deadline = time.monotonic() + 20
        while not check():
            if time.monotonic() > deadline:
                sys.exit(f"timed out waiting for {what}")
            time.sleep(0.01)

    class Node:
        pass

    kept = keep_full_collections_short(thaw_seconds=5.0)
    assert keep_full_collections_short() is kept  # once per process
    cache = [[i] for i in range(200_000)]  # what a server keeps: many small tracked objects
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle, alive for now
    gone = weakref.ref(a)
    before = kept.freezes
    gc.collect()
    until(lambda: kept.freezes > before, "a freeze")
    frozen = gc.get_freeze_count()
    print("frozen", frozen)
    assert frozen >= len(cache), frozen  # the next full collection will not walk them
    del a, b  # the cycle becomes garbage while frozen: no collection can see it yet
    gc.collect()
    print("dead cycle kept while frozen", gone() is not None)
    assert gone() is not None
    until(lambda: kept.thaws >= 1, "the thaw")
    print("after the thaw", gc.get_freeze_count())
    gc.collect()
    assert gone() is None, "a dead cycle outlived the thaw"
    print("ok")
    """
)


def test_a_full_collection_freezes_its_survivors_and_a_thaw_frees_dead_cycles() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("ok")
