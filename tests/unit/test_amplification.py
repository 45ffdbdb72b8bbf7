"""Hostile files within the upload limits (issue 15): millions of tiny records from a few hundred bytes,
one line longer than `max_line_mb`, a SQLite data blob that expands past it, a session's text past
`max_decompressed_mb`, an export ZIP of thousands of members. Each is read by `check`, `render` and an
upload's reading: a located finding, never a traceback, and a peak memory bounded by what is kept."""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import orjson
import pytest
import zstandard
from dsh_inspect.cli import main, run_check
from dsh_inspect.history.session import SessionLog, load_session
from dsh_inspect.log.diagnostics import FINDINGS_LISTED
from dsh_inspect.log.jsonl import TAIL_LISTED
from dsh_inspect.log.plaintext import MIB, ReadLimits
from dsh_inspect.log.sources import SessionSource, discover
from dsh_inspect.store.contents import read_contents
from dsh_inspect.store.limits import Limits

from tests.support.bombs import (
    big_blob_sqlite,
    long_line_jsonl,
    long_line_text,
    long_line_zip,
    long_line_zstd,
    many_blobs_sqlite,
    subagents_zip,
    tiny_records_jsonl,
    tiny_records_zstd,
    title_line,
)
from tests.support.builders import header
from tests.support.process import PROJECT
from tests.support.writers import header_line

BASELINE = 250 * MIB  # a Python process with the reader imported, and room to spare on a loaded machine
LINE_LIMIT = "is over the 64 MiB line limit (setting max_line_mb): not read"


def only_source(path: Path) -> SessionSource:
    found = discover([str(path)])
    assert len(found.sources) == 1, found
    return found.sources[0]


def read(path: Path, limits: ReadLimits | None = None) -> SessionLog:
    source = only_source(path)
    return load_session(source) if limits is None else load_session(source, limits=limits)


def codes(log: SessionLog) -> list[str]:
    return [d.code for d in log.diagnostics]


# Linux keeps a process's high-water mark across exec: a child forked by this test process (hundreds of MiB
# into a full run) would report at least this process's size. A small Python parent starts the command and
# writes its peak to a file.
_MEASURE = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_rss(*args: str) -> tuple[int, bytes]:
    """The peak resident bytes of `python -m dsh_inspect ARGS` run to its end, and what it printed."""
    with tempfile.TemporaryDirectory() as folder:
        peak_file = Path(folder) / "peak"
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(peak_file), sys.executable, "-m", "dsh_inspect", *args],
            cwd=PROJECT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
        )
        return int(peak_file.read_text()) * 1024, done.stdout


def check_json(path: Path) -> dict:
    out, err = io.StringIO(), io.StringIO()
    run_check([str(path)], as_json=True, out=out, err=err)
    assert "Traceback" not in err.getvalue()
    return orjson.loads(out.getvalue())


# -- many tiny records ------------------------------------------------------------------------------


def test_two_million_tiny_records_from_a_kilobyte_are_read_for_the_verdict_and_listed_in_part(tmp_path: Path) -> None:
    bomb = tiny_records_zstd(tmp_path / "tiny.jsonl.zstd", 2_000_000)
    assert bomb.stat().st_size < 2000
    log = read(bomb)
    # the first `{}` is the defect (no seq), inside a complete frame: dsh refuses the log there
    assert log.verdict.category == "refused"
    assert log.verdict.location is not None and log.verdict.location.line == 2
    assert len(log.tail) == TAIL_LISTED
    told = [d for d in log.diagnostics if d.code == "tail-unlisted"]
    assert len(told) == 1
    assert told[0].message.startswith(f"{2_000_000 - TAIL_LISTED:,} more lines after the defect at line 2, ")
    assert told[0].location.line == TAIL_LISTED + 2


def test_a_null_record_far_in_the_unlisted_tail_is_still_refused_as_dsh_refuses_it(tmp_path: Path) -> None:
    path = tiny_records_zstd(tmp_path / "nulls.jsonl.zstd", 3000)
    with path.open("ab") as f:
        f.write(zstandard.ZstdCompressor().compress(b"null\n"))
    log = read(path)
    assert any(d.code == "null-record" and d.location.line == 3002 for d in log.diagnostics)


@pytest.mark.parametrize("record", [b'{"type":"x","seq":7}', b"{", b"[]", b"1"])
@pytest.mark.parametrize("spelt", [b"turn/end", b"turn\\/\\u0065nd"])
def test_a_turn_end_far_in_the_unlisted_tail_still_makes_the_defect_committed(
    tmp_path: Path, record: bytes, spelt: bytes
) -> None:
    """The tail is tested in C for the bytes a turn/end must hold; an escape in its type is one of them."""
    path = tiny_records_jsonl(tmp_path / "session.jsonl", 5000, record=record)
    with path.open("ab") as f:
        f.write(b'{"type":"%s","seq":9,"time":1,"data":{}}\n' % spelt)
    log = read(path)
    assert log.verdict.category == "refused"
    assert "is followed by a turn/end at line 5002" in log.verdict.reason


def test_a_seq_after_thousands_of_lines_that_are_no_event_makes_the_log_an_artifact(tmp_path: Path) -> None:
    """Lines that cannot be objects (or are copies of one JSON.parse refused) are passed over when the mode
    is sniffed, not passed by: the first line that carries a seq still decides it."""
    for record in (b"[]", b"{", b"  7"):
        path = tiny_records_jsonl(tmp_path / "session.jsonl", 5000, record=record)
        with path.open("ab") as f:
            f.write(b'{"type":"x/y","seq":0,"time":1,"data":{}}\n')
        assert read(path).carrier == "jsonl", record  # an artifact
        path = tiny_records_jsonl(tmp_path / "session.jsonl", 5000, record=record)
        with path.open("ab") as f:
            f.write(b'{"type":"x/y","time":1,"data":{}}\n')
        assert read(path).carrier == "fixture", record


def test_findings_of_one_kind_are_listed_up_to_a_bound_and_the_rest_counted(tmp_path: Path) -> None:
    # a fixture: every `{}` is an event of dsh's view, with no type, so each breaks two rules
    path = tiny_records_jsonl(tmp_path / "fixture.jsonl", FINDINGS_LISTED + 500)
    log = read(path)
    assert log.verdict.category == "unsupported" and log.event_count == FINDINGS_LISTED + 500
    assert codes(log).count("unknown-type") == FINDINGS_LISTED
    unlisted = [d for d in log.diagnostics if d.code == "unlisted"]
    assert {d.message.split(",")[0] for d in unlisted} == {
        "500 more unknown-type findings",
        "500 more validation findings",
    }
    assert all(d.location.line == FINDINGS_LISTED + 2 for d in unlisted)


@pytest.mark.slow  # two million records read by a `check` process whose memory is measured
def test_check_of_tiny_records_answers_in_bounded_memory(tmp_path: Path) -> None:
    bomb = tiny_records_zstd(tmp_path / "tiny.jsonl.zstd", 2_000_000)
    peak, out = peak_rss("check", "--json", str(bomb))
    report = orjson.loads(out)
    assert report["sessions"][0]["verdict"]["category"] == "refused"
    decoded = 2_000_000 * 3
    assert peak < 3 * decoded + BASELINE, peak


# -- one line too long ------------------------------------------------------------------------------


@pytest.mark.parametrize("carrier", ["jsonl", "zstd", "zip"])
def test_a_line_over_the_line_limit_is_a_located_finding_and_what_precedes_it_reads(
    tmp_path: Path, carrier: str
) -> None:
    write = {"jsonl": long_line_jsonl, "zstd": long_line_zstd, "zip": long_line_zip}[carrier]
    path = write(tmp_path / f"long.{carrier}", 3 * MIB, before=2)
    log = read(path, ReadLimits(max_line_bytes=MIB))
    assert log.verdict.category == "unsupported"
    assert log.verdict.reason == "line 4 is over the 1 MiB line limit (setting max_line_mb): not read"
    assert log.verdict.location is not None and log.verdict.location.line == 4
    assert log.stored_count == 2  # the two events before it; nothing of it or after it
    assert [log.event(s).data["title"] for s in range(2)] == ["a" * 8, "a" * 8]


@pytest.mark.parametrize("carrier", ["jsonl", "zstd", "zip"])
def test_a_line_of_just_the_limit_reads_and_one_byte_more_does_not(tmp_path: Path, carrier: str) -> None:
    write = {"jsonl": long_line_jsonl, "zstd": long_line_zstd, "zip": long_line_zip}[carrier]
    title = MIB - (len(b"".join(title_line(1, 0))) - 1)  # so that line 3, LF aside, is 1 MiB long
    log = read(write(tmp_path / f"fits.{carrier}", title), ReadLimits(max_line_bytes=MIB))
    assert log.verdict.category == "accepted", log.verdict.reason
    assert log.stored_count == 3 and len(log.event(1).data["title"]) == title
    log = read(write(tmp_path / f"over.{carrier}", title + 1), ReadLimits(max_line_bytes=MIB))
    assert log.verdict.reason == "line 3 is over the 1 MiB line limit (setting max_line_mb): not read"


def test_a_long_line_in_a_torn_final_frame_is_found_too(tmp_path: Path) -> None:
    text = b"".join(long_line_text(3 * MIB, before=2))
    first = text.index(b"\n") + 1
    torn = zstandard.ZstdCompressor(write_checksum=True).compress(text[first:])[:-64]  # cut short: EOF mid-frame
    path = tmp_path / "torn.jsonl.zstd"
    path.write_bytes(zstandard.ZstdCompressor().compress(text[:first]) + torn)
    log = read(path, ReadLimits(max_line_bytes=MIB))
    assert log.verdict.reason == "line 4 is over the 1 MiB line limit (setting max_line_mb): not read"
    assert log.stored_count == 2 and "torn-frame" in codes(log)


def test_a_first_line_over_the_limit_leaves_no_header_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"type":"session","id":"' + b"x" * (2 * MIB) + b'"}\n')
    log = read(path, ReadLimits(max_line_bytes=MIB))
    assert log.header is None and log.verdict.category == "unsupported"
    assert log.verdict.reason == "line 1 is over the 1 MiB line limit (setting max_line_mb): not read"


def titles(count: int) -> bytes:
    """A header line and `count` small valid events, 100 bytes of title each."""
    return header_line(header("many-titles")) + b"".join(b"".join(title_line(i, 100)) for i in range(count))


@pytest.mark.slow  # 6 MiB decoded four ways
@pytest.mark.parametrize("framing", ["frames", "one-stream"])
def test_a_session_past_the_decoded_limit_reads_up_to_it(tmp_path: Path, framing: str) -> None:
    text = titles(40_000)  # about 6 MiB
    path = tmp_path / "many.jsonl.zstd"
    if framing == "frames":  # as dsh writes them: each frame declares its size
        lines = text.splitlines(keepends=True)
        batches = [lines[:1]] + [lines[i : i + 1000] for i in range(1, len(lines), 1000)]
        path.write_bytes(b"".join(zstandard.ZstdCompressor().compress(b"".join(b)) for b in batches))
    else:  # one frame that does not say how large it is
        first = text.index(b"\n") + 1
        with path.open("wb") as f:
            f.write(zstandard.ZstdCompressor().compress(text[:first]))
            with zstandard.ZstdCompressor().stream_writer(f, closefd=False) as w:
                w.write(text[first:])
    limits = ReadLimits(max_session_bytes=MIB)
    log = read(path, limits)
    assert log.verdict.category == "unsupported"
    assert log.verdict.reason == (
        "the decoded text is over the 1 MiB limit for one session (setting max_decompressed_mb): not read from here on"
    )
    assert 0 < log.stored_count * 140 < MIB  # what came before the limit reads
    member = tmp_path / "export.zip"
    with zipfile.ZipFile(member, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("session.jsonl", text)
    log = read(member, limits)
    assert log.verdict.reason.startswith("the decoded text is over the 1 MiB limit") and log.stored_count > 0
    assert read(path).verdict.category == "accepted"


@pytest.mark.slow  # a gigabyte decoded by `check` and `render` processes
def test_check_and_render_of_a_gigabyte_line_stay_within_the_line_limit(tmp_path: Path) -> None:
    bomb = long_line_zstd(tmp_path / "long.jsonl.zstd", 1000 * MIB)
    assert bomb.stat().st_size < 100_000
    peak, out = peak_rss("check", "--json", str(bomb))
    session = orjson.loads(out)["sessions"][0]
    verdict = session["verdict"]
    assert verdict["category"] == "unsupported" and verdict["reason"] == f"line 3 {LINE_LIMIT}"
    assert session["events"] == 1
    assert peak < 3 * 64 * MIB + BASELINE, peak
    peak, out = peak_rss("render", str(bomb), "-o", str(tmp_path / "long.html"))
    assert b"Traceback" not in out
    assert f"line 3 {LINE_LIMIT}" in (tmp_path / "long.html").read_text()
    assert peak < 3 * 64 * MIB + BASELINE, peak


@pytest.mark.slow  # 200 MiB decoded twice
def test_a_zip_member_with_a_long_line_is_read_as_an_upload_without_holding_it(tmp_path: Path) -> None:
    bomb = long_line_zip(tmp_path / "export.zip", 200 * MIB)
    found = read_contents(str(bomb), "export.zip", Limits())
    assert [s.verdict for s in found.sessions] == ["unsupported"]
    verdict = check_json(bomb)["sessions"][0]["verdict"]
    assert verdict["reason"] == f"line 3 {LINE_LIMIT}" and verdict["location"].endswith("line 3, byte 198")


# -- SQLite data blobs ------------------------------------------------------------------------------


@pytest.mark.slow  # 100 MiB, and a `check` process whose memory is measured
def test_a_sqlite_data_blob_over_the_line_limit_is_not_decoded_past_it(tmp_path: Path) -> None:
    store = big_blob_sqlite(tmp_path / "store.sqlite", 100 * MIB)
    assert store.stat().st_size < 200_000
    found = read_contents(str(store), "store.sqlite", Limits())  # within max_decompressed_mb, so accepted
    assert [s.verdict for s in found.sessions] == ["unsupported"]
    verdict = check_json(store)["sessions"][0]["verdict"]
    assert verdict["reason"] == f"row seq 0's data {LINE_LIMIT}"
    peak, _ = peak_rss("check", str(store))
    assert peak < 3 * 64 * MIB + BASELINE, peak


def test_a_sqlite_sessions_rows_stop_decoding_at_the_session_limit(tmp_path: Path) -> None:
    """Small blobs add up: the row whose data crosses max_decompressed_mb is not parsed, and it is told
    where; the rows before it read."""
    store = many_blobs_sqlite(tmp_path / "store.sqlite", 40, MIB)
    assert store.stat().st_size < 100_000
    log = read(store, ReadLimits(max_session_bytes=8 * MIB))
    assert log.event_count == 7  # each blob a little over 1 MiB: the eighth crosses 8 MiB
    finding = next(d for d in log.diagnostics if d.code == "too-large")
    assert "over the 8 MiB limit for one session (setting max_decompressed_mb)" in finding.message
    assert finding.location.row == 7
    assert read(store).event_count == 40  # within the default limit


def test_render_of_hostile_files_writes_a_page(tmp_path: Path) -> None:
    for bomb in (
        tiny_records_zstd(tmp_path / "tiny.jsonl.zstd", 100_000),
        big_blob_sqlite(tmp_path / "store.sqlite", 80 * MIB),
        long_line_zip(tmp_path / "export.zip", 80 * MIB),
    ):
        out = tmp_path / f"{bomb.name}.html"
        assert main(["render", str(bomb), "-o", str(out)]) == 0
        assert "<html" in out.read_text()


# -- ZIP archives of many members -----------------------------------------------------------------------


def test_a_zip_of_many_members_is_opened_a_few_times_however_many_members_it_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading member by member reparsed the whole central directory for each: quadratic in the members."""
    opened: list[str] = []
    real = zipfile.ZipFile.__init__

    def counting(self: zipfile.ZipFile, file: object, *args: object, **kwargs: object) -> None:
        opened.append(str(file))
        real(self, file, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(zipfile.ZipFile, "__init__", counting)
    counts = []
    for n in (50, 400):
        opened.clear()
        bomb = subagents_zip(tmp_path / f"subagents-{n}.zip", n)
        found = read_contents(str(bomb), bomb.name, Limits())
        assert len(found.sessions) == n + 1 and {s.verdict for s in found.sessions} == {"accepted"}
        counts.append(len([p for p in opened if p == str(bomb)]))
    assert counts[0] == counts[1] < 10, counts
