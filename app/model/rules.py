"""dsh's acceptance rules for one log (docs/format.md §2, §3.3, §4.5), as pure checks.

Each check returns the reason dsh would give, or None. Upgrades return the
upgraded event (a new dict) or raise `UpgradeError`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from ..log.jsonvalues import (
    MAX_SAFE_INTEGER,
    as_int,
    is_nonempty_str,
    is_nonneg_safe_int,
    is_number,
    is_safe_int,
    js_string,
)

KNOWN_EVENT_TYPES = frozenset(
    [
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "assistant/chunk",
        "assistant/message",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "compaction/summary",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "llm/retry",
        "llm/retry-started",
        "permission/preset",
        "plan/mode",
        "request/context",
        "request/header",
        "sandbox/mode",
        "schedule/change",
        "session/end-seed",
        "session/title",
        "session/title-llm-request",
        "step/end",
        "step/start",
        "subagent/descriptor",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "todo/write",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/call",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "tool/result",
        "turn/end",
        "turn/start",
        "user/message",
        "web/deepseek-search-llm-request",
    ]
)
SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
# The harness's bookkeeping, not the conversation: inbox splices, titles, and the latest-wins
# settings and request snapshots of docs/format.md §5.5, which dsh's own transcript folds away.
BOOKKEEPING_TYPES = frozenset(
    {
        "agent/inbox/spliced",
        "session/title",
        "session/title-llm-request",
        "request/header",
        "request/context",
        "permission/preset",
        "sandbox/mode",
        "approval/policy",
        "plan/mode",
        "agent-preset/selected",
    }
)
ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"})
SESSION_FORMAT_VERSION = 0
# The dsh release whose verdicts these rules give: the session code the differential tests run
# (tests/oracle/package.json), unchanged through NEWEST_SAME_SESSION_CODE (docs/format.md §8).
DSH_RELEASE = "0.1.0-rc.8"
NEWEST_SAME_SESSION_CODE = "0.1.1-rc.2"
_LLM_FAILURE_KEYS = frozenset({"message", "code", "status", "providerRetryAfterMs", "requestId"})
_BARE_TURN_END_KINDS = frozenset({"completed", "blocked", "max-tokens", "interrupted"})


# The only types a legacy rejection or upgrade can touch; every other event passes both untouched.
LEGACY_TYPES = frozenset({"request/header-delta", "mode/set", "request/header"})
UPGRADED_TYPES = frozenset(
    {"turn/start", "turn/end", "steering/message", "user/message", "assistant/message", "tool/result"}
)


def legacy_id(session_id: str, seq: object) -> str:
    # `seq` as the log holds it: upgrades run before the envelope rule has vouched for it
    return f"legacy-message:{session_id}:{seq}"


# --- header (§2.1) ---------------------------------------------------------


def _is_absolute(path: str) -> bool:
    return path.startswith(("/", "\\\\")) or (len(path) > 2 and path[1] == ":" and path[2] in "\\/")


def header_unsupported(header: dict[str, Any], *, lenient: bool) -> str | None:
    """The version gate: dsh's SessionFormatUnsupportedError, checked first, in dsh's words. Any number
    but 0 is a version dsh does not read, an integer or not (0.5 is "newer"); anything else is no version."""
    if "version" not in header and lenient:
        return None
    version = header.get("version")
    if not is_number(version) or version == SESSION_FORMAT_VERSION:
        return None  # not a version at all: a refusal, reported by header_problem
    sid, v = js_string(header.get("id", ...)), js_string(version)
    assert isinstance(version, (int, float))
    if version > SESSION_FORMAT_VERSION:
        return (
            f'session "{sid}" uses log format v{v}, but this harness reads only v{SESSION_FORMAT_VERSION}: '
            "the log was written by a newer harness — upgrade the harness to open it"
        )
    return (
        f'session "{sid}" uses log format v{v}, older than the supported v{SESSION_FORMAT_VERSION}, '
        "and this build ships no upgrade path for it"
    )


def newer_format(header: dict[str, Any] | None) -> int | float | None:
    """The header's format version when it is newer than the one the pinned release reads (the `version` a
    `header_unsupported` calls "written by a newer harness"), else None. Such a log is shown all the same,
    as far as its events read as this release's."""
    version = (header or {}).get("version")
    if not is_number(version):
        return None
    assert isinstance(version, (int, float))
    return version if version > SESSION_FORMAT_VERSION else None


_PLACEHOLDER = re.compile(r"\{\{[^{}]+\}\}")  # `{{cwd}}`, `{{cwd}}/workspace`


def is_placeholder(value: str) -> bool:
    """A snapshot placeholder such as `{{cwd}}`: dsh's test logs carry them, fixtures and
    recorded artifacts alike, and dsh's header reader does not resolve a cwd."""
    return _PLACEHOLDER.match(value) is not None


def header_problem(header: dict[str, Any], *, lenient: bool, sqlite: bool = False) -> str | None:
    """Why dsh would refuse this header, or None. Fixtures (`lenient`) may omit
    `version` and `delegationDepth`; any log may hold a `{{placeholder}}` cwd."""
    if "version" in header and not is_number(header["version"]):
        return "header version is not a number"
    if "version" not in header and not lenient:
        return "header has no version"
    if not is_nonempty_str(header.get("id")):
        return "header id is not a non-empty string"
    created = header.get("createdAt")
    if not is_nonneg_safe_int(created) or (isinstance(created, float) and str(created) == "-0.0"):
        return "header createdAt is not a non-negative safe integer"
    cwd = header.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str):
            return "header cwd is not a string"
        if not _is_absolute(cwd) and not is_placeholder(cwd):
            return f"header cwd {cwd!r} is not an absolute path"
    for key in ("parentSession", "agentPreset"):
        if key in header and not isinstance(header[key], str):
            return f"header {key} is not a string"
    if "seedLength" in header and not is_nonneg_safe_int(header["seedLength"]):
        return "header seedLength is not a non-negative integer"
    if "origin" in header and header["origin"] != "subagent":
        return f'header origin {header["origin"]!r} is not "subagent"'
    if "delegationDepth" in header:
        if not is_nonneg_safe_int(header["delegationDepth"]):
            return "header delegationDepth is not a non-negative integer"
    elif not lenient and not sqlite:
        return "header has no delegationDepth"
    for retired in ("sandboxMode", "approvalPolicy"):
        if retired in header:
            return f"header carries {retired}, a retired policy baseline field"
    return None


# --- legacy vocabulary and upgrades (§4.5 steps 3-4) ----------------------


def legacy_vocabulary_problem(event: dict[str, Any]) -> str | None:
    kind = event.get("type")
    if kind in ("request/header-delta", "mode/set"):
        return f"legacy event type {kind} is no longer readable"
    if kind == "request/header":
        data = event.get("data")
        if isinstance(data, dict) and data.get("reason") == "fallback":
            return 'legacy request/header with reason "fallback" is no longer readable'
    return None


class UpgradeError(ValueError):
    pass


def _upgrade_turn_start(data: Any) -> Any:
    if not isinstance(data, dict) or "trigger" not in data:
        return data
    if set(data) != {"turn", "trigger"}:
        raise UpgradeError("legacy turn/start must have exactly turn and trigger")
    if not is_safe_int(data["turn"]) or data["turn"] < 1:
        raise UpgradeError("legacy turn/start turn is not an integer ≥ 1")
    trigger = data["trigger"]
    if not isinstance(trigger, dict) or not is_nonempty_str(trigger.get("kind")):
        raise UpgradeError("legacy turn/start trigger.kind is not a non-empty string")
    return {"turn": data["turn"]}


def _upgrade_turn_end(data: Any) -> Any:
    if not isinstance(data, dict):
        return data  # as dsh's upgrade passes it through; nothing later reads a turn/end's data
    if set(data) != {"turn", "reason"}:
        raise UpgradeError("turn/end data must have exactly the keys turn and reason")
    if not is_safe_int(data["turn"]) or data["turn"] < 1:
        raise UpgradeError("turn/end turn is not an integer ≥ 1")
    reason = data["reason"]
    if not isinstance(reason, dict) or not isinstance(reason.get("kind"), str):
        raise UpgradeError("turn/end reason.kind is not a string")
    kind = reason["kind"]
    if kind in _BARE_TURN_END_KINDS:
        if set(reason) != {"kind"}:
            raise UpgradeError(f"turn/end reason {kind!r} must carry only kind")
        return data
    if kind == "aborted" and set(reason) == {"kind"}:
        return {"turn": data["turn"], "reason": {"kind": "aborted", "reason": {"kind": "legacy"}}}
    if kind == "disposed":
        return {"turn": data["turn"], "reason": {"kind": "aborted", "reason": {"kind": "disposed"}}}
    if kind == "error" and "error" not in reason:
        if not is_nonneg_safe_int(reason.get("step")):
            raise UpgradeError("legacy turn/end error reason needs an integer step ≥ 0")
        failure = reason.get("failure")
        if isinstance(failure, dict):
            if (
                not set(failure) <= _LLM_FAILURE_KEYS
                or not isinstance(failure.get("message"), str)
                or not isinstance(failure.get("code"), str)
            ):
                raise UpgradeError("legacy turn/end failure is not an LlmFailure")
            return {"turn": data["turn"], "reason": {"kind": "error", "error": failure}}
        if isinstance(reason.get("message"), str):
            code = reason.get("code", "UNKNOWN")
            if not isinstance(code, str):
                raise UpgradeError("legacy turn/end error code is not a string")
            return {
                "turn": data["turn"],
                "reason": {"kind": "error", "error": {"message": reason["message"], "code": code}},
            }
        raise UpgradeError("legacy turn/end error reason has neither failure nor message")
    return data


def turn_is_current(kind: str, data: Any) -> bool:
    """A cheap test that `upgrade_event` returns a turn/start or turn/end as it is, for a reader that
    meets thousands: today's shapes (no legacy trigger; exactly turn and a bare reason kind). False
    says only "maybe not"."""
    if kind == "turn/start":
        return not isinstance(data, dict) or "trigger" not in data
    if kind == "turn/end" and type(data) is dict and len(data) == 2:
        turn, reason = data.get("turn"), data.get("reason")
        return (
            type(turn) is int
            and 1 <= turn <= MAX_SAFE_INTEGER
            and type(reason) is dict
            and len(reason) == 1
            and reason.get("kind") in _BARE_TURN_END_KINDS
        )
    return False


def upgrade_event(event: dict[str, Any], session_id: str, id_at: Callable[[int], str | None]) -> dict[str, Any]:
    """Apply the §4.5 legacy upgrades. `id_at(seq)` gives an earlier event's
    (upgraded) message id, for a pruned legacy tool result's identity."""
    kind = event.get("type")
    data = event.get("data")
    seq = event.get("seq")
    if kind == "turn/start":
        new = _upgrade_turn_start(data)
        return event if new is data else {**event, "data": new}
    if kind == "turn/end":
        new = _upgrade_turn_end(data)
        return event if new is data else {**event, "data": new}
    if kind == "steering/message" and not isinstance(data, dict):
        raise UpgradeError("legacy steering/message data is not an object")
    if kind == "steering/message" and isinstance(data, dict):
        if set(data) == {"turn", "message"}:
            return {**event, "type": "user/message", "data": data["message"]}
        if set(data) == {"turn", "content", "source"}:
            return {
                **event,
                "type": "user/message",
                "data": {
                    "content": data["content"],
                    "source": data["source"],
                    "id": legacy_id(session_id, seq),
                    "role": "user",
                },
            }
        raise UpgradeError("legacy steering/message has neither message nor content and source")
    if not isinstance(data, dict):
        return event
    # (key tests one by one, not set algebra: every surface event passes here, nearly all current)
    if (
        kind == "user/message"
        and "id" not in data
        and "role" not in data
        and "message" not in data
        and "content" in data
        and "source" in data
    ):
        return {**event, "data": {**data, "id": legacy_id(session_id, seq), "role": "user"}}
    if kind == "assistant/message" and "message" not in data and "content" in data and "provenance" in data:
        provenance = data["provenance"]
        if not isinstance(provenance, dict):
            raise UpgradeError("legacy assistant/message provenance is not an object")
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        message = {
            "id": legacy_id(session_id, seq),
            "role": "assistant",
            "content": data["content"],
            "source": {**provenance, "kind": "model"},
        }
        return {**event, "data": {**rest, "message": message}}
    if kind == "tool/result" and "message" not in data and "callId" in data and "content" in data and "isError" in data:
        op = event.get("surfaceOp")
        mid = legacy_id(session_id, seq)
        if isinstance(op, dict) and op.get("op") == "replace" and is_safe_int(op.get("start")):
            mid = id_at(as_int(op["start"])) or mid
        call_id = data["callId"]
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        message = {
            "id": mid,
            "role": "user",
            "content": [
                {"type": "tool-result", "toolCallId": call_id, "content": data["content"], "isError": data["isError"]}
            ],
            "source": {"kind": "tool", "callId": call_id},
        }
        return {**event, "data": {**rest, "message": message}}
    return event


# --- message shape (§4.5 step 5) --------------------------------------------


def message_of(event: dict[str, Any]) -> Any:
    data = event.get("data")
    if event.get("type") == "user/message":
        return data
    return data.get("message") if isinstance(data, dict) else None


def message_shape_problem(event: dict[str, Any]) -> str | None:
    kind = event.get("type")
    if not isinstance(kind, str) or kind not in SURFACE_TYPES:
        return None
    return message_problem(kind, message_of(event))


def message_problem(kind: str, message: Any) -> str | None:
    """Why the message of a `kind` surface event is malformed, or None. (Non-empty strings are
    tested inline, not by `is_nonempty_str`: this runs for every message of a log.)"""
    if not isinstance(message, dict):
        return f"{kind} carries no message object"
    mid = message.get("id")
    if not isinstance(mid, str) or not mid:
        return f"{kind} message id is not a non-empty string"
    want_role = "assistant" if kind == "assistant/message" else "user"
    if message.get("role") != want_role:
        return f"{kind} message role is {message.get('role')!r}, expected {want_role!r}"
    source = message.get("source")
    if not isinstance(source, dict):
        return f"{kind} message source has no non-empty kind"
    source_kind = source.get("kind")
    if not isinstance(source_kind, str) or not source_kind:
        return f"{kind} message source has no non-empty kind"
    content = message.get("content")
    if not isinstance(content, list):
        return f"{kind} message content is not an array"
    if kind == "assistant/message":
        if source_kind != "model":
            return f'assistant message source kind is {source_kind!r}, expected "model"'
        provider, model = source.get("provider"), source.get("model")
        if not isinstance(provider, str) or not provider or not isinstance(model, str) or not model:
            return "assistant message source needs a non-empty provider and model"
    if kind == "tool/result":
        call_id = source.get("callId")
        if source_kind != "tool" or not isinstance(call_id, str) or not call_id:
            return 'tool result source must be {kind: "tool", callId} with a non-empty callId'
        if len(content) != 1:
            return f"tool result content has {len(content)} blocks, expected exactly 1"
        block = content[0]
        if (
            not isinstance(block, dict)
            or block.get("type") != "tool-result"
            or not isinstance(block.get("content"), list)
        ):
            return "tool result content must be one tool-result block with an array content"
        if block.get("toolCallId") != call_id:
            return "tool result block toolCallId differs from source.callId"
    return None


# --- unknown types (§2.4) ----------------------------------------------------


def is_unknown_type(event: dict[str, Any]) -> bool:
    """Whether dsh refuses `event` as of a type unknown to it. The rule runs before the envelope rule, so a
    `type` that is missing or not a string is an unknown type too."""
    kind = event.get("type")
    return not (isinstance(kind, str) and kind in KNOWN_EVENT_TYPES) and event.get("ignorable") is not True


def unknown_type_message(event: dict[str, Any], session_id: str) -> str:
    """dsh's unknown-type refusal, in its words: a type printed as JavaScript prints it ("undefined", "7")."""
    return (
        f'session "{session_id}" contains event type "{js_string(event.get("type", ...))}" '
        f"(seq {js_string(event.get('seq', ...))}) unknown to this harness and not marked ignorable; refusing to "
        "interpret the log — it was likely written by a newer harness"
    )


# --- envelope (§2.2) and request/header (§3.3) -----------------------------


def decode_source_event_seqs(value: Any) -> list[int]:
    """The list or range form (docs/format.md §8) → a list of seqs; ValueError if invalid."""
    if not isinstance(value, list):
        raise ValueError("sourceEventSeqs is not an array")
    # the list form, as written: only ints (no bools, floats or ranges), all in range (tested in C, not per item)
    if not value or (set(map(type, value)) == {int} and min(value) >= 0 and max(value) <= MAX_SAFE_INTEGER):
        if len(set(value)) != len(value):
            raise ValueError("sourceEventSeqs repeats a seq")
        return value
    out: list[int] = []
    ranged = False
    for item in value:
        if isinstance(item, list):
            if len(item) != 2 or not all(is_nonneg_safe_int(v) for v in item) or item[0] > item[1]:
                raise ValueError("a sourceEventSeqs range is not [start, end] with start ≤ end")
            ranged = True
            out.extend(range(as_int(item[0]), as_int(item[1]) + 1))
        elif is_nonneg_safe_int(item):
            out.append(as_int(item))
        else:
            raise ValueError("sourceEventSeqs holds something other than a non-negative safe integer")
    if ranged and any(b <= a for a, b in itertools.pairwise(out)):
        raise ValueError("sourceEventSeqs in range form is not strictly increasing")
    if len(set(out)) != len(out):
        raise ValueError("sourceEventSeqs repeats a seq")
    return out


def surface_op_problem(op: Any) -> str | None:
    if op == "append":
        return None
    if not isinstance(op, dict) or set(op) != {"op", "start", "end"} or op["op"] != "replace":
        return f'surfaceOp {op!r} is neither "append" nor {{op: "replace", start, end}}'
    if not is_nonneg_safe_int(op["start"]) or not is_nonneg_safe_int(op["end"]):
        return "surfaceOp replace start and end are not non-negative safe integers"
    return None


def envelope_problem(event: dict[str, Any]) -> str | None:
    if not ENVELOPE_KEYS.issuperset(event):
        return f"invalid event envelope: unexpected key(s) {sorted(set(event) - ENVELOPE_KEYS)}"
    kind = event.get("type")
    if not isinstance(kind, str):
        return "invalid event envelope: type is not a string"
    if "data" not in event:
        return "invalid event envelope: data is absent"
    if not is_nonneg_safe_int(event.get("seq")):
        return "invalid event envelope: seq is not a non-negative safe integer"
    if not is_safe_int(event.get("time")):
        return "invalid event envelope: time is not a safe integer"
    if "ignorable" in event and event["ignorable"] is not True:
        return "invalid event envelope: ignorable must be true when present"
    if kind not in SURFACE_TYPES:
        if "surfaceOp" in event or "sourceEventSeqs" in event:
            return f"{kind} is not a surface event and may not carry surfaceOp or sourceEventSeqs"
        return None
    if "surfaceOp" not in event:
        return f"{kind} has no surfaceOp"
    problem = surface_op_problem(event["surfaceOp"])
    if problem:
        return problem
    if "sourceEventSeqs" in event:
        cited = event["sourceEventSeqs"]
        if isinstance(cited, list) and not all(is_nonneg_safe_int(s) for s in cited):
            problem = f'session event "{kind}" sourceEventSeqs must densely contain non-negative safe integers'
            if any(isinstance(s, list) for s in cited):
                try:
                    decode_source_event_seqs(cited)
                    problem += (
                        f" (a release after {NEWEST_SAME_SESSION_CODE} reads this range form and would accept it)"
                    )
                except ValueError:
                    pass
            return problem
        try:
            seqs = decode_source_event_seqs(cited)
        except ValueError as exc:
            return str(exc)
        if not seqs and kind != "assistant/message":
            return f"sourceEventSeqs on {kind} is empty"
        if seqs and max(seqs) >= event["seq"]:
            return "sourceEventSeqs cites a seq at or after its own event"
    return None


def request_header_problem(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("header"), dict):
        return "request/header carries no header object"
    header = data["header"]
    config = header.get("config")
    if not isinstance(config, dict):
        return "request/header config is not an object"
    if not is_nonempty_str(config.get("provider")) or not is_nonempty_str(config.get("model")):
        return "request/header config needs a non-empty provider and model"
    if "reasoningEffort" in config and not is_nonempty_str(config["reasoningEffort"]):
        return "request/header reasoningEffort is not a non-empty string"
    defaults = header.get("adapterDefaults")
    if defaults is not None:
        if not isinstance(defaults, dict) or not set(defaults) <= {"reasoningEffort", "maxTokens"}:
            return "request/header adapterDefaults has keys other than reasoningEffort and maxTokens"
        for key, value in defaults.items():
            if value is not True:
                return f"request/header adapterDefaults.{key} is not true"
            if key not in config:
                return f"request/header adapterDefaults marks {key}, which config lacks"
    return None
