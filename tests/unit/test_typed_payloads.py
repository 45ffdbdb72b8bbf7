"""Event payloads are read as typed values (app/model/payloads.py, docs/decisions/0038-typed-payloads.md)."""

from __future__ import annotations

import ast
from pathlib import Path

from dsh_inspect.model.frozen import freeze
from dsh_inspect.model.payloads import (
    PAYLOADS,
    AssistantChunk,
    InboxSplice,
    ToolCall,
    TurnEnd,
    decode_payload,
    failure_of,
)

APP = Path(__file__).resolve().parents[2] / "app"
# Where dsh's payloads are read above storage. What is left there judges the stored data as it is, whatever its
# types (the verdict pipeline: reading, invariants, closers, surface).
READERS = ("history", "forms", "web")
MOST_STRING_KEYED_READS = 19


_PAYLOAD_NAMES = ("data", "payload", "d")


def _holds_data(node: ast.expr) -> bool:
    """An expression that gives an event's data: `x.data`, `x.data(seq)`, `event["data"]`, `raw.get("data")`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "data"
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "data"
    return isinstance(node, ast.Attribute) and node.attr == "data"


def _payload_names(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """The names that hold an event's data in a function: those bound to an expression that gives it
    (`raw = log.raw_event(seq).get("data")`), and those named so (`data`, `payload`, `d`, `*_data`) unless the
    function binds them only to what a call returns whose name does not say it is data, as a route binds
    `data = listing(state)`, the JSON it answers."""
    bound: dict[str, list[ast.expr]] = {}
    for n in ast.walk(function):
        if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for name in (name for target in targets for name in _bound(target)):
                bound.setdefault(name, []).append(n.value)
    params = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    named = {
        name
        for name in params | bound.keys()
        if (name in _PAYLOAD_NAMES or name.endswith("_data"))
        and (name in params or not all(_returned_not_data(v) for v in bound[name]))
    }
    return named | {name for name, values in bound.items() if any(_holds_data(v) for v in values)}


def _bound(target: ast.expr) -> list[str]:
    """The names an assignment to `target` binds (not `data["k"] = ...`, which binds none)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for t in target.elts for name in _bound(t)]
    return _bound(target.value) if isinstance(target, ast.Starred) else []


def _returned_not_data(value: ast.expr) -> bool:
    """What a call returns whose callee's name does not say it is data (`listing(state)`)."""
    if not isinstance(value, ast.Call):
        return False
    callee = value.func
    name = callee.attr if isinstance(callee, ast.Attribute) else callee.id if isinstance(callee, ast.Name) else ""
    return "data" not in name and not _holds_data(value)


def _is_payload(node: ast.expr, names: set[str]) -> bool:
    """A value that holds an event's data: a name that does (`_payload_names`), or an expression that gives it."""
    if isinstance(node, ast.Name):
        return node.id in names
    return _holds_data(node)


def _is_key(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def string_keyed_reads(tree: ast.AST) -> list[int]:
    """The lines of `data["k"]`, `data.get("k")` and `_get(data, "k")` reads of an event's data in a module,
    a line for each read."""
    found: set[tuple[int, int]] = set()
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)]
    for scope, names in [(tree, set[str]()), *((f, _payload_names(f)) for f in functions)]:
        for n in ast.walk(scope):
            if isinstance(n, ast.Subscript):
                read = _is_key(n.slice) and _is_payload(n.value, names)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get":
                read = bool(n.args) and _is_key(n.args[0]) and _is_payload(n.func.value, names)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_get":
                read = len(n.args) >= 2 and _is_key(n.args[1]) and _is_payload(n.args[0], names)
            else:
                read = False
            if read and isinstance(n, ast.expr):
                found.add((n.lineno, n.col_offset))
    return [line for line, _ in sorted(found)]


def test_the_counter_sees_every_form_of_a_string_keyed_read() -> None:
    source = """
def f(data, end_data):
    return data["turn"], e.data.get("step", 0), _get(end_data, "reason"), log.data(1).get('x'), data.get("a")
def g(log):
    raw = log.raw_event(0).get("data")
    return raw["turn"]
"""
    assert string_keyed_reads(ast.parse(source)) == [3, 3, 3, 3, 3, 6]
    assert string_keyed_reads(ast.parse("def f(payload, message):\n    return payload.turn, message.get('id')")) == []
    # a route's own JSON is no event's data
    assert string_keyed_reads(ast.parse("def route(state):\n    data = listing(state)\n    return data['page']")) == []


def test_fewer_than_twenty_string_keyed_payload_reads_remain_above_storage() -> None:
    reads = {
        str(path.relative_to(APP)): lines
        for folder in READERS
        for path in sorted((APP / folder).rglob("*.py"))
        if (lines := string_keyed_reads(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert sum(map(len, reads.values())) <= MOST_STRING_KEYED_READS, reads


def test_a_well_typed_payload_reads_as_its_fields() -> None:
    call = decode_payload(
        "tool/call", freeze({"turn": 1, "step": 2, "callId": "c1", "name": "read", "arguments": "{}"})
    )
    assert call == ToolCall(turn=1, step=2, call_id="c1", name="read", arguments="{}")


def test_an_ill_typed_payload_keeps_the_fields_that_fit() -> None:
    call = decode_payload("tool/call", freeze({"turn": "1", "step": 2, "callId": 7, "name": "read"}))
    assert call == ToolCall(turn=None, step=2, call_id=None, name="read")
    chunk = decode_payload("assistant/chunk", freeze({"turn": 1, "chunk": {"type": "text-delta", "text": 5}}))
    assert isinstance(chunk, AssistantChunk) and chunk.chunk is not None
    assert (chunk.turn, chunk.chunk.type, chunk.chunk.text) == (1, "text-delta", None)


def test_a_number_where_an_integer_belongs_is_not_one() -> None:
    """True and 1.0 are no turn number, as the readers before the typed payloads told."""
    assert decode_payload("turn/end", freeze({"turn": True})) == TurnEnd()
    assert decode_payload("turn/end", freeze({"turn": 1.0, "reason": {"kind": "completed"}})) == decode_payload(
        "turn/end", freeze({"reason": {"kind": "completed"}})
    )


def test_data_that_is_no_object_and_unknown_types_have_no_payload() -> None:
    assert decode_payload("turn/start", freeze([1])) is None
    assert decode_payload("turn/start", None) is None
    assert decode_payload("someone/else", freeze({"turn": 1})) is None
    assert "session/end-seed" not in PAYLOADS  # `{}`: nothing to read


def test_stored_sub_values_stay_as_stored() -> None:
    """What views show whole (a failure, inserted messages) is the frozen value itself, unknown keys and all."""
    failure = freeze({"message": "overloaded", "code": "RATE", "requestId": "r1"})
    end = decode_payload("turn/end", freeze({"turn": 1, "reason": {"kind": "error", "error": failure}}))
    assert isinstance(end, TurnEnd) and end.reason is not None and end.reason.error == failure
    assert (failure_of(end.reason.error).message, failure_of(end.reason.error).code) == ("overloaded", "RATE")
    assert failure_of({"message": 3, "code": "X"}).code == "X"
    assert failure_of("no object").message is None
    splice = decode_payload("agent/inbox/spliced", freeze({"target": "next-step", "inserted": [{"id": "m1"}, 3]}))
    assert isinstance(splice, InboxSplice) and splice.inserted == (freeze({"id": "m1"}), 3)
