"""The surface fold (docs/format.md §5.2): which events the model sees, in order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model.rules import decode_source_event_seqs


def _without_result_content(data: Any) -> Any:
    """A tool/result's data with its single block's `content` taken out."""
    if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
        return data
    message = dict(data["message"])
    content = message.get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        message["content"] = [{k: v for k, v in content[0].items() if k != "content"}]
    return {**data, "message": message}


class SurfaceFold:
    """Folds surface events one by one; `nodes` is the model-visible seq list."""

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self._on: set[int] = set()

    def copy(self) -> SurfaceFold:
        other = SurfaceFold()
        other.nodes = list(self.nodes)
        other._on = set(self._on)
        return other

    def append(self, seq: int) -> None:
        """Fold an append: the model sees `seq` next."""
        self.nodes.append(seq)
        self._on.add(seq)

    def apply(
        self,
        event: dict[str, Any],
        type_of: Callable[[int], str | None],
        load: Callable[[int], dict[str, Any] | None],
    ) -> tuple[str | None, list[int]]:
        """Fold one (envelope-valid) surface event. Returns (problem, shadowed seqs)."""
        seq = event["seq"]
        op = event["surfaceOp"]
        if op == "append":
            self.append(seq)
            return None, []
        start, end = int(op["start"]), int(op["end"])
        if start not in self._on or end not in self._on:
            missing = start if start not in self._on else end
            return f"replace range {start}..{end}: seq {missing} is not on the surface", []
        i, j = self.nodes.index(start), self.nodes.index(end)
        if i > j:
            return f"replace range {start}..{end}: start comes after end on the surface", []
        shadowed = self.nodes[i : j + 1]
        if "sourceEventSeqs" in event:
            cited = set(decode_source_event_seqs(event["sourceEventSeqs"]))
            missing_cites = [s for s in shadowed if s not in cited]
            if missing_cites:
                return f"replace does not cite shadowed seq(s) {missing_cites} in sourceEventSeqs", []
        if event["type"] == "tool/result":
            if len(shadowed) != 1 or type_of(shadowed[0]) != "tool/result":
                return "a tool/result replace must shadow exactly one tool/result", []
            original = load(shadowed[0])
            if original is None or _without_result_content(original.get("data")) != _without_result_content(
                event["data"]
            ):
                return "a tool/result replace may change only its result content", []
        self.nodes[i : j + 1] = [seq]
        self._on.difference_update(shadowed)
        self._on.add(seq)
        return None, shadowed
