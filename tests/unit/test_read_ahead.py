"""The list's reads ahead (issue 33): niced worker threads, waited for only when small enough to be read within
the list's wait."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest
from dsh_inspect.sessions.priority import BACKGROUND_NICENESS
from dsh_inspect.web.app import create_app
from dsh_inspect.web.read_ahead import ReadAhead
from dsh_inspect.web.routes.listing import READ_PER_SECOND, soon_read

from tests.support.uploads import jsonl_bytes


def test_a_read_not_waited_for_goes_on_and_one_waited_for_is_waited() -> None:
    reads: ReadAhead[str] = ReadAhead()
    released = threading.Event()
    done, pending = reads.gather(
        {"slow": lambda: released.wait(30) and "slow", "quick": lambda: "quick"}, 30, {"quick"}
    )
    assert (done, pending) == ({"quick": "quick"}, 1)  # answered without waiting for the slow one
    released.set()
    done, pending = reads.gather({"slow": lambda: "again"}, 30, {"slow"})
    assert (done, pending) == ({"slow": "slow"}, 0)  # the read under way was waited on, not started twice


def test_large_reads_under_way_leave_the_small_ones_to_the_usual_workers() -> None:
    reads: ReadAhead[str] = ReadAhead()
    released = threading.Event()
    blocked = {f"large-{n}": (lambda: released.wait(30) and "large") for n in range(3)}
    large = set(blocked)
    done, pending = reads.gather(blocked, 0, (), large)
    assert (done, pending) == ({}, 3)
    started = time.monotonic()
    done, pending = reads.gather({"small": lambda: "small", **blocked}, 10, {"small"}, large)
    assert done == {"small": "small"} and pending == 3 and time.monotonic() - started < 5
    released.set()


@pytest.mark.skipif(sys.platform != "linux", reason="threads have niceness of their own on Linux only")
def test_reads_run_at_a_lower_priority_than_requests() -> None:
    reads: ReadAhead[int] = ReadAhead()
    done, _ = reads.gather({"nice": lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())}, 30, {"nice"})
    assert done["nice"] == min(19, os.getpriority(os.PRIO_PROCESS, 0) + BACKGROUND_NICENESS)


def test_the_list_waits_for_the_smallest_sessions_that_can_be_read_in_time(tmp_path: Path) -> None:
    for session_id, turns in (("tiny", 1), ("small", 3), ("large", 4_000)):
        (tmp_path / session_id).mkdir()
        (tmp_path / session_id / "session.jsonl").write_bytes(jsonl_bytes(session_id, turns))
    state = create_app([str(tmp_path)]).state.web
    entries = state.registry.entries()
    keys = {e.session_id: e.key for e in entries}
    sizes = {e.session_id: state.size_of(e) for e in entries}
    assert sizes["large"] > READ_PER_SECOND > sizes["tiny"] + sizes["small"]
    assert soon_read(state, entries, set(keys.values()), 1.0) == {keys["tiny"], keys["small"]}
    assert soon_read(state, entries, {keys["small"], keys["large"]}, 1.0) == {keys["small"]}
    budget = (sizes["tiny"] + sizes["small"] - 1) / READ_PER_SECOND  # room for the smaller one only
    assert soon_read(state, entries, set(keys.values()), budget) == {keys["tiny"]}
