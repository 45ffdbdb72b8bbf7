"""How a tool row presents a call (docs/ui.md §5.3): variant, title, summary and what it asked, from the
logged call alone.

The host computes richer views that the log does not store; the ones its
arguments make (`forms.tool_asks`) are made again here, and a call they do not
fit keeps the generic card: its arguments' JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson

from ..log.jsonvalues import js_string, nests_deeper, parse_json
from ..model.values import ContentBlock, TextBlock
from .jsformat import pretty_json
from .tool_asks import Ask, ask

Variant = Literal["bash", "read", "search", "write", "edit", "code", "others"]

_VARIANTS: dict[str, Variant] = {
    "bash": "bash",
    "pwsh": "bash",
    "read": "read",
    "web_fetch": "read",
    "grep": "search",
    "glob": "search",
    "web_search": "search",
    "write": "write",
    "edit": "edit",
    "run_code": "code",
}
_TITLES: dict[Variant, str] = {
    "bash": "Bash",
    "read": "Read",
    "search": "Search",
    "write": "Write",
    "edit": "Edit",
    "code": "Code",
    "others": "Tool call",
}
# Tools dsh titles apart from their variant; web.present.wording words a title by its variant or such a name.
TITLE_OVERRIDES = {"pwsh": "Pwsh"}
_SUMMARY_KEYS: dict[Variant, tuple[str, ...]] = {
    "bash": ("description", "command"),
    "read": ("path", "file_path", "url"),
    "search": ("query", "pattern", "url"),
    "write": ("path", "file_path"),
    "edit": ("path", "file_path"),
    "code": ("description",),
    "others": (),
}
_PATH_VARIANTS = ("read", "write", "edit")


@dataclass(frozen=True, slots=True)
class ToolPresentation:
    variant: Variant
    title: str  # as dsh titles the row: the English literal the JSON twin keeps
    title_name: str  # which title words the row in the page's language: its variant, or its name if titled apart
    summary: str
    # read/write/edit show their path as a link-like button (docs/ui.md §5.3).
    path: str | None
    # The IN section: pretty JSON of the arguments, or their raw text when it is not JSON.
    arguments: str
    # What the call asked, by tool, shown in place of the JSON; None: the arguments are not its tool's shape.
    ask: Ask | None


def parse_arguments(raw: Any) -> Any:
    """Tool arguments are the model's raw JSON text; code-mode sub-calls log them parsed."""
    if not isinstance(raw, str):
        return raw
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw
    # arguments nested deeper than the readers keep are shown as their text from there, as log lines are
    return parse_json(raw)[0] if nests_deeper(value) else value


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0].strip()


def _relative(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def present_tool(name: str, raw_arguments: Any, cwd: str | None = None) -> ToolPresentation:
    variant = _VARIANTS.get(name, "others")
    title = TITLE_OVERRIDES.get(name, _TITLES[variant])
    args = parse_arguments(raw_arguments)
    summary = ""
    path = None
    if isinstance(args, dict):
        for key in _SUMMARY_KEYS[variant]:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                summary = value
                if variant in _PATH_VARIANTS and key != "url":
                    path = _relative(_first_line(value), cwd)
                break
        if not summary:
            summary = next((v for v in args.values() if isinstance(v, str) and v.strip()), "")
    if not summary:
        summary = raw_arguments if isinstance(raw_arguments, str) else orjson.dumps(raw_arguments).decode()
    summary = _relative(_first_line(summary), cwd) if path is None else path
    if variant == "others":
        summary = f"{name} · {summary}" if summary else name
    pretty = orjson.dumps(args, option=orjson.OPT_INDENT_2).decode() if not isinstance(args, str) else args
    title_name = name if name in TITLE_OVERRIDES else variant
    return ToolPresentation(variant, title, title_name, summary, path, pretty, ask(variant, args, path))


def result_text(content: tuple[ContentBlock, ...] | None, error_name: Any = None, error_code: Any = None) -> str | None:
    """A tool result's OUT (docs/ui.md §5.3): its text blocks joined by `\n`, other blocks as pretty JSON,
    or `name: code` for an error whose result says nothing; None for no result at all."""
    text = (
        None
        if content is None
        else "\n".join(b.text if isinstance(b, TextBlock) else pretty_json(b.to_json()) for b in content)
    )
    if not text and error_code:
        return f"{js_string(error_name) if error_name is not None else 'Error'}: {js_string(error_code)}"
    return text
