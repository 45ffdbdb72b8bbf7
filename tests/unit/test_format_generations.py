"""Newer dsh generations beside a frozen version-0 file (issue 30): each file of a session folder is listed
and read as the artifact it is, a newer format is `unsupported` in dsh's words with its events read all the
same, and `check` says which file is the session's current state and which an earlier one, as of which seq."""

from __future__ import annotations

import io
import json
from pathlib import Path

import orjson
import pytest
from dsh_inspect.cli import run_check
from dsh_inspect.history.session import load_session
from dsh_inspect.log.dsh_root import artifact_generation, artifact_root, list_root, resolve_root
from dsh_inspect.log.generations import session_generations
from dsh_inspect.log.sources import discover
from dsh_inspect.model.rules import newer_format

from tests.support.generations import session_dir, turns, two_generations, write_generation


@pytest.mark.parametrize(
    ("name", "generation"),
    [
        ("session.jsonl", 0),
        ("session.jsonl.zstd", 0),
        ("session.v1.jsonl", 1),
        ("session.v1.jsonl.zstd", 1),
        ("session.v12.jsonl", 12),
        ("session.v0.jsonl", None),  # version 0 keeps its frozen name
        ("session.v01.jsonl", None),
        ("session.1.jsonl", None),  # a fixture's subagent log, no generation
        ("session.v1.jsonl.0123456789ab.tmp", None),  # dsh's temporary file before it publishes
        ("session.v1.json", None),
        ("session.vx.jsonl", None),
    ],
)
def test_a_file_name_gives_its_generation(name: str, generation: int | None) -> None:
    assert artifact_generation(name) == generation


def test_a_root_lists_both_generations_of_a_session_folder(tmp_path: Path) -> None:
    old, new, _ = two_generations(tmp_path)
    assert resolve_root(str(tmp_path)) == str(tmp_path)
    listing = list_root(str(tmp_path))
    assert [(a.path, a.generation) for a in listing.artifacts] == [(str(old), 0), (str(new), 1)]
    assert all(a.version is not None for a in listing.artifacts)
    assert listing.diagnostics == [], "two generations in one encoding break no rule of the root"
    found = discover([str(tmp_path)])
    assert [(s.path, s.root) for s in found.sources] == [(str(old), str(tmp_path)), (str(new), str(tmp_path))]
    assert artifact_root(str(new)) == str(tmp_path), "a later generation's file lies where dsh keeps artifacts"


def test_a_root_of_later_generations_alone_is_a_root(tmp_path: Path) -> None:
    write_generation(tmp_path, "only-new", 3, turns(1), zstd=True)
    assert resolve_root(str(tmp_path)) == str(tmp_path)
    assert [a.generation for a in list_root(str(tmp_path)).artifacts] == [3]


def test_one_generation_in_two_encodings_is_the_root_rule_it_was(tmp_path: Path) -> None:
    write_generation(tmp_path, "twice", 0, turns(1))
    write_generation(tmp_path, "twice", 0, turns(1), zstd=True)
    write_generation(tmp_path, "twice", 1, turns(1))
    write_generation(tmp_path, "twice", 1, turns(1), zstd=True)
    listing = list_root(str(tmp_path))
    assert [a.path.rsplit("/", 1)[1] for a in listing.artifacts] == [
        "session.jsonl.zstd",
        "session.jsonl",
        "session.v1.jsonl.zstd",
        "session.v1.jsonl",
    ]
    messages = [(d.code, d.message) for d in listing.diagnostics]
    assert messages == [
        ("two-encodings", "both session.jsonl and session.jsonl.zstd: dsh wants one encoding per root"),
        ("two-encodings", "both session.v1.jsonl and session.v1.jsonl.zstd: dsh wants one encoding per root"),
        ("mixed-encodings", "this root mixes plain and zstd artifacts; dsh wants one encoding per root"),
    ]


def test_generations_pair_files_of_one_session_in_one_folder() -> None:
    found = session_generations(
        [
            ("/r/p/a/session.jsonl", "a"),
            ("/r/p/a/session.v2.jsonl.zstd", "a"),
            ("/r/p/a/session.v1.jsonl", "a"),
            ("/r/p/b/session.jsonl", "b"),  # alone in its folder
            ("/r/p/c/session.jsonl", "c"),
            ("/r/p/c/session.v1.jsonl", "not-c"),  # another session's header: no generation of c's
            ("/r/p/d/session.v1.jsonl", "d"),  # a later generation alone
            ("/r/p/e/session.jsonl", None),  # no readable header
            ("/r/p/e/session.v1.jsonl", None),
            ("/x/other.jsonl", "a"),
        ]
    )
    assert sorted(found) == ["/r/p/a/session.jsonl", "/r/p/a/session.v1.jsonl", "/r/p/a/session.v2.jsonl.zstd"]
    newest = found["/r/p/a/session.v2.jsonl.zstd"]
    assert newest.is_current and newest.number == 2
    assert newest.current == ("/r/p/a/session.v2.jsonl.zstd",)
    assert newest.earlier == ("/r/p/a/session.jsonl", "/r/p/a/session.v1.jsonl")
    oldest = found["/r/p/a/session.jsonl"]
    assert not oldest.is_current and oldest.number == 0 and oldest.current == newest.current


@pytest.mark.parametrize("zstd", [False, True])
def test_a_newer_format_is_unsupported_in_dshs_words_and_its_events_are_read(tmp_path: Path, zstd: bool) -> None:
    old, new, last = two_generations(tmp_path, zstd=zstd)
    by_path = {s.path: s for s in discover([str(tmp_path)]).sources}
    current = load_session(by_path[str(new)])
    assert current.verdict.category == "unsupported"
    assert current.verdict.reason == (
        'session "gen-sess" uses log format v1, but this harness reads only v0: the log was written by a newer '
        "harness — upgrade the harness to open it"
    )
    assert current.stored_count == len(turns(2)), "every event reads as this release's: all are there to show"
    assert current.turns == 2 and current.message_count == 8
    assert [d.code for d in current.diagnostics if d.severity == "error"] == ["unsupported-version"]
    predecessor = load_session(by_path[str(old)])
    assert predecessor.verdict.category == "accepted"
    assert predecessor.stored_count == last + 1


def test_a_newer_format_reads_as_far_as_its_records_read_as_this_releases(tmp_path: Path) -> None:
    events = turns(2)
    path = write_generation(tmp_path, "odd", 1, [])
    lines = [orjson.dumps(e) for e in events]
    lines[13] = orjson.dumps({"kind": "a record of a newer envelope", "n": 13})
    path.write_bytes(path.read_bytes() + b"".join(line + b"\n" for line in lines))
    log = load_session(discover([str(tmp_path)]).sources[0])
    assert log.verdict.category == "unsupported" and "newer harness" in log.verdict.reason
    assert log.stored_count == 13, "the events before the record this release cannot read"
    assert any(d.code == "unsupported-version" for d in log.diagnostics)


def test_an_empty_later_generation_is_an_artifact_not_a_foreign_file(tmp_path: Path) -> None:
    folder = session_dir(tmp_path, "torn")
    folder.mkdir(parents=True)
    (folder / "session.v1.jsonl").write_bytes(b"")
    log = load_session(discover([str(tmp_path)]).sources[0])
    assert log.verdict.category == "refused"
    assert log.verdict.reason == "empty or header-less session log", "as an empty session.jsonl is"


@pytest.mark.parametrize(
    ("value", "newer"), [(1, 1), (2, 2), (0.5, 0.5), (0, None), (-1, None), ("1", None), (True, None), (None, None)]
)
def test_only_a_numeric_version_above_zero_is_a_newer_format(value: object, newer: object) -> None:
    assert newer_format({"version": value} if value is not None else {}) == newer
    assert newer_format(None) is None


def check(*paths: Path, as_json: bool) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_check([str(p) for p in paths], as_json=as_json, out=out, err=err)
    return code, out.getvalue()


def test_check_reports_each_generation_truthfully(tmp_path: Path) -> None:
    old, new, last = two_generations(tmp_path)
    lone = write_generation(tmp_path, "lone", 0, turns(1))
    code, out = check(tmp_path, as_json=True)
    assert code == 1, "the newer generation is unsupported by the pinned release"
    reports = {s["path"]: s for s in json.loads(out)["sessions"]}
    assert set(reports) == {str(old), str(new), str(lone)}
    assert [reports[str(p)]["verdict"]["category"] for p in (old, new)] == ["accepted", "unsupported"]
    assert reports[str(old)]["generation"] == {
        "number": 0,
        "current": False,
        "asOfSeq": last,
        "currentFiles": [str(new)],
        "earlier": [],
    }
    assert reports[str(new)]["generation"] == {
        "number": 1,
        "current": True,
        "asOfSeq": None,
        "currentFiles": [],
        "earlier": [{"path": str(old), "number": 0, "asOfSeq": last}],
    }
    assert "generation" not in reports[str(lone)], "a folder of one generation reports as it always did"
    code, text = check(tmp_path, as_json=False)
    assert code == 1
    assert f"an earlier generation (v0) of this session, as of seq {last}, not its current state: that is {new}" in text
    assert f"the session's current state: generation v1; earlier: {old} (v0, as of seq {last})" in text
    assert "2 of 3 session(s) accepted or repaired" in text
