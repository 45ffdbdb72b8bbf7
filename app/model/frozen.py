"""Deep immutability for JSON values: objects become FrozenDict, arrays tuples."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn, overload


class FrozenDict(dict[str, Any]):
    """A JSON object that refuses every change after creation.

    It stays a `dict` so orjson and Jinja read it natively.
    """

    __slots__ = ()

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("this value is frozen: build a new one instead")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]  # dict declares itself unhashable; a frozen one hashes
        return hash(tuple(sorted((k, _hashable(v)) for k, v in self.items())))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[object, ...]:
        return (FrozenDict, (dict(self),))


def _hashable(value: object) -> object:
    return value if not isinstance(value, list) else tuple(value)


_SCALARS = frozenset({str, int, float, bool, type(None)})
_put = dict.__setitem__  # past FrozenDict's refusal: only for a FrozenDict `freeze` is making


def freeze(value: Any) -> Any:
    """A detached, deeply immutable copy of a JSON value."""
    kind = type(value)
    # what a JSON decoder makes, tested by exact type first: the ABC checks below cost several times more; and
    # a scalar member, most of them, taken as it is without a call (an event's freeze was most of its decoding)
    if kind in _SCALARS:
        return value
    if kind is dict:
        # copied whole in C, then each member that is not a scalar put in frozen: being made, it is not yet shared
        out = FrozenDict(value)
        for k, v in value.items():
            if type(k) is not str:  # (a JSON object's keys are strings; a dict built in code may hold others)
                return FrozenDict({str(k): freeze(v) for k, v in value.items()})
            if type(v) not in _SCALARS:
                _put(out, k, freeze(v))
        return out
    if kind is list:
        return tuple([v if type(v) in _SCALARS else freeze(v) for v in value])
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


@overload
def thaw(value: Mapping[str, Any]) -> dict[str, Any]: ...
@overload
def thaw(value: Any) -> Any: ...


def thaw(value: Any) -> Any:
    """A plain, mutable JSON copy (dicts and lists)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value
