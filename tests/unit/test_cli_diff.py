"""`dsh-inspect diff A B`: the first divergences by step, exit codes 0/1/2, the JSON document."""

from __future__ import annotations

import io
import json
from pathlib import Path

from dsh_inspect.cli import main, run_diff

from tests.support.runs import fork_pair, tool_run, write_log


def diff(a: Path | str, b: Path | str, *, as_json: bool = False, ignore: tuple[str, ...] = ()) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_diff(str(a), str(b), as_json=as_json, ignore=ignore, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_a_session_against_itself_reports_no_divergence_and_exits_0(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a.jsonl", tool_run("alpha", turns=2).events)
    code, out, err = diff(path, path)
    assert code == 0 and err == ""
    assert "no divergence" in out


def test_a_changed_copy_exits_1_and_names_the_steps(tmp_path: Path) -> None:
    a = write_log(tmp_path / "a.jsonl", tool_run("alpha", seed=1).events)
    b = write_log(tmp_path / "b.jsonl", tool_run("beta", seed=2).events)
    code, out, _ = diff(a, b)
    assert code == 1
    lines = out.splitlines()
    assert "first divergence: step 1.1 (result of read)" in lines
    assert "  a: alpha" in lines and "  b: beta" in lines
    assert "request divergence: step 1.2 (messages, from message 3)" in lines
    assert "output divergence: step 1.2 (output)" in lines
    assert diff(a, b, ignore=("tool_result:read", "reasoning"))[0] == 1  # the answers still differ


def test_json_is_one_document_with_the_divergences_and_changed_items(tmp_path: Path) -> None:
    a = write_log(tmp_path / "a.jsonl", tool_run("alpha", seed=1).events)
    b = write_log(tmp_path / "b.jsonl", tool_run("beta", seed=2).events)
    code, out, _ = diff(a, b, as_json=True)
    doc = json.loads(out)
    assert code == 1 and doc["same"] is False and doc["a"] == str(a)
    assert doc["firstDivergence"]["a"] == "1.1" and doc["firstDivergence"]["part"] == "result"
    assert doc["requestDivergence"]["a"] == "1.2" and doc["outputDivergence"]["b"] == "1.2"
    (changed,) = doc["segments"][0]["items"]
    assert changed["status"] == "changed" and changed["words"] == [["del", "alpha"], ["ins", "beta"]]


def test_a_fork_against_its_parent_parts_after_the_seed(tmp_path: Path) -> None:
    parent, fork, _ = fork_pair(tmp_path)
    code, out, _ = diff(parent, fork)
    assert code == 1 and "first divergence: step 2.1 (prompt)" in out


def test_unreadable_input_exits_2_with_where_it_stopped(tmp_path: Path) -> None:
    good = write_log(tmp_path / "a.jsonl", tool_run("alpha").events)
    code, out, err = diff(good, tmp_path / "missing.jsonl")
    assert code == 2 and out == "" and "missing.jsonl" in err
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "session", "version": 0, "id": "x"\n')
    code, _, err = diff(good, broken)
    assert code == 2 and err.startswith("dsh-inspect diff: ") and "broken.jsonl" in err
    code, _, err = diff(good, good, ignore=("everything",))
    assert code == 2 and "cannot ignore 'everything'" in err


def test_the_command_line_takes_the_diff_subcommand(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = write_log(tmp_path / "a.jsonl", tool_run("alpha").events)
    assert main(["diff", str(path), str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["same"] is True
    assert main(["diff", str(path)]) == 2  # B is required


def test_ignore_leaves_parts_out_on_the_command_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    a = write_log(tmp_path / "a.jsonl", tool_run("alpha", "Done.", seed=1).events)
    b = write_log(tmp_path / "b.jsonl", tool_run("beta", "Done.", seed=2).events)
    assert main(["diff", str(a), str(b)]) == 1
    assert main(["diff", str(a), str(b), "--ignore", "tool_result:read"]) == 0
    assert "no divergence" in capsys.readouterr().out
