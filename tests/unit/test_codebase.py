"""What keeps the code base as PRODUCT.md lays it out, beyond ruff, mypy and lint-imports (`make check`)."""

from __future__ import annotations

import re
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def test_every_type_ignore_names_its_error_and_says_why() -> None:
    bare = []
    for path in sorted(APP.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found = IGNORE.search(line)
            if found and (not found["codes"] or not found["rest"].strip().startswith("#")):
                bare.append(f"{path.relative_to(APP.parent)}:{number}: {line.strip()}")
    assert not bare, "a `type: ignore` needs its code and a reason after it, `# why`:\n" + "\n".join(bare)
