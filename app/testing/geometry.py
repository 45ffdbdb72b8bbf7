"""Where elements sit and how they are styled, as a text a golden compares: a test names its locators, and
each element they match gives its box and the computed styles asked for, numbers rounded."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_MEASURE = """(elements, styles) => elements.map((element) => {
  const box = element.getBoundingClientRect();
  const computed = getComputedStyle(element);
  return {box: [box.x, box.y, box.width, box.height], styles: styles.map((name) => computed.getPropertyValue(name))};
})"""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def rounded(value: float, precision: int) -> str:
    number = round(value, precision) + 0.0  # never "-0"
    return f"{number:.{precision}f}" if precision else str(int(number))


def geometry_text(locators: Mapping[str, Any], styles: Sequence[str] = (), precision: int = 0) -> str:
    """One entry per name, one item per element its locator matches (none: `[]`):

    card:
    - box: x 12, y 40, width 748, height 141
      font-size: 14px
    """
    lines = []
    for name, locator in locators.items():
        measured = locator.evaluate_all(_MEASURE, list(styles))
        lines.append(f"{name}:" + ("" if measured else " []"))
        for element in measured:
            x, y, width, height = (rounded(v, precision) for v in element["box"])
            lines.append(f"- box: x {x}, y {y}, width {width}, height {height}")
            for style, value in zip(styles, element["styles"], strict=True):
                shown = _NUMBER.sub(lambda m: rounded(float(m.group()), precision), value)
                lines.append(f"  {style}: {shown}")
    return "\n".join(lines) + "\n"
