"""`dsh-inspect check`: verdicts, exit codes, the JSON document, progress."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from dsh_inspect.cli import main, run_check
from dsh_inspect.model.rules import DSH_RELEASE

from tests.support.builders import header, two_turns


def write_log(path: Path, events: list[dict], head: dict | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [head or header(), *events]))
    return path


def check(*paths: Path | str, as_json: bool = True) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_check([str(p) for p in paths], as_json=as_json, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_accepted_logs_exit_zero_with_one_json_document(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a/session.jsonl", two_turns().events)
    code, out, _ = check(path)
    assert code == 0
    doc = json.loads(out)
    (session,) = doc["sessions"]
    durations = session.pop("durations")  # where the time went: each event a millisecond after the one before
    assert durations["wallMs"] == len(two_turns().events) - 1 and durations["openSpans"] == 0
    cost = session.pop("cost")  # four answers without a logged usage: each at an unknown price, never 0
    assert (cost["total"], cost["currency"], cost["unknownCalls"]) == (None, "USD", 4)
    assert session == {
        "path": str(path),
        "id": "session-test",
        "carrier": "jsonl",
        "events": len(two_turns().events),
        "closers": 0,
        "messages": 8,
        "verdict": {
            "category": "accepted",
            "accepted": True,
            "reason": "dsh would load this log as it is",
            "location": None,
            "repairs": [],
            "dsh": DSH_RELEASE,
        },
        "diagnostics": [],
        "contexts": {"instructions": 0, "catalog": 0, "snapshot": 0, "notice": 0, "relay": 0, "recall": 0, "opaque": 0},
    }
    assert doc["refused"] == []


def test_a_refused_log_exits_one_and_locates_the_defect(tmp_path: Path) -> None:
    events = two_turns().events
    events[3]["data"] = "not a message"
    path = write_log(tmp_path / "session.jsonl", events)
    code, out, _ = check(path)
    assert code == 1
    (session,) = json.loads(out)["sessions"]
    assert session["verdict"]["category"] == "refused" and session["verdict"]["accepted"] is False
    errors = [d for d in session["diagnostics"] if d["severity"] == "error"]
    assert errors[0]["line"] == 5 and errors[0]["file"] == str(path)
    assert isinstance(errors[0]["offset"], int) and errors[0]["row"] is None


def test_a_repaired_log_still_exits_zero(tmp_path: Path) -> None:
    path = write_log(tmp_path / "session.jsonl", two_turns().events[:-1])  # open final turn
    code, out, _ = check(path)
    assert code == 0
    (session,) = json.loads(out)["sessions"]
    assert session["verdict"]["category"] == "repaired" and session["verdict"]["accepted"] is True
    assert session["verdict"]["repairs"] and "closed the open final turn" in session["verdict"]["repairs"][0]


def test_an_input_that_is_not_a_session_log_is_listed_as_refused(tmp_path: Path) -> None:
    path = tmp_path / "stdout.jsonl"
    path.write_text('{"jsonrpc":"2.0","id":1,"result":{}}\n')
    code, out, _ = check(path)
    assert code == 1
    doc = json.loads(out)
    assert doc["sessions"] == []
    assert doc["refused"][0]["path"] == str(path) and "JSON-RPC" in doc["refused"][0]["reason"]


def test_a_folder_with_no_log_in_it_is_not_a_clean_check(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, out, _ = check(tmp_path / "empty")
    assert code == 1
    assert json.loads(out)["refused"] == [{"path": str(tmp_path / "empty"), "reason": "no session log in this folder"}]


def test_usage_errors_and_unreadable_paths_exit_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 2
    assert main(["frobnicate"]) == 2
    code, _, err = check(tmp_path / "missing")
    assert code == 2 and "no such file" in err


def test_a_folder_is_scanned_recursively_with_progress(tmp_path: Path) -> None:
    for name in ("a", "b", ".hidden", "c"):
        write_log(tmp_path / name / "session.jsonl", two_turns().events)
    (tmp_path / "c" / "session.jsonl.1a2b3c4d5e6f.tmp").write_text("partial")
    code, out, err = check(tmp_path)
    assert code == 0
    paths = [s["path"] for s in json.loads(out)["sessions"]]
    assert paths == [str(tmp_path / n / "session.jsonl") for n in ("a", "b", "c")]
    assert "checking 3/3" in err


def test_text_output_names_the_verdict_and_where(tmp_path: Path) -> None:
    events = two_turns().events
    events[5]["seq"] = 77
    path = write_log(tmp_path / "session.jsonl", events)
    code, out, _ = check(path, as_json=False)
    assert code == 1
    assert out.startswith("refused")
    assert "line 7" in out


@pytest.mark.corpus
def test_the_console_script_checks_the_whole_corpus(corpus_dir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dsh_inspect", "check", "--json", str(corpus_dir)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 1, "not-sessions/ holds three files that are not session logs"
    doc = json.loads(result.stdout)
    assert len(doc["refused"]) == 3
    assert all(s["verdict"]["accepted"] for s in doc["sessions"])
    assert {s["carrier"] for s in doc["sessions"]} >= {"fixture", "jsonl-zstd", "zip"}
    assert "checking" in result.stderr


def test_contexts_are_counted_by_the_form_that_rendered(tmp_path: Path) -> None:
    from tests.support.builders import LogBuilder

    b = LogBuilder()
    b.turn(1)
    b.user("x", {"kind": "plugin", "plugin": "p", "form": "snapshot", "sections": [{"name": "a", "text": "b"}]})
    b.user("x", {"kind": "plugin", "plugin": "p", "form": "snapshot", "sections": "not-a-list"})
    b.user("x", {"kind": "subagent-settled", "form": "notice", "summary": "done", "senderSessionId": "c"})
    b.user("x", {"kind": "plugin", "plugin": "p"})
    _, out, _ = check(write_log(tmp_path / "session.jsonl", b.events))
    (session,) = json.loads(out)["sessions"]
    assert session["contexts"] == {
        "instructions": 0,
        "catalog": 0,
        "snapshot": 1,
        "notice": 1,
        "relay": 0,
        "recall": 0,
        "opaque": 2,
    }


@pytest.mark.corpus
def test_corpus_context_counts(corpus_dir: Path) -> None:
    path = corpus_dir / "sessions/examples/acp-agent/tests/snapshots/agent-instructions/session.jsonl"
    _, out, _ = check(path)
    (session,) = json.loads(out)["sessions"]
    assert session["contexts"]["instructions"] >= 1 and session["contexts"]["snapshot"] >= 1


def test_check_names_the_dsh_release_whose_verdicts_it_gives_the_one_the_oracle_runs(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a/session.jsonl", two_turns().events)
    code, out, _ = check(path)
    assert code == 0
    pinned = json.loads((Path(__file__).parents[1] / "oracle" / "package.json").read_text())["dependencies"]
    assert (
        json.loads(out)["dsh"]
        == pinned["@deepseek-ai/dsh-session"]
        == pinned["@deepseek-ai/dsh-session-persistence-jsonl"]
    )
    _, text, _ = check(path, as_json=False)
    assert text.rstrip().endswith(f"verdicts as dsh {pinned['@deepseek-ai/dsh-session']} gives them")


def test_events_are_the_stored_ones_and_a_refused_log_lists_no_repairs(tmp_path: Path) -> None:
    builder = two_turns()
    builder.turn(3, close=False)
    repaired = write_log(tmp_path / "open/session.jsonl", builder.events)
    (report,) = json.loads(check(repaired)[1])["sessions"]
    assert report["verdict"]["category"] == "repaired"
    assert (report["events"], report["closers"]) == (len(builder.events), 1)  # its turn/end
    broken = [*builder.events, {"type": "step/start", "seq": len(builder.events), "time": 0, "data": None}]
    refused = write_log(tmp_path / "refused/session.jsonl", broken)
    (report,) = json.loads(check(refused)[1])["sessions"]
    assert report["verdict"]["category"] == "refused"
    assert report["events"] == len(broken), "stored events, not the closers an open turn would get"
    assert report["verdict"]["repairs"] == []
