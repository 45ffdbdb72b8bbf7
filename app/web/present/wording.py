"""The interface words for the derivation's vocabularies (docs/ui.md §2.2 and ours): one phrase for every value.

Templates word a verdict, a replacement kind or a setting by looking it up here, never by
building a key, and every map is made when this module loads, so a value with no wording
in either language fails at once (`strings.phrase`), not on some page later.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import get_args

from ...forms.bodies import InstructionWording
from ...forms.tools import TITLE_OVERRIDES, Variant
from ...history.identity import InboxFate
from ...history.replacements import ReplaceKind
from ...history.requests import OutcomeKind
from ...history.row_facts import USAGE_NAMES
from ...history.session import Category
from ...history.spend.timing import SPAN_KINDS
from ...history.state import SETTINGS
from .strings import phrase

# The session list's verdict for a log it could not read at all.
UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class Wording:
    verdicts: Mapping[str, str]  # a verdict category (or `unreadable`) → its key
    replacements: Mapping[str, str]  # a replace's kind → its key (the model view's diff, the budget)
    markers: Mapping[str, str]  # a replace's kind → the budget chart marker's key
    fates: Mapping[str, str]  # how a queued message left the inbox → its key (takes `seq`)
    outcomes: Mapping[str, str]  # a model call's outcome → its key
    settings: Mapping[str, str]  # a session setting's name → its key
    instructions: Mapping[str, str]  # what happened to an instruction file → its key
    usage: Mapping[str, str]  # a logged token count's name → its key (takes `count`)
    tool_titles: Mapping[str, str]  # a tool row's variant, or a tool titled apart → its title's key
    tool_states: Mapping[str, str]  # a tool call's outcome, when not ok → its hidden state text's key
    command_outcomes: Mapping[str, str]  # a command's outcome → its summary's key, when it logged no text
    retry_outcomes: Mapping[str, str]  # a retry's outcome → its label's key
    turn_outcomes: Mapping[str, str]  # how a turn ended (`TurnEndReason.kind`, or `open`) → its key
    records: Mapping[str, str]  # an unreadable record's kind → its finding's title key
    span_kinds: Mapping[str, str]  # a timeline span's kind → its name in a span's figures
    lanes: Mapping[str, str]  # a timeline span's kind → its lane's name
    span_states: Mapping[str, str]  # a span with no duration (open, or its clock ran backwards) → why
    timings: Mapping[str, str]  # the session header's durations (`wall`, a span kind) → its name

    def keys(self) -> set[str]:
        """Every key the maps hold."""
        return {key for f in fields(self) for key in getattr(self, f.name).values()}


def _keys(prefix: str, values: tuple[str, ...]) -> dict[str, str]:
    return {v: phrase(f"{prefix}.{v}").key for v in values}


def _checked(keys: dict[str, str]) -> dict[str, str]:
    return {v: phrase(key).key for v, key in keys.items()}


WORDS = Wording(
    verdicts=_keys("verdict", (*get_args(Category), UNREADABLE)),
    replacements=_keys("diff.kind", get_args(ReplaceKind)),
    markers=_keys("budget.marker", get_args(ReplaceKind)),
    fates=_keys("identity.fate", get_args(InboxFate)),
    outcomes=_keys("outcome", get_args(OutcomeKind)),
    settings=_keys("state", tuple(name for name, _ in SETTINGS)),
    instructions=_keys("message.context.instructions", get_args(InstructionWording)),
    usage=_checked(
        dict(
            zip(
                USAGE_NAMES,
                (
                    "row.usage.input",
                    "row.usage.cacheRead",
                    "row.usage.cacheWrite",
                    "row.usage.output",
                    "row.usage.reasoning",
                ),
                strict=True,
            )
        )
    ),
    tool_titles=_keys("tool.title", (*get_args(Variant), *TITLE_OVERRIDES)),
    tool_states=_keys("tool.state", ("running", "error", "stopped")),
    command_outcomes=_checked({"running": "command.running", "error": "command.failed", "ok": "command.completed"}),
    retry_outcomes=_checked({"ok": "retry.done", "cancelled": "retry.cancelled", "waiting": "retry.waiting"}),
    turn_outcomes=_checked(
        {
            "aborted": "turn.outcome.aborted",
            "blocked": "turn.outcome.blocked",
            "error": "turn.outcome.error",
            "interrupted": "turn.outcome.interrupted",
            "max-tokens": "turn.outcome.maxTokens",
            "open": "turn.outcome.open",
        }
    ),
    records=_keys("row.diagnostic", ("defect", "pending")),
    span_kinds=_keys("timeline.kind", SPAN_KINDS),
    lanes=_keys("timeline.lane", SPAN_KINDS),
    span_states=_keys("timeline.state", ("open", "backwards")),
    timings=_keys("timing", ("wall", "model", "tool", "wait")),
)
