"""A dsh root whose session folder holds two format generations of one session (issue 30): the frozen
version-0 `session.jsonl[.zstd]` and a newer release's `session.v<N>.jsonl[.zstd]`, each where dsh puts it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_inspect.log.dsh_root import encode_segment, project_key

from tests.support.builders import LogBuilder, header
from tests.support.writers import batches_of, write_jsonl, write_zstd

Event = dict[str, Any]
CWD = "/work/project"


def turns(count: int) -> list[Event]:
    b = LogBuilder()
    for n in range(1, count + 1):
        b.turn(n, f"prompt {n}")
    return b.events


def session_dir(root: Path, session_id: str) -> Path:
    return root / project_key(CWD) / encode_segment(session_id)


def write_generation(
    root: Path, session_id: str, generation: int, events: list[Event], *, zstd: bool = False, version: Any = None
) -> Path:
    """Generation `generation` of `session_id` in `root`: its header's `version` is `generation` unless given."""
    folder = session_dir(root, session_id)
    folder.mkdir(parents=True, exist_ok=True)
    name = "session" + (f".v{generation}" if generation else "") + ".jsonl" + (".zstd" if zstd else "")
    head = header(session_id, cwd=CWD, version=generation if version is None else version)
    write = write_zstd if zstd else write_jsonl
    return write(folder / name, head, batches_of(events, 5))


def two_generations(root: Path, session_id: str = "gen-sess", *, zstd: bool = False) -> tuple[Path, Path, int]:
    """A version-0 file of one turn and its v1 successor of two (the first turn and another): the paths, and
    the last seq of the version-0 file (the seq it stands "as of")."""
    events = turns(2)
    first = next(i for i, e in enumerate(events) if e["type"] == "turn/end") + 1
    old = write_generation(root, session_id, 0, events[:first], zstd=zstd)
    new = write_generation(root, session_id, 1, events, zstd=zstd)
    return old, new, first - 1
