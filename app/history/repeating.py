"""A sequence stored in stretches: values one by one, and runs of `first, first + step, ...`.

A log of a million copies of one line (from a few hundred bytes of zstd) would cost an index entry of
some twenty bytes per copy; as runs its copies cost a few objects in all."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, MutableSequence, Sequence
from itertools import chain, islice, repeat
from typing import Any, Generic, TypeVar, cast, overload

T = TypeVar("T")


class _Run(Generic[T]):
    """`count` values from `first`, each `step` (not 0) past the one before; a step of None repeats `first`."""

    __slots__ = ("count", "first", "step")

    def __init__(self, first: T, step: int | None, count: int) -> None:
        self.first, self.step, self.count = first, step, count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> T:
        first: Any = self.first
        return cast(T, first if self.step is None else first + self.step * i)

    def __iter__(self) -> Iterator[T]:
        if self.step is None:
            return repeat(self.first, self.count)
        first: Any = self.first
        return cast(Iterator[T], iter(range(first, first + self.step * self.count, self.step)))

    def follows(self, first: T, step: int | None) -> bool:
        """Whether a run of `first` by `step` carries this one on."""
        if step != self.step:
            return False
        return first == self.first if step is None else first == self[self.count]


class Repeating(Sequence[T]):
    """A sequence of values stored one by one (in `make()`: a list, or an array of one type) but for the runs
    added with `add_run`; appended to as a list is, cut at an end as `del s[n:]` cuts a list."""

    def __init__(self, values: MutableSequence[T], make: Callable[[], MutableSequence[T]]) -> None:
        self._make = make
        self._parts: list[MutableSequence[T] | _Run[T]] = [values]
        self._starts = [0]  # where each part begins
        self._len = len(values)

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        last = self._starts[-1]
        if type(i) is int and last <= i < self._len:  # (nearly every lookup: as fast as it can be made)
            part = self._parts[-1]
            if type(part) is _Run:
                first: Any = part.first
                return cast(T, first if part.step is None else first + part.step * (i - last))
            return part[i - last]
        if isinstance(i, slice):
            start, stop, step = i.indices(self._len)
            if step != 1:
                return list(self)[i]
            return list(self._between(start, stop))
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("Repeating index out of range")
        k = bisect_right(self._starts, i) - 1
        return self._parts[k][i - self._starts[k]]

    def _between(self, start: int, stop: int) -> Iterator[T]:
        if start >= stop:
            return iter(())
        k, j = bisect_right(self._starts, start) - 1, bisect_right(self._starts, stop - 1)
        parts = zip(self._parts[k:j], self._starts[k:j], strict=True)
        return chain.from_iterable(islice(part, max(start - at, 0), stop - at) for part, at in parts)

    def __iter__(self) -> Iterator[T]:
        return chain.from_iterable(self._parts)

    def count(self, value: Any) -> int:
        return sum(part.count(value) if not isinstance(part, _Run) else _run_count(part, value) for part in self._parts)

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        for i, item in enumerate(self._between(start, self._len if stop is None else min(stop, self._len)), start):
            if item == value:
                return i
        raise ValueError(f"{value!r} is not in the sequence")

    def _stored(self) -> MutableSequence[T]:
        """The part values are appended to: the last, or a new one after a run."""
        last = self._parts[-1]
        if isinstance(last, _Run):
            last = self._make()
            self._parts.append(last)
            self._starts.append(self._len)
        return last

    def append(self, value: T) -> None:
        self._stored().append(value)
        self._len += 1

    def extend(self, values: Iterable[T]) -> None:
        stored = self._stored()
        before = len(stored)
        stored.extend(values)
        self._len += len(stored) - before

    fromlist = extend

    def add_run(self, first: T, step: int | None, count: int) -> None:
        """`count` values from `first`, each `step` past the one before (None: each is `first`)."""
        if count <= 0:
            return
        last = self._parts[-1]
        if isinstance(last, _Run) and last.follows(first, step):
            last.count += count
        elif not isinstance(last, _Run) and not last:  # an empty part stored: the run takes its place
            self._parts[-1] = _Run(first, step, count)
        else:
            self._parts.append(_Run(first, step, count))
            self._starts.append(self._len)
        self._len += count

    def __delitem__(self, i: slice) -> None:
        """Only `del s[n:]`: what was appended last, cut off."""
        start, stop, step = i.indices(self._len)
        if stop != self._len or step != 1:
            raise ValueError("a Repeating sequence is cut only at its end")
        while self._parts and self._starts[-1] >= start and len(self._parts) > 1:
            self._parts.pop()
            self._starts.pop()
        part, offset = self._parts[-1], start - self._starts[-1]
        if isinstance(part, _Run):
            part.count = min(part.count, offset)
        else:
            del part[offset:]
        self._len = min(self._len, start)


def _run_count(run: _Run[Any], value: Any) -> int:
    if run.step is None:
        return run.count if run.first == value else 0
    if not isinstance(value, int) or not run.step:
        return 0
    steps, rest = divmod(value - run.first, run.step)
    return 1 if rest == 0 and 0 <= steps < run.count else 0
