"""JSON value tests with JavaScript's semantics, which dsh's checks are written in."""

from __future__ import annotations

import math
from decimal import Decimal
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


def js_number(value: int | float) -> str:
    """ECMAScript Number::toString(10) of a JSON number: a double (`2**60` prints `1152921504606847000`)."""
    if isinstance(value, int):
        if -MAX_SAFE_INTEGER - 1 <= value <= MAX_SAFE_INTEGER + 1:  # exact doubles: their digits are JS's too
            return str(value)
        try:
            value = float(value)
        except OverflowError:  # JSON.parse reads such a literal as ±Infinity
            return "Infinity" if value > 0 else "-Infinity"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"  # -0 prints as 0 too
    sign = "-" if value < 0 else ""
    # repr gives the shortest round-tripping digits, the same ones JS picks; only their layout differs
    _, shortest, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, shortest))
    k = len(digits)
    n = k + int(exponent)  # value = 0.digits × 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    return sign + digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def js_string(value: object) -> str:
    """JS `String(value)` of a JSON value (`...` for an absent one): `18.0` → `18`, `True` → `true`,
    `None` → `null`, `...` → `undefined`, an object → `[object Object]`."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if value is ...:
        return "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, (list, tuple)):
        # Array.prototype.join prints null (and undefined) as the empty string.
        return ",".join("" if item is None else js_string(item) for item in value)
    return "[object Object]"
