"""Aria snapshots compared with committed goldens, with run-to-run noise replaced by tokens."""

from __future__ import annotations

import re
from pathlib import Path

_RULES = (
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "{{uuid}}"),
    (re.compile(r"legacy-message:[^:\s\"]+:\d+"), "{{legacy-id}}"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?\b"), "{{datetime}}"),
    (re.compile(r"\b\d{1,2}:\d{2}\b"), "{{clock}}"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s|min)\b"), "{{duration}}"),
    (re.compile(r"(/tmp|/private/var|/var/folders)/[^\s\"']*"), "{{path}}"),
    (re.compile(r"#\d+\b"), "#{{seq}}"),
)


def normalize(snapshot: str) -> str:
    for pattern, token in _RULES:
        snapshot = pattern.sub(token, snapshot)
    return snapshot.rstrip() + "\n"


def compare(actual: str, path: Path, *, refresh: bool) -> str | None:
    """None when `actual` matches the golden at `path` (written first, or when refreshing)."""
    text = normalize(actual)
    if refresh or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return None if refresh else f"golden {path} did not exist; written now: review and commit it"
    expected = path.read_text(encoding="utf-8")
    if expected == text:
        return None
    import difflib

    diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), "golden", "actual"))
    return f"aria snapshot differs from {path} (rerun with --refresh-goldens to accept):\n{diff}"
