"""`dsh-inspect search`: hits one per line, exit codes, the JSON document, progress, an index kept between runs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from dsh_inspect.cli import build_parser
from dsh_inspect.commands.search import run_search

from tests.support.builders import LogBuilder, header, two_turns
from tests.support.instructions import instructions_log
from tests.support.uploads import jsonl_bytes


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def write_log(path: Path, events: list[dict], session_id: str = "session-test") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *events]))
    return path


def search(
    tmp_path: Path, query: str, *paths: Path, out: io.StringIO | None = None, **options: object
) -> tuple[int, str, str]:
    out = out or io.StringIO()
    err = io.StringIO()
    settings = {"kind": "", "form": "", "tool": "", "errors": False, "as_json": False, **options}
    code = run_search(
        query,
        [str(p) for p in paths],
        index_path=str(tmp_path / "index.sqlite3"),
        out=out,
        err=err,
        **settings,  # type: ignore[arg-type]
    )
    return code, out.getvalue(), err.getvalue()


def test_hits_print_path_anchor_and_marked_snippet_and_exit_zero(tmp_path: Path) -> None:
    log = write_log(tmp_path / "logs/a.jsonl", two_turns().events)
    code, out, _ = search(tmp_path, "says alpha", tmp_path / "logs")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2
    for line in lines:
        path, anchor, snippet = line.split("  ", 2)
        assert path == str(log) and anchor.startswith("msg-")
        assert snippet == "The file [[says alpha]]."


def test_no_hit_exits_one_and_a_missing_path_two(tmp_path: Path) -> None:
    write_log(tmp_path / "logs/a.jsonl", two_turns().events)
    assert search(tmp_path, "nowhere to be found", tmp_path / "logs")[:2] == (1, "")
    code, _, err = search(tmp_path, "alpha", tmp_path / "missing")
    assert code == 2 and "missing" in err
    code, _, err = search(tmp_path, "", tmp_path / "logs")
    assert code == 2 and "QUERY" in err


def test_json_lists_each_hit_with_its_session_row_and_marks(tmp_path: Path) -> None:
    shop = tmp_path / "logs/shop.jsonl"
    shop.parent.mkdir(parents=True)
    shop.write_bytes(instructions_log("shop", "价格以人民币计。"))
    write_log(tmp_path / "logs/other.jsonl", two_turns().events, "other")
    code, out, _ = search(tmp_path, "人民币", tmp_path / "logs", as_json=True, form="instructions")
    assert code == 0
    doc = json.loads(out)
    (hit,) = doc["hits"]
    assert (doc["total"], doc["sessions"]) == (1, 1)
    assert (hit["path"], hit["key"], hit["kind"], hit["form"]) == (str(shop), "shop", "context", "instructions")
    start, end = hit["marks"][0]
    assert hit["snippet"][start:end] == "人民币"


def test_filters_alone_search_too(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    write_log(tmp_path / "logs/a.jsonl", b.events)
    code, out, _ = search(tmp_path, "", tmp_path / "logs", kind="tool-call", tool="read", as_json=True)
    assert code == 0 and [h["kind"] for h in json.loads(out)["hits"]] == ["tool-call"]
    assert search(tmp_path, "", tmp_path / "logs", errors=True)[0] == 1


def test_a_terminal_sees_the_match_in_reverse_video_and_never_the_logs_escapes(tmp_path: Path) -> None:
    write_log(tmp_path / "logs/a.jsonl", _escape_turn())
    code, out, _ = search(tmp_path, "colour", tmp_path / "logs", out=Terminal())
    assert code == 0
    assert "\x1b[7mcolour\x1b[0m" in out
    assert "\\x1b[31m" in out and "\x1b[31m" not in out


def _escape_turn() -> list[dict]:
    b = LogBuilder()
    b.turn(1, "make the colour \x1b[31mred")
    return b.events


def test_many_sessions_show_progress_once_and_a_second_run_reads_none(tmp_path: Path) -> None:
    for n in range(3):
        write_log(tmp_path / f"logs/s{n}.jsonl", two_turns().events, f"s{n}")
    _, _, err = search(tmp_path, "alpha", tmp_path / "logs")
    assert "indexing 1/3" in err and "indexing 3/3" in err
    code, _, err = search(tmp_path, "alpha", tmp_path / "logs")
    assert code == 0 and "indexing" not in err


def test_help_says_what_the_exit_codes_mean() -> None:
    parser = build_parser()
    sub = next(a for a in parser._subparsers._group_actions if a.dest == "command")  # type: ignore[union-attr]
    text = sub.choices["search"].format_help()  # type: ignore[attr-defined]
    assert "0 when a row matches, 1 when none" in " ".join(text.split())


@pytest.mark.slow  # the installed `dsh-inspect search` as a process
def test_the_installed_command_runs(tmp_path: Path) -> None:
    write_log(tmp_path / "logs/a.jsonl", two_turns().events)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-m", "dsh_inspect", "search", "says alpha", str(tmp_path / "logs"), "--json"],
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["hits"]) == 2
    assert (tmp_path / "cache/dsh-inspect/search-index.sqlite3").is_file()


@pytest.mark.slow  # a `search` process and its pool of workers
def test_the_command_reads_many_logs_on_every_core_and_once(tmp_path: Path) -> None:
    """Past FAN_OUT_FROM (64) stale logs a process pool reads them, from the installed command as from the
    server: every log is indexed once and found."""
    for n in range(70):  # past FAN_OUT_FROM
        b = LogBuilder()
        b.turn(1, f"prompt of session {n}")
        write_log(tmp_path / f"logs/s{n}.jsonl", b.events, f"s{n}")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-m", "dsh_inspect", "search", "prompt of session 7", str(tmp_path / "logs"), "--json"],
        capture_output=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert [h["key"] for h in json.loads(done.stdout)["hits"]] == ["s7"]
    assert done.stderr.count(b"indexing 70/70") == 1 and b"Traceback" not in done.stderr


def test_a_phrase_matching_more_rows_than_are_counted_says_where_counting_stopped(tmp_path: Path) -> None:
    for n in range(3):  # 1,200 rows say "Read": a call and its result a turn
        (tmp_path / "logs").mkdir(exist_ok=True)
        (tmp_path / "logs" / f"long-{n}.jsonl").write_bytes(jsonl_bytes(f"long-{n}", 200))
    code, out, err = search(tmp_path, "Read", tmp_path / "logs", as_json=True)
    doc = json.loads(out)
    assert code == 0 and (doc["total"], doc["countedAll"], len(doc["hits"])) == (1000, False, 200)
    code, out, err = search(tmp_path, "Read", tmp_path / "logs")
    assert "the first 200 of over 1,000 matching rows shown (counting stops at 1,000" in err
    code, out, err = search(tmp_path, "Read", tmp_path / "logs", kind="tool-call", as_json=True)
    assert (json.loads(out)["total"], json.loads(out)["countedAll"]) == (600, True)
