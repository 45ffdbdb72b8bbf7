"""JavaScript's way of printing values, which the upstream view's strings follow (docs/ui.md §1.6).

The upstream client is TypeScript: its lengths are UTF-16 code units, its
numbers are doubles printed by `Number::toString`, its object keys follow
`Object.entries` order. Python differs on all three, so the view data is
formatted here rather than with `str`, `len` or `json.dumps`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeGuard

import orjson

from ..log.jsonvalues import is_number, js_number, js_string

TEXT_LIMIT = 20_000

_ARRAY_INDEX_MAX = 2**32 - 2
_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Well-formed JSON.stringify (ES2019) escapes lone surrogates but keeps pairs.
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]')
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def utf16_len(text: str) -> int:
    """JS `text.length`: astral characters count twice. (Encoded a slice at a time: a long text is not
    held again, twice over, to be measured.)"""
    if text.isascii():
        return len(text)
    return sum(len(text[i : i + _SLICE].encode("utf-16-le", "surrogatepass")) for i in range(0, len(text), _SLICE)) // 2


_SLICE = 1 << 20


def cap_utf16(text: str, limit: int = TEXT_LIMIT) -> tuple[str, bool]:
    """JS `text.slice(0, limit)` and whether anything was cut.

    A cut through a surrogate pair drops the orphaned high half: JS would keep
    it, but a lone surrogate cannot be encoded into the UTF-8 page.
    """
    units = text[: limit + 1].encode("utf-16-le", "surrogatepass")  # at least `limit + 1` units if there are more
    if len(units) <= 2 * limit:
        return text, False
    head = units[: 2 * limit].decode("utf-16-le", "surrogatepass")
    following = int.from_bytes(units[2 * limit : 2 * limit + 2], "little")
    if head and "\ud800" <= head[-1] <= "\udbff" and 0xDC00 <= following <= 0xDFFF:
        head = head[:-1]
    return head, True


def _is_array(value: Any) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, (list, tuple))


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) <= _ARRAY_INDEX_MAX


def js_entries(record: Mapping[Any, Any]) -> list[tuple[str, Any]]:
    """JS `Object.entries` order: array-index keys ascending, then the rest as inserted."""
    entries = [(str(key), value) for key, value in record.items()]
    indexed = sorted((e for e in entries if _is_array_index(e[0])), key=lambda e: int(e[0]))
    return indexed + [e for e in entries if not _is_array_index(e[0])]


def _quote(text: str) -> str:
    try:
        return orjson.dumps(text).decode()  # in C: orjson escapes a string as JSON.stringify does
    except TypeError:  # but for a lone surrogate, which JS escapes and orjson refuses
        pass

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return _JSON_ESCAPES.get(char) or f"\\u{ord(char):04x}"

    return '"' + _NEEDS_ESCAPE.sub(escape, text) + '"'


def _json_parts(value: Any, indent: str, depth: int) -> Iterator[str]:
    if isinstance(value, str):
        yield _quote(value)
    elif value is None:
        yield "null"
    elif isinstance(value, bool):
        yield "true" if value else "false"
    elif is_number(value):
        text = js_number(value)
        yield "null" if text in ("NaN", "Infinity", "-Infinity") else text
    elif isinstance(value, Mapping) or _is_array(value):
        items: Sequence[tuple[str | int, Any]]
        if isinstance(value, Mapping):
            items, opening, closing = js_entries(value), "{", "}"
        else:
            items, opening, closing = list(enumerate(value)), "[", "]"
        if not items:
            yield opening + closing
            return
        inner = "\n" + indent * (depth + 1) if indent else ""
        outer = "\n" + indent * depth if indent else ""
        colon = ": " if indent else ":"
        yield opening
        for i, (key, item) in enumerate(items):
            yield ("," if i else "") + inner
            if isinstance(key, str):  # a record's keys are strings, an array's indexes ints
                yield _quote(key) + colon
            yield from _json_parts(item, indent, depth + 1)
        yield outer + closing
    else:
        # Not a JSON value (a stray Python object); JSON.stringify would drop it.
        yield "null"


def compact_json(value: Any) -> str:
    """`JSON.stringify(value)`: no spaces, non-ASCII kept, JS key order."""
    if _printed_alike(value, 0):  # nearly every event: orjson prints it as JS would, in C
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # a lone surrogate, which JS escapes and orjson refuses
            pass
    return "".join(_json_parts(value, "", 0))


_SAFE_INT = 2**53  # up to here a JS number prints as Python prints the int
_ALIKE_DEPTH = 32


def _printed_alike(value: Any, depth: int) -> bool:
    """Whether orjson prints `value` as `JSON.stringify` does: strings (escaped alike, but for lone surrogates,
    which orjson refuses), null, booleans, safe integers, and arrays and objects of them whose keys JS keeps in
    insertion order (no array-index key). A float (JS prints `1.0` as `1`) or a deep value takes the long way."""
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return True
    if kind is int:
        return bool(-_SAFE_INT <= value <= _SAFE_INT)
    if depth >= _ALIKE_DEPTH:
        return False
    if kind is dict:
        for key, item in value.items():  # (leaves tested in place: a call for each would double the cost)
            if type(key) is not str or ("0" <= key[:1] <= "9" and _is_array_index(key)):
                return False
            kind = type(item)
            leaf = kind is str or item is None or kind is bool or (kind is int and -_SAFE_INT <= item <= _SAFE_INT)
            if not leaf and not _printed_alike(item, depth + 1):
                return False
        return True
    if kind is list:
        for item in value:
            kind = type(item)
            leaf = kind is str or item is None or kind is bool or (kind is int and -_SAFE_INT <= item <= _SAFE_INT)
            if not leaf and not _printed_alike(item, depth + 1):
                return False
        return True
    return False


def pretty_json(value: Any) -> str:
    """`JSON.stringify(value, null, 2)`, as the unknown-block toggle shows it."""
    return "".join(_json_parts(value, "  ", 0))


def pretty_json_head(value: Any, limit: int = TEXT_LIMIT) -> tuple[str, bool, int]:
    """`cap_utf16(pretty_json(value), limit)` and the whole text's length in UTF-16 units, printed a part at a
    time: the head of a huge value is shown without its whole text ever being held."""
    head: list[str] = []
    units = 0
    for part in _json_parts(value, "  ", 0):
        if units <= limit:
            head.append(part[: limit + 1 - units])  # as many code points hold at least as many units
        units += utf16_len(part)
    text, truncated = cap_utf16("".join(head), limit)
    return text, truncated, units


def field_text(value: Any) -> str:
    """An opaque source field's value: strings verbatim, scalars via String(), the rest as JSON."""
    if isinstance(value, (str, bool)) or is_number(value):
        return js_string(value)
    return compact_json(value)


def interpolate(template: str, values: Mapping[str, Any]) -> str:
    """Fill `{name}` placeholders with `String(value)`; unknown names stay as written."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        return js_string(values[name]) if name in values else match.group()

    return _PLACEHOLDER.sub(fill, template)
