"""Identified immutable messages: minted at creation, frozen, imported with their id."""

from __future__ import annotations

import uuid

import pytest
from dsh_inspect.model.frozen import FrozenDict, freeze, thaw
from dsh_inspect.model.messages import (
    SeededIds,
    create_assistant_message,
    create_message,
    create_tool_result_message,
    create_user_message,
    freeze_message,
    using_id_source,
)
from dsh_inspect.model.values import TextBlock, ToolResultBlock, UnknownBlock


def test_create_mints_a_random_uuid_and_takes_no_id() -> None:
    a = create_user_message(content=[{"type": "text", "text": "hi"}], source={"kind": "user"})
    b = create_user_message(content=[{"type": "text", "text": "hi"}], source={"kind": "user"})
    assert a.id != b.id
    assert uuid.UUID(a.id).version == 4
    with pytest.raises(TypeError):
        create_user_message(id="mine", content=[], source={"kind": "user"})  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        create_message(id="mine", role="user", content=[], source={"kind": "user"})  # type: ignore[call-arg]


def test_an_id_inside_the_input_is_not_taken() -> None:
    message = create_message(role="user", content=[], source={"kind": "user", "id": "not-mine"})
    assert message.id != "not-mine"


def test_a_seeded_id_source_is_deterministic_and_swappable() -> None:
    with using_id_source(SeededIds(3)):
        first = [create_user_message(content=[], source={"kind": "user"}).id for _ in range(3)]
    with using_id_source(SeededIds(3)):
        second = [create_user_message(content=[], source={"kind": "user"}).id for _ in range(3)]
    assert first == second and len(set(first)) == 3
    outside = create_user_message(content=[], source={"kind": "user"}).id
    assert outside not in first
    explicit = create_user_message(content=[], source={"kind": "user"}, id_source=SeededIds(3)).id
    assert explicit == first[0]


def test_role_specific_helpers_fix_role_and_source() -> None:
    assistant = create_assistant_message(content=[{"type": "text", "text": "ok"}], provider="p", model="m")
    assert assistant.role == "assistant"
    assert dict(assistant.source.raw) == {"kind": "model", "provider": "p", "model": "m"}
    result = create_tool_result_message(call_id="c1", content=[{"type": "text", "text": "out"}], is_error=True)
    assert result.role == "user" and result.source.kind == "tool" and result.source.get("callId") == "c1"
    (block,) = result.content
    assert isinstance(block, ToolResultBlock)
    assert block.tool_call_id == "c1" and block.is_error is True
    assert isinstance(block.content[0], TextBlock) and block.content[0].text == "out"


def test_every_part_of_a_message_refuses_change() -> None:
    message = create_tool_result_message(call_id="c1", content=[{"type": "text", "text": "out"}], is_error=False)
    with pytest.raises(AttributeError):
        message.id = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        message.content[0].tool_call_id = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        message.source.raw["kind"] = "user"
    with pytest.raises(TypeError):
        message.content[0].raw["content"][0]["text"] = "changed"
    with pytest.raises(AttributeError):
        message.content.append(None)  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        message.content[0].raw.update({"isError": True})
    with pytest.raises(TypeError):
        del message.source.raw["callId"]


def test_creation_detaches_from_the_callers_objects() -> None:
    content = [{"type": "text", "text": "before"}]
    source = {"kind": "plugin", "plugin": "p", "sections": [{"name": "a", "text": "b"}]}
    message = create_user_message(content=content, source=source)
    content[0]["text"] = "after"
    source["sections"][0]["text"] = "changed"
    assert message.content[0].text == "before"
    assert message.source.raw["sections"][0]["text"] == "b"


def test_freeze_message_keeps_the_id_and_needs_one() -> None:
    raw = {"id": "m-1", "role": "user", "content": [{"type": "text", "text": "x"}], "source": {"kind": "user"}}
    message = freeze_message(raw)
    assert message.id == "m-1"
    raw["content"][0]["text"] = "y"
    assert message.text() == "x"
    assert freeze_message(message) is message
    with pytest.raises(ValueError, match="id"):
        freeze_message({"role": "user", "content": [], "source": {"kind": "user"}})


def test_unknown_blocks_and_source_fields_are_preserved() -> None:
    raw = {
        "id": "m",
        "role": "user",
        "content": [{"type": "hologram", "beam": [1, 2]}, {"type": "text", "text": "t", "extra": True}],
        "source": {"kind": "future-kind", "form": "notice", "summary": "s", "newField": {"a": 1}},
    }
    message = freeze_message(raw)
    assert isinstance(message.content[0], UnknownBlock) and message.content[0].type == "hologram"
    assert message.to_json() == raw
    assert isinstance(message.source.raw, FrozenDict) and message.source.form == "notice"


def test_freeze_copies_every_level_and_refuses_change_at_each() -> None:
    raw = {"a": [1, {"b": "c", "d": [True, None, 2.5]}], "e": {"f": {}}, 3: "three"}
    frozen = freeze(raw)
    assert thaw(frozen) == {"a": [1, {"b": "c", "d": [True, None, 2.5]}], "e": {"f": {}}, "3": "three"}
    raw["a"][1]["b"] = "changed"  # type: ignore[index]
    raw["e"]["f"]["g"] = 1  # type: ignore[index]
    assert frozen["a"][1]["b"] == "c" and frozen["e"]["f"] == {}
    for part in (frozen, frozen["a"][1], frozen["e"]["f"]):
        assert isinstance(part, FrozenDict)
        with pytest.raises(TypeError):
            part["x"] = 1
    assert isinstance(frozen["a"], tuple) and isinstance(frozen["a"][1]["d"], tuple)
