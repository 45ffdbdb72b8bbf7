"""`Repeating`, the index of a log of copies: it must read back as the list it stands for, whatever was
appended, run or cut, and hold a run of a million in a few objects."""

from __future__ import annotations

import random
import sys
from array import array
from functools import partial

import pytest
from dsh_inspect.history.repeating import Repeating


def grown(seed: int) -> tuple[Repeating[int], list[int]]:
    """A Repeating of ints and the list it stands for, after random appends, runs and cuts."""
    rng = random.Random(seed)
    values: list[int] = [rng.randrange(100) for _ in range(rng.randrange(4))]
    made = Repeating(array("Q", values), partial(array, "Q"))
    for _ in range(60):
        what = rng.choice(("append", "extend", "run", "repeat", "cut"))
        if what == "append":
            value = rng.randrange(100)
            made.append(value)
            values.append(value)
        elif what == "extend":
            more = [rng.randrange(100) for _ in range(rng.randrange(5))]
            made.extend(more)
            values.extend(more)
        elif what in ("run", "repeat"):
            first, count = rng.randrange(1000), rng.randrange(6)
            step = rng.randrange(1, 4) if what == "run" else None
            made.add_run(first, step, count)
            values.extend(first + (step or 0) * i for i in range(count))
        elif values:
            cut = rng.randrange(len(values) + 1)
            del made[cut:]
            del values[cut:]
    return made, values


@pytest.mark.parametrize("seed", range(40))
def test_a_repeating_sequence_reads_back_as_the_list_it_stands_for(seed: int) -> None:
    made, values = grown(seed)
    assert len(made) == len(values)
    assert list(made) == values
    assert [made[i] for i in range(len(values))] == values
    assert [made[-i] for i in range(1, len(values) + 1)] == [values[-i] for i in range(1, len(values) + 1)]
    n = len(values)
    for start, stop in ((0, n), (1, n - 1), (n // 3, 2 * n // 3), (n - 2, n + 5), (5, 2)):
        assert made[start:stop] == values[start:stop]
    for value in {*values[:5], 5000}:
        assert made.count(value) == values.count(value)
        for start in (0, n // 2):
            if value in values[start:]:
                assert made.index(value, start) == values.index(value, start)
            else:
                with pytest.raises(ValueError, match="is not in the sequence"):
                    made.index(value, start)
    with pytest.raises(IndexError):
        made[n]


def test_runs_that_go_on_are_one_run_and_a_million_copies_cost_a_few_objects() -> None:
    types = Repeating(["turn/start"], list)
    starts = Repeating(array("Q", [100]), partial(array, "Q"))
    for first in range(0, 1_000_000, 250_000):  # copies counted a batch at a time
        types.add_run("x/copy", None, 250_000)
        starts.add_run(103 + 3 * first, 3, 250_000)
    assert len(types) == len(starts) == 1_000_001
    assert types.count("x/copy") == 1_000_000 and types.index("x/copy") == 1
    assert starts[1_000_000] == 103 + 3 * 999_999 and starts[0] == 100
    assert starts.count(103 + 3 * 500_000) == 1 and starts.count(104) == 0
    assert sys.getsizeof(types._parts) < 200 and len(types._parts) == len(starts._parts) == 2
    types.append("turn/end")
    assert types[-1] == "turn/end" and types[1_000_000] == "x/copy"
    del types[1_000_001:]  # a crash closer dropped, as a log read on drops them
    assert len(types) == 1_000_001 and types[-1] == "x/copy"
