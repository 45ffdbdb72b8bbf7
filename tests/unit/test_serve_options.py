"""`serve`'s options are declared once (`SERVE_OPTIONS` in settings.py, Datasette style): the parser's flags,
their `--help`, the `Settings` they make and the README's options rows all come from that one declaration, so
an option added later cannot drift from its documentation."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

import pytest
from dsh_inspect.cli import build_parser
from dsh_inspect.settings import SERVE_OPTIONS, SETTINGS, Settings, default_data_dir, serve_settings

README = Path(__file__).resolve().parents[2] / "README.md"
HEADER = "| option | environment | default | what it names |"


def serve_parser() -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices["serve"]


def parse(*argv: str) -> Settings:
    """The settings `dsh-inspect serve ARGV` runs with."""
    return serve_settings(vars(build_parser().parse_args(["serve", *argv])))


def readme_tables() -> list[list[str]]:
    """The README's options tables in "Serve, upload, keep and export" and "Run it for a team": each its rows."""
    sections = [s for s in README.read_text().split("\n## ") if s.startswith(("Serve, upload", "Run it for a team"))]
    assert len(sections) == 2
    tables: list[list[str]] = []
    for section in sections:
        lines = section.splitlines()
        for n, line in enumerate(lines):
            if line == HEADER:
                assert lines[n + 1] == "|---|---|---|---|"
                rows = lines[n + 2 :]
                tables.append(rows[: next((i for i, r in enumerate(rows) if not r.startswith("|")), len(rows))])
    return tables


def test_every_serve_flag_is_a_declared_option() -> None:
    actions = [a for a in serve_parser()._actions if a.option_strings and a.dest != "help"]
    assert [a.option_strings for a in actions] == [[o.flag] for o in SERVE_OPTIONS], "no flag but the declared"
    for action, option in zip(actions, SERVE_OPTIONS, strict=True):
        assert (action.dest, action.metavar, action.help) == (option.dest, option.metavar, option.help_text())
    assert [o.flag for o in SERVE_OPTIONS] == [
        "--host",
        "--port",
        "--allow-host",
        "--data-dir",
        "--store",
        "--blobs",
        "--require-auth",
        "--no-auth",
        "--oidc-issuer",
        "--oidc-client-id",
        "--oidc-roles-claim",
        "--access",
        "--public-url",
        "--workers",
        "--access-log",
        "--prices",
        "--currency",
        "--demo",
        "--setting",
    ]


def test_every_settings_field_is_an_option_or_a_named_setting() -> None:
    by_option = [o.sets for o in SERVE_OPTIONS if o.sets is not None]
    assert sorted([*by_option, *(d.name for d in SETTINGS)]) == sorted(f.name for f in fields(Settings))
    for option in SERVE_OPTIONS:
        if option.sets == "access_log":  # `serve` logs to stderr; an app built in process (tests) logs nothing
            assert (Settings().access_log, option.default) == (None, "-")
        elif option.sets is not None:
            assert getattr(Settings(), option.sets) == option.default, option.flag


def test_every_readme_option_row_is_made_from_its_declaration() -> None:
    tables = readme_tables()
    assert len(tables) == 2, "one table in each section"
    declared = {o.flag: o for o in SERVE_OPTIONS}
    rows = [row for table in tables for row in table]
    flags = [row.split("`")[1].split()[0] for row in rows]
    assert sorted(flags) == sorted(declared), "each serve option has one README row, and every row one option"
    for flag, row in zip(flags, rows, strict=True):
        made = declared[flag].readme_row()
        assert row == made, f"README's row for {flag} is not the declaration's; it reads:\n{made}"


def test_the_command_line_makes_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_INSPECT_STORE", raising=False)
    monkeypatch.delenv("DSH_INSPECT_BLOBS", raising=False)
    monkeypatch.delenv("DSH_INSPECT_ACCESS_LOG", raising=False)
    assert parse() == Settings(data_dir=default_data_dir(), access_log="-")
    monkeypatch.setenv("DSH_INSPECT_BLOBS", "s3://dsh-sessions/uploads")
    given = parse(
        *("--host", "::", "--port", "0", "--allow-host", "inspect.internal", "--allow-host", "box"),
        *("--data-dir", "/srv/dsh", "--store", "postgresql://inspect@db/inspect", "--workers", "0"),
        *("--setting", "window_rows", "30", "--setting", "body_cap", "500", "--demo"),
    )
    assert given == Settings(
        host="::",
        port=0,
        allowed_hosts=("inspect.internal", "box"),
        data_dir="/srv/dsh",
        store="postgresql://inspect@db/inspect",
        blobs="s3://dsh-sessions/uploads",  # as the environment names it
        workers=1,  # at least one
        access_log="-",  # stderr, unless told otherwise
        window_rows=30,
        body_cap=500,
    )
    assert parse("--blobs", "s3://other").blobs == "s3://other", "the flag over the environment"
    monkeypatch.setenv("DSH_INSPECT_STORE", "")
    assert parse("--blobs", "").blobs is None and parse().store is None, "an empty URL names no store"
    with pytest.raises(ValueError, match="unknown setting 'max_rows'"):
        parse("--setting", "max_rows", "1")
    assert parse("--access-log", "off").access_log is None, "off: no access log"
    assert parse("--access-log", "/var/log/a.jsonl").access_log == "/var/log/a.jsonl"
    monkeypatch.setenv("DSH_INSPECT_ACCESS_LOG", "off")
    assert parse().access_log is None and parse("--access-log", "-").access_log == "-"


def test_help_reads_each_option_as_declared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "2000")  # one line per option: nothing wrapped at a hyphen
    text = serve_parser().format_help()
    for option in SERVE_OPTIONS:
        assert option.usage in text and option.help_text() in text
    assert "`" not in text
    assert "--host HOST           address to bind; 0.0.0.0 or :: binds every interface (default: 127.0.0.1)" in text
    assert "(env DSH_INSPECT_STORE; default: SQLite in --data-dir)" in text
    assert "(env DSH_INSPECT_BLOBS; default: files in --data-dir)" in text
    assert "(default: 8000)" in text and "(default: 1)" in text
    assert "(default: dsh-inspect in the user's data folder)" in text
    assert "(env DSH_INSPECT_ACCESS_LOG; default: - (stderr))" in text
