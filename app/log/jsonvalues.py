"""JSON values with JavaScript's semantics, which dsh's checks are written in: `JSON.parse` and the tests
dsh applies to what it reads."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeGuard

import orjson

MAX_SAFE_INTEGER = 2**53 - 1
# Arrays and objects nested deeper than this are read as their JSON text, a string. JSON.parse reads any
# depth; Python's recursion limit and orjson (1,024 levels read, 254 written) do not, and every walk over a
# value (freezing, formatting, the JSON twins, the templates) would fail on a deep one. No dsh rule reads a
# field this deep, so what dsh decides about a line does not change.
MAX_DEPTH = 64

# a JSON string (escapes and all, so that no bracket inside one counts) or a bracket
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_STAND_IN = "[]"  # a value that can stand nowhere but where a value can: not as a key, not after a minus sign


def parse_json(text: str) -> tuple[Any, int | None]:
    """`JSON.parse(text)` as a Python value, and where (a character index) its first array or object nested
    deeper than MAX_DEPTH begins, or None. Each such part is its exact JSON text, a string; JSONDecodeError,
    located in `text`, where JSON.parse would throw, at any depth: nothing here recurses with the nesting."""
    parts = _deep_parts(text) if text.count("[") + text.count("{") > MAX_DEPTH else []
    if not parts:
        return _loads(text), None
    whole = _Part(0, len(text), parts)
    _check(text, whole)
    value = _loads(_spliced(text, whole, lambda part: orjson.dumps(text[part.start : part.end]).decode()))
    return value, parts[0].start


def nests_deeper(value: Any, levels: int = MAX_DEPTH) -> bool:
    """Whether the arrays and objects of a parsed value (itself the first) nest more than `levels` deep."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return False
    if not levels:
        return True
    for member in value.values() if kind is dict else value:
        kind = type(member)
        if (kind is dict or kind is list) and nests_deeper(member, levels - 1):
            return True
    return False


def _reject_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


def _js_int(literal: str) -> int | float:
    """A JSON integer as orjson reads one: exact within 64 bits, else a double, as JSON.parse reads every
    number (Infinity past the double range). Python's `int` would refuse one over 4,300 digits."""
    if len(literal) <= 20:
        value = int(literal)
        if -(2**63) <= value < 2**64:
            return value
    return float(literal)


def _loads(text: str) -> Any:
    """One JSON text, by orjson where it can; else by the standard library, for what JSON.parse reads and
    orjson does not (a lone surrogate escape, a number past the double range)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_js_int)


@dataclass(slots=True)
class _Part:
    """An array or object MAX_DEPTH levels below the part it lies in (or the whole text), from `start` to
    `end` in the text, and the parts MAX_DEPTH levels below it in turn."""

    start: int
    end: int  # the end of the text until the scan meets the part's end
    inner: list[_Part] = field(default_factory=list)


def _deep_parts(text: str) -> list[_Part]:
    """The arrays and objects that begin MAX_DEPTH + 1 levels deep, each with the parts MAX_DEPTH levels
    below it, found in one scan without recursion. A part the text ends inside (a torn line) ends with the
    text, where checking it fails as parsing would."""
    depth = 0
    top: list[_Part] = []
    unclosed: list[_Part] = []
    for token in _TOKEN.finditer(text):
        at = token.start()
        char = text[at]
        if char == '"':
            continue
        if char in "[{":
            depth += 1
            if depth % MAX_DEPTH == 1 and depth > 1:
                part = _Part(at, len(text))
                (unclosed[-1].inner if unclosed else top).append(part)
                unclosed.append(part)
        else:
            if depth % MAX_DEPTH == 1 and depth > 1:
                unclosed.pop().end = at + 1
            depth = max(depth - 1, 0)  # a stray closer: the text is not JSON, which checking finds
    return top


def _spliced(text: str, part: _Part, stand_in: Callable[[_Part], str]) -> str:
    """`part`'s text with each of its inner parts replaced by `stand_in(inner)`."""
    pieces: list[str] = []
    at = part.start
    for inner in part.inner:
        pieces += (text[at : inner.start], stand_in(inner))
        at = inner.end
    pieces.append(text[at : part.end])
    return "".join(pieces)


def _check(text: str, whole: _Part) -> None:
    """Raise JSONDecodeError unless `text` is JSON, checked part by part: a text is JSON when each part,
    with its inner parts standing in as `[]`, is."""
    pending = [whole]
    while pending:
        part = pending.pop()
        try:
            _loads(_spliced(text, part, lambda _: _STAND_IN))
        except json.JSONDecodeError as exc:
            raise json.JSONDecodeError(exc.msg, text, _unspliced(part, exc.pos)) from None
        pending += reversed(part.inner)  # in the order of the text, so the first error found is the first


def _unspliced(part: _Part, pos: int) -> int:
    """Where in the text `pos` of `part`'s spliced text lies."""
    shift = part.start
    for inner in part.inner:
        if pos < inner.start - shift + len(_STAND_IN):
            break
        shift += inner.end - inner.start - len(_STAND_IN)
    return pos + shift


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
