"""The caches behind the performance budgets (docs/decisions/0005) follow each file's version.

Headers, carriers and rendered windows are kept per file version, so a listing
or a first screen repeated on unchanged files costs little; these tests check
that a change on disk still shows, and that the cheaper discovery still keeps
links from publishing files outside the served folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
from dsh_inspect.log.writer import write_artifact
from dsh_inspect.sessions.registry import Registry

from tests.support.builders import LogBuilder, header, two_turns
from tests.support.server import app_client


def _root_with(root: Path, *ids: str) -> dict[str, Path]:
    return {sid: write_artifact(root, header(sid), [two_turns().events], "zstd") for sid in ids}


def _ids(registry: Registry) -> set[str]:
    registry.refresh()
    return {e.session_id for e in registry.entries() if e.session_id}


def _touch_later(path: Path) -> None:
    """A new modification time, even where the clock ticks coarsely."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def test_a_listing_shows_new_sessions_and_a_header_rewritten_in_place(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    paths = _root_with(root, "first", "second")
    registry = Registry([str(root)])
    assert _ids(registry) == {"first", "second"}
    _root_with(root, "third")
    assert _ids(registry) == {"first", "second", "third"}
    plain = tmp_path / "plain" / "session.jsonl"
    plain.parent.mkdir()
    plain.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("before"), *two_turns().events]))
    registry = Registry([str(plain)])
    assert _ids(registry) == {"before"}
    with plain.open("r+b") as f:  # in place: same inode, same folder
        f.write(orjson.dumps(header("after")).ljust(len(orjson.dumps(header("before")))) + b"\n")
    _touch_later(plain)
    assert _ids(registry) == {"after"}
    paths["first"].unlink()
    assert "first" not in _ids(Registry([str(root)]))


def test_a_linked_artifact_in_a_root_is_followed_only_inside_the_served_folder(tmp_path: Path) -> None:
    served = tmp_path / "served"
    root = served / "sessions"
    _root_with(root, "kept")
    outside = _root_with(tmp_path / "elsewhere", "secret")["secret"]
    inside = _root_with(served / "store", "stored")["stored"]
    for sid, target in (("secret", outside), ("stored", inside)):
        folder = root / "--work-project--" / sid
        folder.mkdir(parents=True)
        (folder / "session.jsonl.zstd").symlink_to(target)
    registry = Registry([str(served)])  # a DSH_HOME: its sessions/ is the root
    for _ in range(2):  # the second listing answers from the caches
        assert _ids(registry) == {"kept", "stored"}
        assert [r.path for r in registry.refused()] == [
            str(root / "--work-project--" / "secret" / "session.jsonl.zstd")
        ]


def test_a_root_reached_through_a_link_that_leaves_the_served_folder_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _root_with(tmp_path / "real-sessions", "far")
    (home / "sessions").symlink_to(tmp_path / "real-sessions")
    registry = Registry([str(home)])
    assert _ids(registry) == set()
    assert len(registry.refused()) == 1


def test_the_first_screen_shows_what_a_log_gained_since_it_was_shown(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "session.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header("growing"), *two_turns().events]))
    with app_client([str(path.parent)]) as client:
        first = client.get("/sessions/growing").text
        assert first == client.get("/sessions/growing").text  # shown again from the cache
        extra = LogBuilder(seed=99)
        extra.turn(3, "A third prompt, written later")
        offset = len(two_turns().events)
        with path.open("ab") as f:
            f.write(b"".join(orjson.dumps({**e, "seq": e["seq"] + offset}) + b"\n" for e in extra.events))
        _touch_later(path)
        grown = client.get("/sessions/growing").text
        assert "A third prompt, written later" not in first and "A third prompt, written later" in grown
        rows = client.get("/sessions/growing/rows?from=0").text
        assert "A third prompt, written later" in rows
