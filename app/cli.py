"""The `dsh-inspect` command line: `check`, `serve` and `render`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import orjson

from .forms import RENDERED_FORMS, RenderedForm, project_context
from .history.session import SessionLog, load_session
from .history.transcript import transcript_rows
from .log.records import NotASessionLog
from .log.sources import Discovery, UnreadablePath, discover
from .model.rules import DSH_RELEASE
from .web.settings import Settings


def context_counts(log: SessionLog) -> dict[RenderedForm, int]:
    """The context rows of dsh's view by the form that renders (not the declared one)."""
    counts = dict.fromkeys(RENDERED_FORMS, 0)
    readable, rows = transcript_rows(log)
    for row in rows:
        if row.kind == "context" and row.outside is None:
            message = readable.event(row.seq).message
            if message is not None:
                counts[project_context(message).form] += 1
    return counts


def session_report(log: SessionLog) -> dict[str, Any]:
    """One session's entry in `check --json` (absent facts are null)."""
    verdict = log.verdict
    return {
        "path": log.source.label,
        "id": log.header.id if log.header else None,
        "carrier": log.carrier,
        "events": log.stored_count if log.header else None,  # as stored: never the closers dsh would add
        "closers": len(log.closers) if log.header else None,  # those dsh would add on resume
        "messages": log.message_count if log.header else None,
        "verdict": verdict.category,
        "accepted": verdict.accepted,
        "reason": verdict.reason,
        "location": verdict.location.describe() if verdict.location else None,
        "repairs": list(verdict.repairs),
        "diagnostics": [d.to_json() for d in log.diagnostics],
        "contexts": context_counts(log) if log.header else None,
    }


class Progress:
    """A one-line counter on stderr while many files are scanned."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = total
        self.done = 0
        self.live = stream.isatty()

    def step(self, label: str) -> None:
        self.done += 1
        if self.total < 2:
            return
        line = f"checking {self.done}/{self.total}: {label}"
        if self.live:
            self.stream.write("\r\x1b[K" + line[-150:])
        elif self.done in (1, self.total) or self.done % 50 == 0:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live and self.total >= 2:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def run_check(paths: Sequence[str], *, as_json: bool, out: TextIO, err: TextIO) -> int:
    try:
        found: Discovery = discover(list(paths))
    except UnreadablePath as exc:
        err.write(f"dsh-inspect check: {exc}\n")
        return 2
    sessions: list[dict[str, Any]] = []
    refused = [{"path": r.path, "reason": r.reason} for r in found.refused]
    for path in paths:  # a folder that holds no log at all is not a log either: say so, exit 1
        inside = os.path.join(os.path.abspath(path), "")
        if os.path.isdir(path) and not any(
            os.path.abspath(p).startswith(inside)
            for p in [*(s.path for s in found.sources), *(r.path for r in found.refused)]
        ):
            refused.append({"path": path, "reason": "no session log in this folder"})
    progress = Progress(err, len(found.sources))
    for source in found.sources:
        progress.step(source.label)
        try:
            log = load_session(source)
        except NotASessionLog as exc:
            refused.append({"path": source.label, "reason": f"{exc.reason} ({exc.location.describe()})"})
            continue
        sessions.append(session_report(log))
    progress.close()
    if as_json:
        doc = {
            "dsh": DSH_RELEASE,
            "sessions": sessions,
            "refused": refused,
            "diagnostics": [d.to_json() for d in found.diagnostics],
        }
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for d in found.diagnostics:
            out.write(f"warning: {d.location.describe()}: {d.message}\n")
        for s in sessions:
            where = f" at {s['location']}" if s["location"] else ""
            counts = (
                f"{s['events']} events, {s['messages']} messages" if s["events"] is not None else "no readable header"
            )
            out.write(f"{s['verdict']:<11} {s['path']}  ({s['carrier']}, {counts})\n")
            if s["verdict"] != "accepted":
                out.write(f"            {s['reason']}{where}\n")
            for d in s["diagnostics"]:
                if d["severity"] != "info" or s["verdict"] != "accepted":
                    loc = ", ".join(f"{k} {d[k]}" for k in ("line", "row", "offset") if d[k] is not None)
                    out.write(f"            {d['severity']}: {d['message']}" + (f" ({loc})" if loc else "") + "\n")
        for r in refused:
            out.write(f"{'not a log':<11} {r['path']}\n            {r['reason']}\n")
        total = len(sessions)
        ok = sum(1 for s in sessions if s["accepted"])
        out.write(f"{ok} of {total} session(s) accepted or repaired; {len(refused)} input(s) not session logs\n")
        out.write(f"verdicts as dsh {DSH_RELEASE} gives them\n")
    bad = any(not s["accepted"] for s in sessions) or bool(refused)
    return 1 if bad else 0


def default_paths() -> list[str]:
    """With no PATH: the bundled demo sessions, plus `$DSH_HOME/sessions` when it exists."""
    import os
    from pathlib import Path

    paths = []
    demo = Path(__file__).resolve().parent / "demo" / "sessions"
    if demo.is_dir():
        paths.append(str(demo))
    home = os.environ.get("DSH_HOME") or str(Path.home() / ".dsh")
    sessions = Path(home) / "sessions"
    if sessions.is_dir():
        paths.append(str(sessions))
    return paths


def run_serve(
    paths: Sequence[str],
    *,
    host: str,
    port: int,
    data_dir: str | None,
    settings: Sequence[Sequence[str]] = (),
    allow_hosts: Sequence[str] = (),
    err: TextIO,
) -> int:
    from dataclasses import replace

    from .web.app import create_app
    from .web.serving import bind, bound_port, server
    from .web.settings import default_data_dir
    from .web.state import compile_templates

    config = Settings(host=host, port=port, data_dir=data_dir or default_data_dir(), allowed_hosts=tuple(allow_hosts))
    try:
        discover(list(paths))
        for name, value in settings:
            config = config.with_setting(name, value)
    except (UnreadablePath, ValueError) as exc:
        err.write(f"dsh-inspect serve: {exc}\n")
        return 2
    try:
        sock = bind(host, port)  # port 0: any free one, named in the URL below
    except OSError as exc:
        err.write(f"dsh-inspect serve: cannot listen on {host}:{port}: {exc.strerror or exc}\n")
        return 2
    config = replace(config, port=bound_port(sock))
    try:
        app = create_app(list(paths) or default_paths(), config)
    except OSError as exc:
        sock.close()
        err.write(f"dsh-inspect serve: cannot use the data folder {config.data_dir}: {exc}\n")
        return 2
    compile_templates(app.state.web.templates)
    shown = f"[{host}]" if ":" in host else host
    err.write(f"dsh-inspect: serving on http://{shown}:{config.port}/ (uploads kept in {config.data_dir})\n")
    err.flush()
    server(app).run(sockets=[sock])
    return 0


def run_render(path: str, *, output: str, session: str | None, lang: str, err: TextIO) -> int:
    from .web.render import RenderError, render_path

    try:
        html = render_path(path, session=session, lang=lang)
    except (UnreadablePath, RenderError) as exc:
        err.write(f"dsh-inspect render: {exc}\n")
        return 2
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(html)
    except OSError as exc:
        err.write(f"dsh-inspect render: cannot write {output}: {exc}\n")
        return 2
    err.write(f"dsh-inspect: wrote {output}\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dsh-inspect", description="Inspect deepseek-harness session logs.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="say whether dsh would accept each log, and where each is broken")
    check.add_argument("paths", nargs="+", metavar="PATH", help="log files, folders or dsh roots")
    check.add_argument("--json", action="store_true", help="print one JSON document")
    serve = sub.add_parser("serve", help="serve the web inspector")
    serve.add_argument("paths", nargs="*", metavar="PATH", help="log files, folders or dsh roots")
    defaults = Settings()  # the server's own defaults, defined once (a light import: no web stack)
    serve.add_argument("--host", default=defaults.host, help=f"address to bind (default {defaults.host})")
    serve.add_argument(
        "--port", type=int, default=defaults.port, help=f"port (default {defaults.port}; 0 picks any free port)"
    )
    serve.add_argument(
        "--data-dir", metavar="DIR", help="where uploads are kept (default: dsh-inspect in the user's data folder)"
    )
    serve.add_argument(
        "--setting",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="change a limit, e.g. --setting max_upload_mb 512 (README, Settings)",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this host name (e.g. a LAN name); others are refused",
    )
    render = sub.add_parser("render", help="write one session as a self-contained HTML file")
    render.add_argument("path", metavar="PATH", help="a log file, or a folder, store or ZIP holding the session")
    render.add_argument("-o", "--output", required=True, metavar="FILE.html", help="the file to write")
    render.add_argument("--session", metavar="ID", help="which session, when PATH holds several (id or key)")
    render.add_argument("--lang", choices=("en", "zh"), default="en", help="interface language (default en)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    if args.command == "check":
        return run_check(args.paths, as_json=args.json, out=sys.stdout, err=sys.stderr)
    if args.command == "serve":
        return run_serve(
            args.paths,
            host=args.host,
            port=args.port,
            data_dir=args.data_dir,
            settings=args.setting,
            allow_hosts=args.allow_host,
            err=sys.stderr,
        )
    if args.command == "render":
        return run_render(args.path, output=args.output, session=args.session, lang=args.lang, err=sys.stderr)
    parser.error(f"unknown command {args.command}")  # exits with status 2
