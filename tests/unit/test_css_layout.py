"""The stylesheet keeps each selector list in one rule: a second block for the same selectors is where
overrides hide, so a rule that grows is edited where it is, in the section named for its purpose."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "static"


def _split_top(text: str, sep: str) -> list[str]:
    """`text` split at each `sep` outside brackets, parentheses and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _rules(css: str) -> list[tuple[str, str]]:
    """(prelude, body) of each top-level block, comments left out."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules, i = [], 0
    while (brace := css.find("{", i)) >= 0:
        depth, j = 1, brace + 1
        while depth:
            assert j < len(css), "unbalanced braces in the stylesheet"
            depth += {"{": 1, "}": -1}.get(css[j], 0)
            j += 1
        rules.append((css[i:brace].strip(), css[brace + 1 : j - 1]))
        i = j
    assert not css[i:].strip(), f"text after the last rule: {css[i:].strip()[:80]!r}"
    return rules


def _selector_list(prelude: str) -> tuple[str, ...]:
    """The selectors of a prelude, each with its whitespace normalised, in a stable order."""
    selectors = (" ".join(s.split()) for s in _split_top(prelude, ","))
    return tuple(sorted(re.sub(r"\s*([>+~])\s*", r" \1 ", s).strip() for s in selectors))


def repeated_selector_lists(css: str) -> list[str]:
    """Selector lists that head more than one rule of the same context (the top level, or one @media prelude).
    A selector repeated inside an @media block overrides the top-level rule on purpose and is not counted."""
    seen: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for prelude, body in _rules(css):
        if prelude.startswith("@media"):
            context = " ".join(prelude.split())
            for inner, _ in _rules(body):
                seen[(context, _selector_list(inner))] += 1
        elif not prelude.startswith("@"):
            seen[("", _selector_list(prelude))] += 1
    return [f"{context or 'top level'}: {', '.join(sel)} ({n} rules)" for (context, sel), n in seen.items() if n > 1]


def test_every_selector_list_of_the_stylesheet_heads_one_rule() -> None:
    repeated = repeated_selector_lists((STATIC / "inspect.css").read_text(encoding="utf-8"))
    assert not repeated, "merge these into the one rule they belong to:\n" + "\n".join(repeated)


def test_the_export_sheet_adds_no_second_rule_for_a_selector_list() -> None:
    """A one-file export inlines inspect.css and export.css as one sheet (app/web/render.py)."""
    sheet = "\n".join((STATIC / name).read_text(encoding="utf-8") for name in ("inspect.css", "export.css"))
    repeated = repeated_selector_lists(sheet)
    assert not repeated, "export.css repeats a rule of inspect.css:\n" + "\n".join(repeated)


def test_the_check_finds_a_repeated_selector_list() -> None:
    css = """/* a { color: red } */
    .a, .b > .c { color: red; }
    .x[data-y="1,2"] { margin: 0; }
    @media (max-width: 900px) { .a, .b > .c { color: blue; } }
    .b>.c,  .a { padding: 0; }
    """
    assert repeated_selector_lists(css) == ["top level: .a, .b > .c (2 rules)"]
