"""JSON value tests with JavaScript's semantics, which dsh's checks are written in."""

from __future__ import annotations

from typing import TypeGuard

MAX_SAFE_INTEGER = 2**53 - 1


def is_safe_int(value: object) -> TypeGuard[int | float]:
    """`Number.isSafeInteger`: JSON `1.0` counts, booleans do not."""
    if type(value) is int:  # the common case first: this runs several times per event
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if isinstance(value, float):
        return value.is_integer() and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    return False


def is_nonneg_safe_int(value: object) -> TypeGuard[int | float]:
    return is_safe_int(value) and value >= 0


def is_number(value: object) -> bool:
    """`typeof value === "number"`: booleans are not numbers."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_nonempty_str(value: object) -> bool:
    return isinstance(value, str) and len(value) > 0


def as_int(value: float) -> int:
    """A safe integer as a Python int (`1.0` becomes `1`)."""
    return int(value)
