"""The `dsh-inspect` command line: `check`, `serve`, `render`, `diff` and `search`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import orjson

from .commands.progress import Progress
from .forms import RENDERED_FORMS, RenderedForm, project_context
from .history.compare import IGNORABLE
from .history.session import SessionLog, load_one, load_session
from .history.spend.cost import LIBRARY_PRICES, Prices, session_cost
from .history.spend.timing import session_timing
from .history.transcript import transcript_rows
from .log.generations import session_generations
from .log.records import NotASessionLog
from .log.sources import Discovery, RecordChanged, UnreadablePath, discover
from .model.rules import DSH_RELEASE
from .settings import PRICING_FLAGS, SERVE_OPTIONS, Settings, default_data_dir, given_prices, loopback, serve_settings
from .store.access_records import ROLES


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


def session_report(log: SessionLog, prices: Prices = LIBRARY_PRICES) -> dict[str, Any]:
    """One session's entry in `check --json` (absent facts are null), its calls priced at `prices`."""
    return {
        "path": log.source.label,
        "id": log.header.id if log.header else None,
        "carrier": log.carrier,
        "events": log.stored_count if log.header else None,  # as stored: never the closers dsh would add
        "closers": len(log.closers) if log.header else None,  # those dsh would add on resume
        "messages": log.message_count if log.header else None,
        "verdict": log.verdict.to_json(),  # the shape the session's JSON twin gives it
        "diagnostics": [d.to_json() for d in log.diagnostics],
        "contexts": context_counts(log) if log.header else None,
        "durations": session_timing(log).durations_json() if log.header else None,  # the session twin's
        "cost": session_cost(log, prices).to_json() if log.header else None,
    }


def add_generations(sessions: list[dict[str, Any]], files: list[tuple[str, str | None]]) -> None:
    """Give each report of a file whose session folder holds another format generation of its session a
    `generation`: its number, whether it is the session's current state, the other generations' files, and
    the seq each older one stands "as of" (its last). Other reports are left as they were."""
    found = session_generations(files)
    by_path = {s["path"]: s for s in sessions}

    def as_of(path: str) -> int | None:
        events = by_path[path]["events"] if path in by_path else None
        return events - 1 if isinstance(events, int) and events > 0 else None

    for path, generation in found.items():
        report = by_path.get(path)
        if report is None:
            continue
        report["generation"] = {
            "number": generation.number,
            "current": generation.is_current,
            "asOfSeq": None if generation.is_current else as_of(path),
            "currentFiles": [p for p in generation.current if p != path],
            "earlier": [
                {"path": p, "number": found[p].number, "asOfSeq": as_of(p)} for p in generation.earlier if p != path
            ],
        }


def generation_line(generation: dict[str, Any]) -> str:
    """How `check` words a file's generation: the current state, or an earlier one as of its last seq."""
    if generation["current"]:
        earlier = ", ".join(
            f"{e['path']} (v{e['number']}, as of seq {e['asOfSeq'] if e['asOfSeq'] is not None else '-'})"
            for e in generation["earlier"]
        )
        return f"the session's current state: generation v{generation['number']}; earlier: {earlier}"
    seq = generation["asOfSeq"] if generation["asOfSeq"] is not None else "-"
    return (
        f"an earlier generation (v{generation['number']}) of this session, as of seq {seq}, not its current state: "
        f"that is {', '.join(generation['currentFiles'])}"
    )


def run_check(paths: Sequence[str], *, as_json: bool, out: TextIO, err: TextIO, prices: Prices = LIBRARY_PRICES) -> int:
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
    changed: list[dict[str, str]] = []  # files that changed while read: the rest are checked all the same
    progress = Progress(err, len(found.sources))
    files: list[tuple[str, str | None]] = []  # each file read, and its header's id: its generations are told apart
    for source in found.sources:
        progress.step(source.label)
        try:
            sessions.append(session_report(load_session(source), prices))
        except NotASessionLog as exc:
            refused.append({"path": source.label, "reason": f"{exc.reason} ({exc.location.describe()})"})
        except RecordChanged as exc:
            changed.append({"path": source.label, "location": exc.location.describe(), "reason": exc.reason})
        else:
            if source.member is None and source.kind in ("jsonl", "jsonl-zstd"):
                files.append((source.path, sessions[-1]["id"]))
    progress.close()
    add_generations(sessions, files)
    if as_json:
        doc = {
            "dsh": DSH_RELEASE,
            "sessions": sessions,
            "refused": refused,
            "changed": changed,
            "diagnostics": [d.to_json() for d in found.diagnostics],
        }
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for d in found.diagnostics:
            out.write(f"warning: {d.location.describe()}: {d.message}\n")
        for s in sessions:
            verdict = s["verdict"]
            where = f" at {verdict['location']}" if verdict["location"] else ""
            counts = (
                f"{s['events']} events, {s['messages']} messages" if s["events"] is not None else "no readable header"
            )
            out.write(f"{verdict['category']:<11} {s['path']}  ({s['carrier']}, {counts})\n")
            if verdict["category"] != "accepted":
                out.write(f"            {verdict['reason']}{where}\n")
            if "generation" in s:
                out.write(f"            {generation_line(s['generation'])}\n")
            for d in s["diagnostics"]:
                if d["severity"] != "info" or verdict["category"] != "accepted":
                    loc = ", ".join(f"{k} {d[k]}" for k in ("line", "row", "offset") if d[k] is not None)
                    out.write(f"            {d['severity']}: {d['message']}" + (f" ({loc})" if loc else "") + "\n")
        for r in refused:
            out.write(f"{'not a log':<11} {r['path']}\n            {r['reason']}\n")
        for c in changed:
            out.write(f"{'changed':<11} {c['location']}: {c['reason']}; the log changed while it was read\n")
        total = len(sessions)
        ok = sum(1 for s in sessions if s["verdict"]["accepted"])
        out.write(
            f"{ok} of {total} session(s) accepted or repaired; {len(refused)} input(s) not session logs"
            + (f"; {len(changed)} changed while read" if changed else "")
            + "\n"
        )
        out.write(f"verdicts as dsh {DSH_RELEASE} gives them\n")
    bad = any(not s["verdict"]["accepted"] for s in sessions) or bool(refused) or bool(changed)
    return 1 if bad else 0


def demo_path() -> str | None:
    """The bundled demo sessions (a dsh root), when this install has them."""
    from pathlib import Path

    demo = Path(__file__).resolve().parent / "demo" / "sessions"
    return str(demo) if demo.is_dir() else None


def default_paths() -> list[str]:
    """With no PATH: the bundled demo sessions, plus `$DSH_HOME/sessions` when it exists."""
    from pathlib import Path

    paths = [p for p in (demo_path(),) if p is not None]
    home = os.environ.get("DSH_HOME") or str(Path.home() / ".dsh")
    sessions = Path(home) / "sessions"
    if sessions.is_dir():
        paths.append(str(sessions))
    return paths


def served_paths(paths: Sequence[str], *, team: bool, demo: bool) -> list[str]:
    """What `serve` reads from disk. The paths given, plus the demo sessions with `--demo`. Given none: on one
    machine (no `--store`, no `--blobs`) the demo and `$DSH_HOME/sessions`; a team server shows the team's
    uploads only, and the demo only when asked for."""
    if paths:
        chosen = list(paths)
    elif team:
        chosen = []
    else:
        chosen = default_paths()
    bundled = demo_path()
    if demo and bundled is not None and bundled not in chosen:
        chosen.append(bundled)
    return chosen


def run_serve(paths: Sequence[str], settings: Settings, *, demo: bool = False, err: TextIO) -> int:
    """Serve `paths` as `settings` say (`serve_settings` makes them from the command line)."""
    from dataclasses import replace

    from .access import AccessFileError
    from .access.tokens import now_ms
    from .store.unavailable import Unavailable
    from .store.urls import masked
    from .web.access_log import AccessLogUnusable
    from .web.app import create_app
    from .web.pauses import keep_full_collections_short
    from .web.serving import bind, bound_port, mask_logs, serve_workers, server
    from .web.sign_in import SignInUnset
    from .web.state import compile_templates

    mask_logs()  # every URL this process prints or logs from here on, without its password
    host, port = settings.host, settings.port
    if not loopback(host) and not settings.access_control and not settings.no_auth:
        err.write(
            f"dsh-inspect serve: refusing to serve {host} with access control off: anyone who reaches the port "
            "would read, upload and delete every session. Turn it on with --require-auth (and make a token: "
            "dsh-inspect token create NAME --role admin), or say --no-auth to serve it open on purpose\n"
        )
        return 2
    try:
        discover(list(paths))
    except UnreadablePath as exc:
        err.write(f"dsh-inspect serve: {exc}\n")
        return 2
    try:
        sock = bind(host, port)  # port 0: any free one, named in the URL below
    except OSError as exc:
        err.write(f"dsh-inspect serve: cannot listen on {host}:{port}: {exc.strerror or exc}\n")
        return 2
    config = replace(settings, port=bound_port(sock))
    served = served_paths(paths, team=config.store is not None or config.blobs is not None, demo=demo)
    try:
        app = create_app(served, config)
    except OSError as exc:
        sock.close()
        err.write(masked(f"dsh-inspect serve: cannot use the data folder {config.data_dir}: {exc}\n"))
        return 2
    except (SignInUnset, AccessFileError, AccessLogUnusable) as exc:  # half a sign-in, a file that cannot be used
        sock.close()
        err.write(masked(f"dsh-inspect serve: {exc}\n"))
        return 2
    except Exception as exc:  # the team store's engines: a refused connection, a bad URL, no bucket rights
        sock.close()  # (the error's text may quote the URL or connection string: its password is masked)
        why = f"{exc} ({exc.detail})" if isinstance(exc, Unavailable) and exc.detail else str(exc)
        err.write(masked(f"dsh-inspect serve: cannot open the upload store: {why}\n"))
        return 2
    compile_templates(app.state.web.templates)
    access = app.state.web.access
    if config.access_control and access is not None and not any(t.usable(now_ms()) for t in access.tokens.list()):
        where = f"--store {masked(config.store)}" if config.store else f"--data-dir {config.data_dir}"
        err.write(
            "dsh-inspect: access control is on and no token can sign in yet; make one with: "
            f"dsh-inspect token create NAME --role admin {where}\n"
        )
    shown = f"[{host}]" if ":" in host else host
    kept = " and ".join(masked(u) for u in (config.store, config.blobs) if u) or config.data_dir
    err.write(f"dsh-inspect: serving on http://{shown}:{config.port}/ (uploads kept in {kept})\n")
    err.flush()
    if config.workers > 1:
        del app  # it checked the store and the paths; each worker builds its own
        serve_workers(served, config, sock)
    else:
        one = server(app)
        mask_logs()  # uvicorn's own handlers, which its Config has just set up
        keep_full_collections_short()
        one.run(sockets=[sock])
    return 0


def run_render(path: str, *, output: str, session: str | None, lang: str, err: TextIO) -> int:
    from .web.render import RenderError, export_path

    try:
        pieces = export_path(path, session=session, lang=lang)
    except (UnreadablePath, RenderError) as exc:
        err.write(f"dsh-inspect render: {exc}\n")
        return 2
    part = f"{output}.part"  # written a window of rows at a time, and in place only once whole
    try:
        with open(part, "w", encoding="utf-8") as f:
            f.writelines(pieces)
        os.replace(part, output)
    except OSError as exc:
        err.write(f"dsh-inspect render: cannot write {output}: {exc}\n")
        return 2
    finally:
        if os.path.exists(part):
            os.unlink(part)
    err.write(f"dsh-inspect: wrote {output}\n")
    return 0


# --- `diff`: where two sessions parted ---------------------------------


def run_diff(a: str, b: str, *, as_json: bool, ignore: Sequence[str], out: TextIO, err: TextIO) -> int:
    """0 when the two logs recorded the same conversation, 1 when they differ, 2 when one cannot be read."""
    from .history.compare import compare_logs, comparison_json, divergence_lines

    try:
        log_a, log_b = load_one(a), load_one(b)
        comparison = compare_logs(log_a, log_b, ignore)
    except ValueError as exc:
        err.write(f"dsh-inspect diff: {exc}\n")
        return 2
    for name, log in (("a", log_a), ("b", log_b)):
        if not log.verdict.accepted:  # compared all the same, as far as it reads
            where = f" ({log.verdict.location.describe()})" if log.verdict.location else ""
            err.write(f"dsh-inspect diff: warning: {name} is {log.verdict.category}: {log.verdict.reason}{where}\n")
    if as_json:
        doc = {"a": log_a.source.label, "b": log_b.source.label, **comparison_json(comparison)}
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(f"a: {log_a.source.label}\nb: {log_b.source.label}\n")
        out.write("".join(line + "\n" for line in divergence_lines(comparison)))
    return 0 if comparison.same else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dsh-inspect", description="Inspect deepseek-harness session logs.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="say whether dsh would accept each log, and where each is broken")
    check.add_argument("paths", nargs="+", metavar="PATH", help="log files, folders or dsh roots")
    check.add_argument("--json", action="store_true", help="print one JSON document")
    for option in SERVE_OPTIONS:  # its `cost` priced as a server given the same options prices it
        if option.flag in PRICING_FLAGS:
            option.add_to(check)
    serve = sub.add_parser("serve", help="serve the web inspector")
    serve.add_argument("paths", nargs="*", metavar="PATH", help="log files, folders or dsh roots")
    for option in SERVE_OPTIONS:  # declared once, with the README's rows, in settings.py (a light import)
        option.add_to(serve)
    render = sub.add_parser("render", help="write one session as a self-contained HTML file")
    render.add_argument("path", metavar="PATH", help="a log file, or a folder, store or ZIP holding the session")
    render.add_argument("-o", "--output", required=True, metavar="FILE.html", help="the file to write")
    render.add_argument("--session", metavar="ID", help="which session, when PATH holds several (id or key)")
    render.add_argument("--lang", choices=("en", "zh"), default="en", help="interface language (default en)")
    diff = sub.add_parser("diff", help="compare two session logs: where they parted, and what the model read")
    diff.add_argument("a", metavar="A", help="a session log file")
    diff.add_argument("b", metavar="B", help="the session log to compare it with")
    diff.add_argument("--json", action="store_true", help="print the whole comparison as one JSON document")
    diff.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="PART",
        help=f"leave a part out: {', '.join(IGNORABLE)}, tool_result:NAME (tool_result:* for every tool)",
    )
    token = sub.add_parser(
        "token",
        help="API tokens for scripts, CI and push: create, list, revoke",
        description="API tokens in the catalog a server uses: name it as `serve` does (--data-dir, --store).",
    )
    actions = token.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="make a token; its secret is printed once, on the last line")
    create.add_argument("name", metavar="NAME", help="its name: letters, digits, '.', '_' or '-'")
    create.add_argument("--role", required=True, choices=ROLES, help='what it may do (README "Access")')
    create.add_argument(
        "--project",
        action="append",
        default=[],
        metavar="P",
        help="only sessions of this project (a header's cwd); repeatable; none: every project",
    )
    create.add_argument("--expires", type=int, metavar="DAYS", help="refused after this many days (default: never)")
    listing = actions.add_parser("list", help="every token: name, role, projects, expiry, last use")
    listing.add_argument("--json", action="store_true", help="print one JSON document")
    revoke = actions.add_parser("revoke", help="refuse a token from now on, in every process")
    revoke.add_argument("name", metavar="NAME")
    for each in (create, listing, revoke):
        for option in SERVE_OPTIONS:
            if option.flag in ("--data-dir", "--store"):
                option.add_to(each)
    push = sub.add_parser(
        "push",
        help="send sessions to a server: only what it does not hold, a grown log's new bytes alone",
        description="Send every session under PATH... (dsh roots, session folders, log files) to the server at "
        "--to: a log the server holds a start of as its new bytes, anything else whole. The API token is read "
        "from $DSH_INSPECT_TOKEN or --token-file, never from the command line. Exit status: 0 when the "
        "server holds every session, 1 when it refused one, 2 for a usage or connection error.",
    )
    push.add_argument("paths", nargs="+", metavar="PATH", help="dsh roots, session folders or log files")
    push.add_argument("--to", required=True, metavar="URL", help="the server, e.g. https://inspect.example.com")
    push.add_argument("--token-file", metavar="FILE", help="a file holding the API token")
    push.add_argument("--watch", action="store_true", help="keep running, pushing each change within a second")
    push.add_argument("--json", action="store_true", help="print one JSON object: sessions, sent, bytes, …")
    push.add_argument("--verify", action="store_true", help="hash every log again instead of trusting the state file")
    push.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="TEXT",
        help="label every upload this push sends (a CI job's id; repeat for more, at most 20): the server's list "
        "filters by it (/?label=TEXT), and a log the server holds already gains it too",
    )
    search = sub.add_parser(
        "search",
        help="find rows across sessions: prompts, replies, reasoning, tools, commands, errors, contexts",
        description="Find rows across every session under PATH... Prints `path  anchor  snippet` per matching "
        "row (the anchor opens it: /sessions/KEY?at=ANCHOR). Exit status: 0 when a row matches, 1 when none "
        "does, 2 for a path that cannot be read.",
    )
    search.add_argument("query", metavar="QUERY", help="a phrase, matched anywhere in a row, any case; no operators")
    search.add_argument("paths", nargs="+", metavar="PATH", help="log files, folders or dsh roots")
    search.add_argument("--json", action="store_true", help="print one JSON document")
    search.add_argument("--kind", default="", metavar="KIND", help="only rows of this kind (e.g. tool-call, context)")
    search.add_argument("--form", default="", metavar="FORM", help="only context rows of this form (e.g. instructions)")
    search.add_argument("--tool", default="", metavar="NAME", help="only calls of this tool")
    search.add_argument("--errors", action="store_true", help="only rows that report an error")
    search.add_argument(
        "--index",
        metavar="FILE",
        help="the index file, kept between runs so only changed logs are read again "
        "(default: dsh-inspect/search-index.sqlite3 in the user's cache folder)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; Ctrl-C (or SIGINT) stops any command with a line and status 130, not a traceback."""
    try:
        return run_command(argv)
    except KeyboardInterrupt:
        sys.stderr.write("\ndsh-inspect: interrupted\n")
        return 130  # as a shell reports a command SIGINT ended
    except RecordChanged as exc:  # a file changed under a command reading it: where, in one line
        sys.stderr.write(f"dsh-inspect: {exc}\n")
        return 2


def run_command(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    if args.command == "check":
        try:
            prices = given_prices(vars(args))
        except ValueError as exc:  # a bad prices file or currency, refused before any log is read
            sys.stderr.write(f"dsh-inspect check: {exc}\n")
            return 2
        return run_check(args.paths, as_json=args.json, out=sys.stdout, err=sys.stderr, prices=prices)
    if args.command == "serve":
        try:
            settings = serve_settings(vars(args))
        except ValueError as exc:  # a bad --setting, refused before anything is bound
            sys.stderr.write(f"dsh-inspect serve: {exc}\n")
            return 2
        return run_serve(args.paths, settings, demo=args.demo, err=sys.stderr)
    if args.command == "render":
        return run_render(args.path, output=args.output, session=args.session, lang=args.lang, err=sys.stderr)
    if args.command == "diff":
        return run_diff(args.a, args.b, as_json=args.json, ignore=args.ignore, out=sys.stdout, err=sys.stderr)
    if args.command == "token":
        from .commands.tokens import run_token

        return run_token(
            args.action,
            data_dir=args.data_dir or default_data_dir(),
            store=args.store or None,
            name=getattr(args, "name", None),
            role=getattr(args, "role", "viewer"),
            projects=getattr(args, "project", ()),
            expires=getattr(args, "expires", None),
            as_json=getattr(args, "json", False),
            out=sys.stdout,
            err=sys.stderr,
        )
    if args.command == "push":
        from .commands.push import run_push

        return run_push(
            args.paths,
            to=args.to,
            token_file=args.token_file,
            as_json=args.json,
            watch=args.watch,
            verify=args.verify,
            labels=args.label,
            out=sys.stdout,
            err=sys.stderr,
        )
    if args.command == "search":
        from .commands.search import run_search

        return run_search(
            args.query,
            args.paths,
            kind=args.kind,
            form=args.form,
            tool=args.tool,
            errors=args.errors,
            index_path=args.index,
            as_json=args.json,
            out=sys.stdout,
            err=sys.stderr,
        )
    parser.error(f"unknown command {args.command}")  # exits with status 2
