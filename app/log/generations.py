"""Format generations of one session in one session folder.

Newer dsh releases are reported to write a format version N after 0 as `session.v<N>.jsonl[.zstd]`, next to
the session's frozen version-0 `session.jsonl[.zstd]`. Each file is read as the artifact it is; this says how
they stand to each other: the newest generation is the session's current state, an older one a predecessor,
shown "as of" its last seq and never as the current state.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from .dsh_root import artifact_generation


@dataclass(frozen=True, slots=True)
class Generation:
    """One file of a session folder that holds more than one format generation of the same session."""

    path: str
    number: int  # the generation its name gives: 0 for `session.jsonl[.zstd]`, N for `session.v<N>…`
    current: tuple[str, ...]  # the newest generation's files (two only when it is there in both encodings)
    earlier: tuple[str, ...]  # the older generations' files, oldest first

    @property
    def is_current(self) -> bool:
        return self.path in self.current


def generation_number(path: str) -> int | None:
    """The generation a file's name gives, or None when the name is no dsh artifact's."""
    return artifact_generation(os.path.basename(path))


def session_generations(files: Iterable[tuple[str, str | None]]) -> dict[str, Generation]:
    """Each file of `files` ((path, its header's session id)) that shares its folder and its session id with a
    file of another generation, by path. Files named otherwise, without an id, or alone in their generation
    and folder are left out: they are what they always were."""
    folders: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for path, session_id in files:
        number = generation_number(path)
        if number is not None and session_id:
            folders[(os.path.dirname(path), session_id)].append((number, path))
    found: dict[str, Generation] = {}
    for members in folders.values():
        numbers = {n for n, _ in members}
        if len(numbers) < 2:
            continue
        newest = max(numbers)
        ordered = sorted(members)
        current = tuple(p for n, p in ordered if n == newest)
        earlier = tuple(p for n, p in ordered if n != newest)
        for number, path in members:
            found[path] = Generation(path, number, current, earlier)
    return found
