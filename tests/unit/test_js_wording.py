"""static/wording.js words what a script writes as the server words it: counts grouped as `strings.count`
groups them, `{name}` patterns filled as `interpolate` fills them (a count, grouped), unknown names kept.
Both sides get the same numbers and patterns; Node runs the module itself."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from dsh_inspect.forms.jsformat import interpolate
from dsh_inspect.web.present.strings import CHINESE, EN, ENGLISH, ZH, choose_forms, count, phrase

WORDING = Path(__file__).resolve().parents[2] / "static" / "wording.js"

NUMBERS = sorted({*range(0, 1200, 7), *(10**k + d for k in range(16) for d in (-1, 0, 1) if 10**k + d >= 0)})
# the patterns scripts fill (templates' data- attributes), in both languages, and the edge cases
PATTERNS = [
    *(table[key] for table in (EN, ZH) for key in ("search.count", "fold.many", "upload.stored", "upload.done")),
    "{name}: {message}",
    "{n} {n} {unknown} {m}",
]
VALUES: dict[str, str | int] = {
    "n": 1234,
    "m": 46240000,
    "count": 1000,
    "ok": 7,
    "types": "tool/call, {count}",
    "name": "log {n}.jsonl",
    "message": "HTTP 500",
}


def in_node(script: str, data: object) -> object:
    """What `script` (an ES module body, with `grouped` and `fill` imported and `data` given) prints as JSON."""
    module = f"import {{ grouped, fill }} from {json.dumps(WORDING.as_uri())};\nconst data = {json.dumps(data)};\n"
    done = subprocess.run(
        ["node", "--input-type=module", "-e", module + script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_counts_are_grouped_as_the_server_groups_them() -> None:
    grouped = in_node("console.log(JSON.stringify(data.map(grouped)));", NUMBERS)
    assert grouped == [count(n) for n in NUMBERS]


def test_patterns_are_filled_as_the_server_fills_them() -> None:
    filled = in_node(
        "console.log(JSON.stringify(data.patterns.map((p) => fill(p, data.values))));",
        {"patterns": PATTERNS, "values": VALUES},
    )
    server = {k: count(v) if isinstance(v, int) else v for k, v in VALUES.items()}
    assert filled == [interpolate(choose_forms(pattern, server), server) for pattern in PATTERNS]
    assert filled[-1] == "1,234 1,234 {unknown} 46,240,000"


# the English patterns whose noun follows its count, filled by a script (upload.js) or by the server alike
COUNTED = ("upload.stored", "list.turnsSteps", "export.imagesLeftOut", "upload.done", "search.elsewhere")


def test_a_count_of_one_takes_the_singular_on_both_sides() -> None:
    values = [
        {"name": "a.jsonl", "count": n, "turns": n, "steps": n + 1, "size": "1 KiB", "budget": "2 MiB", "ok": n, "m": n}
        for n in (0, 1, 2, 1001)
    ]
    filled = in_node(
        "console.log(JSON.stringify(data.patterns.flatMap((p) => data.values.map((v) => fill(p, v)))));",
        {"patterns": [EN[key] for key in COUNTED], "values": values},
    )
    server = [
        ENGLISH(phrase(key, **{k: count(v) if isinstance(v, int) else v for k, v in v.items()}))
        for key in COUNTED
        for v in values
    ]
    assert filled == server
    assert server[1] == "a.jsonl: 1 session stored" and server[2] == "a.jsonl: 2 sessions stored"
    assert server[5] == "1 turn · 2 steps" and server[4] == "0 turns · 1 step"
    assert server[11].startswith("1,001 images (1 KiB) are not")
    assert server[13] == "1 of 1 file stored" and server[14] == "2 of 2 files stored"
    assert server[17] == "1 match: Enter goes to the first" and server[18] == "2 matches: Enter goes to the first"
    assert ENGLISH(phrase("session.turns", count=count(1))) == "1 turn"
    assert CHINESE(phrase("session.turns", count=count(1))) == "1 轮"


def test_the_server_counts_of_one_take_the_singular_too() -> None:
    one, two = count(1), count(2)
    assert ENGLISH(phrase("overview.tokens", tokens=one)) == "1 token"
    assert ENGLISH(phrase("diff.shadowedTokens", tokens=one)) == "~1 token"
    assert ENGLISH(phrase("versions.facts", events=one, size=two)) == "1 event · 2 bytes"
    assert ENGLISH(phrase("versions.facts", events=two, size=one)) == "2 events · 1 byte"
