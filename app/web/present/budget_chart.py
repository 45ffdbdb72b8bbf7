"""Geometry of the context-budget chart: numbers for the two SVGs the template draws.

One slot per step: a stacked bar of the input the request was billed for
(cache read, cache write, uncached input) and a thin bar of its output; a
dashed marker before the first step that read a compaction or a pruning (the
history's own `Budget.shrinks`). The y axis is an SVG of its own, `AXIS_WIDTH`
wide, beside the plot, which scrolls sideways under it: a long session's plot
is thousands of pixels wide and its scale stays in view. Plot x starts at 0.
Styling is by class (the page's CSP allows no inline styles).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ...history.usage import Budget
from .strings import Strings, count
from .wording import WORDS

AXIS_WIDTH = 48.0  # the y axis beside the plot, at least: its tick labels end 6 px before it, and it widens for them
DIGIT = 6.6  # px an 11 px UI-font character takes at most (a digit, a comma, a dot): labels are measured by it
TICKS = 8  # at most about as many ticks up the y axis, at least half as many (`_nice_step`)
RIGHT, TOP, BOTTOM = 80.0, 28.0, 30.0  # the right margin fits a marker label
PLOT_HEIGHT = 220.0
TARGET_WIDTH = 960.0


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    cls: str


@dataclass(frozen=True, slots=True)
class Bar:
    key: str
    href: str
    title: str
    rects: tuple[Rect, ...]
    hit: Rect  # the whole slot, so a thin bar is still easy to click


@dataclass(frozen=True, slots=True)
class Marker:
    x: float
    kind: str  # ReplaceKind: compaction, prune, rewrite, replace
    cls: str
    label: str
    title: str  # also its accessible name


@dataclass(frozen=True, slots=True)
class Tick:
    y: float
    label: str


@dataclass(frozen=True, slots=True)
class XLabel:
    x: float
    label: str
    anchor: str  # SVG text-anchor: `middle` under its bar, `start` where that would cut it at the plot's left


@dataclass(frozen=True, slots=True)
class Chart:
    width: float  # the plot's, the axis apart
    height: float
    top: float
    bottom: float  # y of the zero line
    axis_width: float
    right: float  # x where the last slot ends
    bars: tuple[Bar, ...]
    markers: tuple[Marker, ...]
    marker_kinds: tuple[str, ...]  # the kinds of marker drawn, each once, for the legend
    ticks: tuple[Tick, ...]
    labels: tuple[XLabel, ...]


def _nice_step(peak: int) -> int:
    """A round step (1, 2, 2.5 or 5 times a power of ten, whole) that puts about TICKS ticks up to `peak`."""
    raw = max(peak / TICKS, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    return int(next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw and m * magnitude % 1 == 0))


def _text_width(label: str) -> float:
    return len(label) * DIGIT


def budget_chart(window: Budget, first: int, peak: int, step_url: Callable[[str], str], t: Strings) -> Chart | None:
    """The chart of a window of steps, `first` the index of its first step among all and `peak` the
    tallest of all (one scale for every window). None when no step reported usage: nothing to draw."""
    steps = window.steps
    if not steps or peak <= 0:
        return None
    slot = min(48.0, max(8.0, TARGET_WIDTH / len(steps)))
    bottom = TOP + PLOT_HEIGHT
    scale = PLOT_HEIGHT / peak

    def rect(x: float, width: float, base: float, value: int, cls: str) -> Rect:
        height = value * scale
        return Rect(round(x, 2), round(base - height, 2), round(width, 2), round(height, 2), cls)

    bars = []
    for i, step in enumerate(steps):
        x = i * slot
        hit = Rect(round(x, 2), TOP, round(slot, 2), PLOT_HEIGHT, "budget-hit")
        title = t("budget.barTitle", step=step.key, messages=count(step.messages))
        rects: list[Rect] = []
        if step.usage is not None:
            u = step.usage
            stack_x, stack_w = x + slot * 0.12, slot * 0.5
            base = bottom
            for value, cls in (
                (u.cache_read or 0, "budget-cache-read"),
                (u.cache_write or 0, "budget-cache-write"),
                (u.input, "budget-input"),
            ):
                if value > 0:
                    r = rect(stack_x, stack_w, base, value, cls)
                    rects.append(r)
                    base = r.y
            if u.output > 0:
                rects.append(rect(stack_x + stack_w + 1, slot * 0.2, bottom, u.output, "budget-output"))
            title += " · " + t(
                "budget.usageTitle",
                context=count(u.context),
                input=count(u.input),
                read=count(u.cache_read or 0),
                write=count(u.cache_write or 0),
                output=count(u.output),
            )
        else:
            title += " · " + t("usage.none")
        bars.append(Bar(step.key, step_url(step.key), title, tuple(rects), hit))
    markers = []
    for shrink in window.shrinks:
        replaced = shrink.replacement
        label = t(WORDS.markers[replaced.kind])
        detail = t("budget.markerTitle", seq=replaced.seq, kind=label, count=count(len(replaced.shadowed)))
        if replaced.shadowed_tokens is not None:
            detail += " · " + t("diff.shadowedTokens", tokens=count(replaced.shadowed_tokens))
        x = round((shrink.before_step - first) * slot, 2)
        markers.append(Marker(x, replaced.kind, f"budget-marker budget-marker-{replaced.kind}", label, detail))
    step_size = _nice_step(peak)
    ticks = tuple(Tick(round(bottom - v * scale, 2), count(v)) for v in range(0, peak + 1, step_size))
    axis_width = max(AXIS_WIDTH, round(max(_text_width(tick.label) for tick in ticks) + 12, 2))
    every = max(1, math.ceil(len(steps) / 16))
    labels = tuple(_x_label(i * slot + slot / 2, s.key) for i, s in enumerate(steps) if i % every == 0)
    right = len(steps) * slot
    return Chart(
        round(right + RIGHT, 2),
        bottom + BOTTOM,
        TOP,
        bottom,
        axis_width,
        round(right, 2),
        tuple(bars),
        tuple(markers),
        tuple(dict.fromkeys(m.kind for m in markers)),
        ticks,
        labels,
    )


def _x_label(middle: float, key: str) -> XLabel:
    """A step's key under its bar; one that would run past the plot's left edge starts at it instead."""
    if middle - _text_width(key) / 2 < 0:
        return XLabel(0.0, key, "start")
    return XLabel(round(middle, 2), key, "middle")
