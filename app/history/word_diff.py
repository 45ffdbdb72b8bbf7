"""Two texts word by word, at a bounded cost (issue 33): Myers' O(ND) shortest edit script over their words,
after the words they start and end alike with are set aside. A pair of texts that would cost more than
`WORK` steps to diff is said to have changed as a whole (`WordDiff.whole`), which a reader sees with a note.

`difflib.SequenceMatcher` (what compare used) costs the product of the two lengths whatever the change:
`x x x …` against `x y x y …` took 25 s at 1,000 words and would take most of an hour at 5,000. Myers costs
the length times the number of edits, so the budget bounds what one answer can cost any server.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

WordOp = Literal["same", "ins", "del"]
_WORDS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
WORK = 1_000_000  # steps (a diagonal tried, or a word compared) one pair of texts may cost: about 0.25 s


@dataclass(frozen=True, slots=True)
class Words:
    op: WordOp
    text: str


@dataclass(frozen=True, slots=True)
class WordDiff:
    words: tuple[Words, ...]
    whole: bool  # too costly to diff word by word: `a` removed and `b` added whole
    floor: int = 0  # the fewest steps diffing the pair word by word can cost (`least_work`)


def word_diff(a: str, b: str, work: int = WORK) -> WordDiff:
    """`a` into `b` word by word: runs the two share, removed (`del`) and added (`ins`); whitespace kept."""
    ta, tb = _WORDS.findall(a), _WORDS.findall(b)
    head = _common_prefix(ta, tb)
    tail = _common_prefix(ta[head:][::-1], tb[head:][::-1])
    mid_a, mid_b = ta[head : len(ta) - tail], tb[head : len(tb) - tail]
    ids: dict[str, int] = {}
    ia, ib = [ids.setdefault(w, len(ids)) for w in mid_a], [ids.setdefault(w, len(ids)) for w in mid_b]
    floor = least_work(ia, ib) if ia and ib else 0  # a side with no words left costs nothing: all of it changed
    script = _edit_script(ia, ib, work) if floor <= work else None
    if script is None:
        return WordDiff(tuple(w for w in (Words("del", a), Words("ins", b)) if w.text), True, floor)
    out: list[Words] = []

    def put(op: WordOp, tokens: Sequence[str]) -> None:
        text = "".join(tokens)
        if not text:
            return
        if out and out[-1].op == op:
            out[-1] = Words(op, out[-1].text + text)
        else:
            out.append(Words(op, text))

    put("same", ta[:head])
    for op, i1, i2, j1, j2 in script:
        if op == "same":
            put("same", mid_a[i1:i2])
        else:
            put("del", mid_a[i1:i2])
            put("ins", mid_b[j1:j2])
    put("same", ta[len(ta) - tail :])
    return WordDiff(tuple(out), False, floor)


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


Opcode = tuple[WordOp, int, int, int, int]  # op, a[i1:i2], b[j1:j2]


def least_work(a: Sequence[int], b: Sequence[int]) -> int:
    """The fewest steps `_edit_script` can spend on `a` and `b`, known in one pass: a pair past its budget by this
    alone (the compare bomb: `x x x …` against `x y x y …`) is changed as a whole at once, not after the budget is
    spent. Each word counted more often in one than in the other is one the script deletes or inserts, so it
    has at least that many edits, D; it ends in round D, and each round before it tried one diagonal more than
    the last, each a step: 1 + 2 + … + D."""
    counts = Counter(a)
    counts.subtract(b)
    edits = sum(abs(c) for c in counts.values())
    return edits * (edits + 1) // 2


def _edit_script(a: Sequence[int], b: Sequence[int], work: int) -> list[Opcode] | None:
    """Myers' shortest edit script from `a` to `b`, as runs kept (`same`) and changed (`del`, its `a` and `b`
    spans); None once finding it has cost more than `work` steps."""
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return [("del", 0, n, 0, m)] if n or m else []
    offset = n + m + 1
    v = [0] * (2 * offset + 1)  # v[offset + k]: the furthest x reached on diagonal k = x - y
    trace: list[list[int]] = []
    spent = 0
    for d in range(n + m + 1):
        trace.append(v[offset - d - 1 : offset + d + 2])  # the diagonals this round reads, for the way back
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]  # down: a word of `b` inserted
            else:
                x = v[offset + k - 1] + 1  # right: a word of `a` deleted
            y = x - k
            start = x
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            v[offset + k] = x
            spent += 1 + x - start
            if x >= n and y >= m:
                return _opcodes(_path(trace, d, k, n, m))
        if spent > work:
            return None
    return None  # not reached: n + m rounds always meet


def _path(trace: list[list[int]], d: int, k: int, n: int, m: int) -> list[tuple[int, int]]:
    """The points (x, y) the shortest script passes through, from (0, 0) to (n, m), read back from `trace`."""
    points = [(n, m)]
    x, y = n, m
    for depth in range(d, 0, -1):
        row = trace[depth]  # v of diagonals -depth-1 … depth+1 as round `depth` began
        base = -depth - 1

        def at(diagonal: int, row: list[int] = row, base: int = base) -> int:
            return row[diagonal - base]

        down = k == -depth or (k != depth and at(k - 1) < at(k + 1))
        k = k + 1 if down else k - 1
        px = at(k)
        py = px - k
        while x > px + (0 if down else 1) and y > py + (1 if down else 0):  # the snake, walked back
            x, y = x - 1, y - 1
            points.append((x, y))
        x, y = px, py
        points.append((x, y))
    while x > 0 and y > 0:  # the first snake, from (0, 0)
        x, y = x - 1, y - 1
        points.append((x, y))
    points.reverse()
    return points


def _opcodes(points: list[tuple[int, int]]) -> list[Opcode]:
    """Runs of diagonal steps (`same`) and of other steps (`del`: what `a` loses and `b` gains there)."""
    out: list[Opcode] = []
    for (x0, y0), (x1, y1) in pairwise(points):
        op: WordOp = "same" if (x1 - x0, y1 - y0) == (1, 1) else "del"
        if out and out[-1][0] == op:
            _, i1, _, j1, _ = out[-1]
            out[-1] = (op, i1, x1, j1, y1)
        else:
            out.append((op, x0, x1, y0, y1))
    return out
