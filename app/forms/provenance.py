"""Role and header label of a context row: `contextProvenance` (docs/ui.md §1.2).

Role comes from `kind` alone, never from `form`, so a corrupt recall still
looks like a recall; every label falls back to the kind so a producer is
never left unnamed while its kind is readable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..log.jsonvalues import is_nonempty_str
from ..model.values import MessageSource
from .readers import collect, joined, source_kind, source_record

Role = Literal["inject", "recall"]

INJECTION_TITLE_KEY = "message.contextInjection"
RECALL_TITLE_KEY = "message.contextRecall"


@dataclass(frozen=True, slots=True)
class Provenance:
    role: Role
    # None is the "unnamed injection": the header shows its title alone.
    label: str | None

    @property
    def title_key(self) -> str:
        return RECALL_TITLE_KEY if self.role == "recall" else INJECTION_TITLE_KEY


def _name_field(record: Any, field: str) -> str | None:
    value = record.get(field)
    return value if is_nonempty_str(value) else None


def context_provenance(source: MessageSource | Any) -> Provenance:
    record = source_record(source)
    kind = source_kind(record)
    if record is None or kind is None:
        return Provenance("inject", None)
    if kind == "session-reference":
        return Provenance("recall", joined(collect(record, "references", "label")) or kind)
    if kind == "agent-instructions":
        label = joined(collect(record, "changes", "path"))
    elif kind == "plugin":
        label = _name_field(record, "plugin")
    elif kind == "skill-invocation":
        label = _name_field(record, "name")
    else:
        label = None
    return Provenance("inject", label or kind)


def session_recall_labels(source: MessageSource | Any) -> tuple[str, ...]:
    """The labels a session-reference lends the prompt just before it (docs/ui.md §0)."""
    record = source_record(source)
    if record is None or source_kind(record) != "session-reference":
        return ()
    return collect(record, "references", "label")
