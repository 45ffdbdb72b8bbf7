"""Goldens: what a page shows (its aria snapshot, a text, boxes and styles) compared with a committed file,
after one normalisation that replaces what differs from run to run, and only that, by tokens.

The rules (`RULES`, applied in order, after a test's own substitutions):

- `{{uuid}}`: any UUID (session and message ids the seeder or a builder made);
- `{{legacy-id}}`: an upgraded legacy message id, `legacy-message:<session>:<seq>`, raw or in a URL;
- `{{datetime}}`: an ISO date and time, and whatever an aria `- time:` entry holds (the page's clocks);
- `{{duration}}`: a duration the page measured, in either language: an aria text node that is one
  (`- text: 12 ms`, `- text: 1 分 5 秒`), or after `TTFT` / `首字`;
- `{{path}}`: a temporary path (`/tmp/…`, macOS's `/private/var/…`, `/var/folders/…`);
- `{{seq}}`: an event's seq where the page links it: a link named `#12`, `/events/12` (and `/contexts/`,
  `/bodies/`, `/message-bodies/`), `?at=12`.

A fixture's own text is left alone: a `12:30`, a `5 s` or an `issue #4` in a prompt stays as written. A test
adds its own substitutions as `(pattern, replacement)` pairs (regular expressions, applied first) to any
golden, or to all of its module's with a `dsh_golden_substitutions` fixture.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

Substitutions = Iterable[tuple[str, str]]
# A duration as the page writes it, in either language (`duration.*` in web/present/strings.py)
_DURATION = r"\d+(?:\.\d+)? ?(?:ms|s|毫秒|秒)|\d+ min \d+ s|\d+ 分 \d+ 秒"


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    replacement: str


RULES = (
    Rule("uuid", re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "{{uuid}}"),
    Rule("legacy-id", re.compile(r"legacy-message(?::|%3A)[^\s\"'/]+?(?::|%3A)\d+\b"), "{{legacy-id}}"),
    Rule(
        "datetime",
        re.compile(r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b"),
        "{{datetime}}",
    ),
    Rule("time-entry", re.compile(r"^(\s*- time: ).+$", re.M), r"\1{{datetime}}"),
    Rule("duration", re.compile(rf"^(\s*- text: )(?:{_DURATION})$", re.M), r"\1{{duration}}"),
    Rule("ttft", re.compile(rf"(TTFT |首字 )(?:{_DURATION})"), r"\1{{duration}}"),
    Rule("path", re.compile(r"(?<![\w./-])(?:/tmp|/private/var|/var/folders)/[^\s\"']*"), "{{path}}"),
    Rule("seq-link", re.compile(r"(link \"#)\d+\""), r'\1{{seq}}"'),
    Rule("seq-url", re.compile(r"(/(?:events|contexts|bodies|message-bodies)/|[?&]at=)\d+\b"), r"\1{{seq}}"),
)


def normalize(text: str, substitutions: Substitutions = ()) -> str:
    """`text` with a test's own substitutions, then `RULES`, applied; one final newline."""
    for pattern, replacement in substitutions:
        text = re.sub(pattern, replacement, text)
    for rule in RULES:
        text = rule.pattern.sub(rule.replacement, text)
    return text.rstrip() + "\n"


def compare(
    actual: str, path: Path, *, refresh: bool, what: str = "aria snapshot", substitutions: Substitutions = ()
) -> str | None:
    """None when `actual` matches the golden at `path` (written first, or when refreshing); else why not."""
    text = normalize(actual, substitutions)
    if refresh or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return None if refresh else f"golden {path} did not exist; written now: review and commit it"
    expected = path.read_text(encoding="utf-8")
    if expected == text:
        return None
    diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), "golden", "actual"))
    return f"{what} differs from {path} (rerun with --refresh-goldens to accept):\n{diff}"
