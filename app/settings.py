"""Server settings, Datasette style: each `serve` option and each named setting declared once, with its default,
type and help; the CLI's flags and the README's tables are made from (or checked against) those declarations."""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
import sys
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .forms.jsformat import TEXT_LIMIT
from .history.spend.cost import Prices, prices_from
from .log.plaintext import DEFAULT_LIMITS, ReadLimits
from .sessions.caches import CACHE_MB
from .store.limits import MIB, READ_CACHE_MB, LimitName, Limits
from .store.pg_connections import Waits

if TYPE_CHECKING:
    import argparse


def _bracketed(host: str) -> str:
    """An IPv6 address as a Host header spells it."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


@functools.cache
def _machine_names() -> frozenset[str]:
    """This machine's host names and the addresses they resolve to (asked once per process)."""
    names = {socket.gethostname(), socket.getfqdn()}
    addresses: set[str] = set()
    for name in names:
        try:
            addresses |= {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
        except OSError:
            continue
    return frozenset(_bracketed(n.lower()) for n in names | addresses if n)


def loopback(host: str) -> bool:
    """Whether `host` is this machine's loopback only: `localhost`, 127.0.0.0/8, `::1`."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def setting(default: int, help: str, *, limit: LimitName | None = None) -> Any:
    """A setting `serve --setting NAME VALUE` changes: its default, type (the field's) and help, in one place."""
    return field(default=default, metadata={"default": default, "help": help, "limit": limit})


@dataclass(frozen=True, slots=True)
class Option:
    """One `serve` option, declared once: its flag with its `--help` line (`add_to`) and its row in the README's
    options tables (`readme_row`) are both made from it. The help is Markdown, read in both places (`--help`
    drops the backticks). The type is the default's: a switch (bool), a number (int), one word (str, or None
    for none given), or a word given again for each value (tuple; a tuple `metavar` names each one's words)."""

    flag: str  # "--store"
    default: Any  # what `serve` runs with when neither the flag nor its environment variable is given
    help: str
    metavar: str | tuple[str, ...] | None = None
    env: str | None = None  # the environment variable that stands in for the flag, if any
    shown: str | None = None  # the default as the README and `--help` word it, when not the value itself
    then: Callable[[Any], Any] | None = None  # what `serve` makes of the value given, e.g. an empty URL: none
    sets: str | None = None  # the `Settings` field it sets; None for what `serve` takes itself (`--demo`)

    @property
    def dest(self) -> str:
        return self.sets or self.flag.removeprefix("--").replace("-", "_")

    @property
    def usage(self) -> str:
        """The option as one types it: `--store URL`, `--setting NAME VALUE`."""
        words = (self.metavar,) if isinstance(self.metavar, str) else self.metavar or ()
        return " ".join((self.flag, *words))

    @property
    def default_text(self) -> str:
        if self.shown is not None:
            return self.shown
        return "" if self.default is None or self.default is False or self.default == () else str(self.default)

    def help_text(self) -> str:
        """`--help`'s line: the help, then the environment variable and the default, as plain text."""
        said = [f"env {self.env}"] if self.env else []
        if self.default_text:
            said.append(f"default: {self.default_text}")
        text = self.help + (f" ({'; '.join(said)})" if said else "")
        return text.replace("`", "").replace("%", "%%")

    def readme_row(self) -> str:
        """Its row in a README options table: | option | environment | default | what it names |."""
        cells = (f"`{self.usage}`", f"`{self.env}`" if self.env else "", self.default_text, self.help)
        return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """This option on `serve`'s parser; its environment variable, when set, stands in for the default."""
        more: dict[str, Any] = {"metavar": self.metavar} if self.metavar else {}
        if isinstance(self.default, bool):
            more["action"] = "store_true"
        elif isinstance(self.default, tuple):
            more.update(action="append", default=[])
            if isinstance(self.metavar, tuple):
                more["nargs"] = len(self.metavar)
        else:
            more["default"] = (os.environ.get(self.env) if self.env else None) or self.default
            if isinstance(self.default, int):
                more["type"] = int
        parser.add_argument(self.flag, dest=self.dest, help=self.help_text(), **more)

    def value(self, given: Any) -> Any:
        """What `serve` runs with, from what the parser made of this option."""
        value = tuple(given) if isinstance(given, list) else given
        return self.then(value) if self.then else value


def option(flag: str, default: Any, help: str, *, in_process: Any = MISSING, **more: Any) -> Any:
    """A `Settings` field that a `serve` option sets: its flag, default, type (the default's) and help, in one place.
    `in_process`, when given, is the field's own default, what an app built in process (the test servers, the
    pytest plugin) runs with, where `serve` runs with `default`."""
    own = default if in_process is MISSING else in_process
    return field(default=own, metadata={"option": Option(flag, default, help, **more)})


@dataclass(frozen=True, slots=True)
class Settings:
    """How a server runs. The fields made by `option` are `serve`'s options (with `SERVE_OPTIONS`); the
    fields made by `setting` are its named settings (Datasette style): documented in the README's "Settings"
    table, changed by `serve --setting NAME VALUE`."""

    host: str = option(
        "--host", "127.0.0.1", "address to bind; `0.0.0.0` or `::` binds every interface", metavar="HOST"
    )
    port: int = option(
        "--port", 8000, "port to bind; `0` takes any free port, named in the URL printed", metavar="PORT"
    )
    # Extra Host header values to accept besides the bound address and localhost
    # (DNS-rebinding defence: anything else is refused).
    allowed_hosts: tuple[str, ...] = option(
        "--allow-host",
        (),
        "also answer requests for this host name (a LAN name, a load balancer's); others are refused; repeatable",
        metavar="NAME",
    )
    # Where uploads are kept (blobs and catalog); None serves no uploads (`serve` always names one).
    data_dir: str | None = option(
        "--data-dir",
        None,
        "where uploads are kept: content-addressed blobs and a SQLite catalog. With a team store, this machine's "
        "scratch only: uploads while they arrive (`tmp/`), a read cache of blobs (`cache/`) and of uploads stored "
        "as a base and its new bytes, assembled (`assembled/`), each at most `--setting read_cache_mb`, "
        f"{READ_CACHE_MB // 1024} GiB by default; never shared",
        metavar="DIR",
        shown="`dsh-inspect` in the user's data folder",
        then=lambda given: given or default_data_dir(),
    )
    # The team store (README "Run it for a team"): a PostgreSQL catalog and S3-compatible blobs; None keeps
    # each in --data-dir (SQLite, files). --data-dir still holds arriving uploads and the team's read cache.
    store: str | None = option(
        "--store",
        None,
        "the upload catalog, for a team: `postgresql://user@host:port/db`, in libpq's form, so `PGPASSWORD` and "
        "`~/.pgpass` work",
        metavar="URL",
        env="DSH_INSPECT_STORE",
        shown="SQLite in `--data-dir`",
        then=lambda given: given or None,
    )
    blobs: str | None = option(
        "--blobs",
        None,
        "the uploaded bytes, for a team: `s3://bucket/prefix`; endpoint, region and credentials from "
        "`AWS_ENDPOINT_URL`, `AWS_DEFAULT_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` or boto3's usual "
        "chain (profiles, instance roles); the bucket is created when missing",
        metavar="URL",
        env="DSH_INSPECT_BLOBS",
        shown="files in `--data-dir`",
        then=lambda given: given or None,
    )
    require_auth: bool = option(
        "--require-auth",
        False,
        "turn access control on: every route but `/auth/*`, `/healthz`, `/readyz` and static files needs an API "
        "token (`dsh-inspect token create`) sent as `Authorization: Bearer …` or signed in at `/auth/sign-in`",
        shown="off on loopback",
    )
    no_auth: bool = option(
        "--no-auth",
        False,
        "serve beyond loopback with access control off: anyone who reaches the port reads, uploads and deletes "
        "everything, and every page says so",
        shown="off",
    )
    # Signing people in (docs/decisions/0021-sign-in.md): an issuer turns access control on, on any address.
    oidc_issuer: str | None = option(
        "--oidc-issuer",
        None,
        "sign people in with this OpenID Connect provider (its issuer URL); turns access control on, loopback "
        "included; the client secret from `DSH_INSPECT_OIDC_CLIENT_SECRET`; redirect URI `{base}/auth/callback`",
        metavar="URL",
        env="DSH_INSPECT_OIDC_ISSUER",
        then=lambda given: given or None,
    )
    oidc_client_id: str | None = option(
        "--oidc-client-id",
        None,
        "this server's client id at the provider",
        metavar="ID",
        env="DSH_INSPECT_OIDC_CLIENT_ID",
        then=lambda given: given or None,
    )
    oidc_roles_claim: str = option(
        "--oidc-roles-claim",
        "groups",
        "the ID token claim listing a person's groups, which `--access` maps to roles and projects",
        metavar="CLAIM",
    )
    access_file: str | None = option(
        "--access",
        None,
        "a TOML file mapping groups to a role and projects (README \"Sign in with the company's identity "
        'provider"); without it a signed-in person is granted nothing',
        metavar="FILE",
        env="DSH_INSPECT_ACCESS",
        then=lambda given: given or None,
    )
    public_url: str | None = option(
        "--public-url",
        None,
        "the address people reach this server at, behind a proxy (`https://inspect.example.com`): the sign-in "
        "redirect URI is made from it, and an `https` one marks the session cookie Secure",
        metavar="URL",
        shown="the address each request names",
        then=lambda given: given.rstrip("/") if given else None,
    )
    workers: int = option(
        "--workers",
        1,
        "serve from N uvicorn worker processes sharing the one port",
        metavar="N",
        then=lambda given: max(1, given),
    )
    # Each request, logged once answered (web/access_log.py): `serve` writes the log to stderr unless told
    # otherwise; an app built in process (the test servers, the pytest plugin's client) logs nothing.
    access_log: str | None = option(
        "--access-log",
        "-",
        "where to log each request once answered, one JSON line each (its route's template, never the URL asked "
        "for): `-` for stderr, a file to append to, or `off`",
        metavar="FILE",
        env="DSH_INSPECT_ACCESS_LOG",
        shown="`-` (stderr)",
        then=lambda given: None if given in ("", "off") else given,
        in_process=None,
    )
    # What a model call cost (docs/decisions/0030-time-and-prices.md): a team's own prices, another currency
    prices_file: str | None = option(
        "--prices",
        None,
        "a JSON file of your own prices per million tokens in USD, ahead of genai-prices' own: "
        '`[{"model", "route"?, "input", "output", "cacheRead"?, "cacheWrite"?}]`',
        metavar="FILE",
        then=lambda given: given or None,
    )
    currency: str | None = option(
        "--currency",
        None,
        "show amounts in another currency at a stated rate, `CODE=RATE` (units of it per USD), e.g. `EUR=0.92`",
        metavar="CODE=RATE",
        shown="USD",
        then=lambda given: given or None,
    )
    max_upload_mb: int = setting(256, "Largest upload accepted, in MiB (the bytes sent).", limit="max_upload_bytes")
    max_decompressed_mb: int = setting(
        DEFAULT_LIMITS.max_session_bytes // MIB,
        "Most one upload may decompress to, in MiB: zstd frames, the ZIP members read, a SQLite store's zstd "
        "data blobs. Counted as they stream, so a bomb is refused early. One session's decoded text is read no "
        "further than this either, uploaded or served.",
        limit="max_decompressed_bytes",
    )
    max_line_mb: int = setting(
        DEFAULT_LIMITS.max_line_bytes // MIB,
        "Longest line a session's reader decodes, in MiB (a JSONL record, a SQLite row's data): a longer one "
        "is never held whole; reading stops before it with a located finding, and the verdict says this reader "
        "could not judge the log (unsupported). A line within it takes about three times its size to read.",
    )
    max_sessions_per_upload: int = setting(
        1000,
        "Most sessions one upload may hold (a SQLite store, an export ZIP); a ZIP may list at most ten times as "
        "many entries.",
        limit="max_sessions_per_upload",
    )
    window_rows: int = setting(
        60,
        "Rows a session page renders per window, and messages a model view lists per window; the others load "
        "as the reader scrolls or asks.",
    )
    first_screen_events: int = setting(
        2000,
        "A log not read yet shows its first window from this many leading events; the verdict and counts follow "
        "once it is read whole.",
    )
    cache_mb: int = setting(
        CACHE_MB,
        "Most the server keeps of the sessions it has read, in MiB (an estimate): each one's index, first "
        "screen, rows, search text and model views. Past it the least recently used go, to be read again when "
        "asked for; the session in use always stays.",
    )
    read_cache_mb: int = setting(
        READ_CACHE_MB,
        "Most a server keeps on its own disk of copies it reads uploads from, in MiB, for each of two folders of "
        "`--data-dir`: `cache/`, blobs streamed once from a team's object store, and `assembled/`, uploads stored"
        " as a base and the bytes after it, put together once. Past this the least recently read copies go, to be"
        " made again when asked for. An embedded upload stored whole is read from the store itself: no copy, no "
        "bound.",
    )
    database_seconds: int = setting(
        10,
        "The longest a team server waits for PostgreSQL on any one call, in seconds (a statement's answer; a new "
        "connection gets half as long, at least a second). Past it that request answers 503 naming the catalog or "
        "the search index, so a stopped or unreachable database never holds a server's threads. Taking the lock of "
        "an upload another process is storing waits as long as that takes.",
    )
    database_connections: int = setting(
        10,
        "Connections to PostgreSQL each team server process keeps at most, for its catalog and again for its "
        "search index; a request finding none free within the connect wait answers 503.",
    )
    index_workers: int = setting(
        2,
        "Processes that read sessions for the cross-session search index when 64 or more need indexing at once "
        "(the first search over a large root); 1 reads them in the server's own process. Give it the cores "
        "the server may take. A log of 4 MiB or more is read by a niced process of the server's own either way.",
    )
    list_wait_ms: int = setting(
        1000,
        "How long the session list, sorted or filtered by a fact of the read (tokens, turns, verdict, a title), "
        "waits, in ms, for sessions not read yet (read in the background at a lower CPU priority, two at a time per "
        "process; only for those small enough to be read in that time, the smallest first) before it answers with "
        "those read and says how many are still being read; it shows them once they are.",
    )
    search_wait_ms: int = setting(
        2000,
        "How long a search waits, in ms, for the sessions that arrived or changed since the last to be indexed "
        "(in the background, by one worker of each process) before it answers with what is indexed and says how "
        "many sessions are still pending; it never indexes them itself.",
    )
    body_cap: int = setting(
        TEXT_LIMIT,
        "Longest body a transcript row shows at first, in UTF-16 code units (as JavaScript counts them); "
        '"Show all" loads the rest in place. Context bodies keep dsh\'s own 20,000.',
    )

    audit_days: int = setting(
        90, "Days the audit trail keeps an entry (token use, uploads, downloads, deletes, denied requests)."
    )
    token_attempts: int = setting(
        10,
        "Failed token attempts a client may make in a minute (per server process); past it, its requests that "
        "carry a token get 429 until the minute has passed.",
    )

    upload_mb_per_hour: int = setting(
        4096,
        "Most one client may upload in an hour, in MiB (counted per server process), coming back as the hour goes "
        "and at most one largest upload (`max_upload_mb`) at once; past it an upload is refused with 429 and "
        "`Retry-After`, so no one uploader fills the store or keeps every process reading for everyone.",
    )
    max_stored_gb: int = setting(
        1024,
        "Most the store may hold, in GiB, counted as the uploads' sizes (an upload stored as the bytes after another "
        "counts whole); past it an upload is refused with 507 until some are deleted.",
    )
    max_project_gb: int = setting(
        256,
        "Most one project's uploads may hold, in GiB (a project is a session header's `cwd`; an upload counts whole "
        "towards each project it holds a session of); past it an upload of that project is refused with 507, so no "
        "one project fills the store for the others.",
    )
    live_streams_per_client: int = setting(
        32,
        "Live tails one client may hold open at once (a page open on a session holds one); past it, another is "
        "refused with 429 until one closes.",
    )
    requests_per_client: int = setting(
        2,
        "Requests of one client the server works on at once, per process (a live tail counts while it reads); "
        "its others wait their turn, so no one client opening many at once takes every worker from the others, "
        "nor most of the process's time from a person whose page asks for one thing.",
    )
    server_seconds_per_minute: int = setting(
        15,
        "Seconds of a server process's time one client may take in a minute (while n requests are in flight, "
        "each is charged 1/n of each second); past it, its requests get 429 and `Retry-After` until enough of the "
        "minute has passed, so no one client slows everyone's pages. Static files and health probes are not "
        "counted, and of a live tail only its work (not the time it waits open).",
    )
    session_hours: int = setting(
        12,
        "Hours a sign-in through the identity provider lasts; then the session cookie is refused and the "
        "person signs in again.",
    )

    @property
    def access_control(self) -> bool:
        """Whether requests need an identity (docs/decisions/0020-access-control.md): asked for, or implied by
        signing people in (docs/decisions/0021-sign-in.md)."""
        return self.require_auth or self.oidc_issuer is not None

    @property
    def open_beyond_loopback(self) -> bool:
        """Served to other machines with access control off (`--no-auth`): every page says so."""
        return not self.access_control and not loopback(self.host)

    def host_allowed(self, host_header: str | None) -> bool:
        if not host_header:
            return False
        host = host_header.strip().lower()
        names = {
            _bracketed(self.host.lower()),
            "127.0.0.1",
            "localhost",
            "[::1]",
            *(_bracketed(h.lower()) for h in self.allowed_hosts),
        }
        if self.host in ("0.0.0.0", "::"):
            # every interface, but still no DNS rebinding: the names and addresses of this machine
            names |= _machine_names()
        return any(host in (name, f"{name}:{self.port}") for name in names)

    def limits(self) -> Limits:
        return Limits(
            self.max_upload_mb * MIB,
            self.max_decompressed_mb * MIB,
            self.max_sessions_per_upload,
            self.max_line_mb * MIB,
        )

    def waits(self) -> Waits:
        """How long a team server waits for PostgreSQL, and with how many connections."""
        seconds = max(1, self.database_seconds)
        return Waits(statement=seconds, connect=max(1.0, seconds / 2), connections=max(1, self.database_connections))

    def prices(self) -> Prices:
        """How model calls are priced: `--prices` and `--currency`, read once; ValueError naming what is wrong."""
        return _prices(self.prices_file, self.currency)

    def read_limits(self) -> ReadLimits:
        """What every session this server reads is read within, uploaded or served."""
        return self.limits().read_limits()

    def with_setting(self, name: str, value: str) -> Settings:
        """`--setting NAME VALUE`; raises ValueError naming the problem."""
        if not any(d.name == name for d in SETTINGS):
            raise ValueError(f"unknown setting {name!r}; known: {', '.join(d.name for d in SETTINGS)}")
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"setting {name} needs a whole number, not {value!r}") from None
        if number < 1:
            raise ValueError(f"setting {name} must be at least 1")
        change: dict[str, Any] = {name: number}  # every named setting is an int field
        return replace(self, **change)

    def raise_hint(self, limit: LimitName) -> tuple[str, str]:
        """The setting behind a store limit, and how to raise it."""
        doc = next(d for d in SETTINGS if d.limit == limit)
        now = getattr(self, doc.name)
        return doc.name, f"{doc.name} is {now}; raise it with: dsh-inspect serve --setting {doc.name} {now * 4}"


@dataclass(frozen=True, slots=True)
class SettingDoc:
    name: str
    default: int
    help: str
    limit: LimitName | None  # the upload store limit it sets, if any


# Every named setting, read off the fields that `setting` made.
SETTINGS: tuple[SettingDoc, ...] = tuple(
    SettingDoc(f.name, f.metadata["default"], f.metadata["help"], f.metadata["limit"])
    for f in fields(Settings)
    if "help" in f.metadata
)

# Every `serve` option, in `--help`'s order: the fields that `option` made, then the two `serve` takes itself.
# The CLI adds each to its parser; the README's options tables hold each one's row (a test checks both).
SERVE_OPTIONS: tuple[Option, ...] = (
    *(replace(f.metadata["option"], sets=f.name) for f in fields(Settings) if "option" in f.metadata),
    Option(
        "--demo",
        False,
        "also serve the bundled demo sessions; a server given no PATH and neither `--store` nor `--blobs` serves "
        "them anyway",
        shown="off",
    ),
    Option(
        "--setting",
        (),
        'change a named setting (a limit or a size: README "Settings"), e.g. `--setting max_upload_mb 512`; repeatable',
        metavar=("NAME", "VALUE"),
    ),
)


def serve_settings(given: Mapping[str, Any]) -> Settings:
    """The `Settings` a `serve` command line asks for (`given`: its parsed options, by `dest`): each field's
    option, then each `--setting NAME VALUE` in turn. Raises ValueError naming a bad setting."""
    settings = Settings(**{o.sets: o.value(given[o.dest]) for o in SERVE_OPTIONS if o.sets is not None})
    for name, value in given["setting"]:
        settings = settings.with_setting(name, value)
    settings.prices()  # a bad prices file or currency is refused before anything is bound
    return settings


# The serve options `check` takes too: its `cost` priced as the server's twins price it.
PRICING_FLAGS = ("--prices", "--currency")


def given_prices(given: Mapping[str, Any]) -> Prices:
    """How a command line that takes `PRICING_FLAGS` (`given`: its parsed options, by `dest`) prices model calls,
    as `Settings.prices` does for `serve`. Raises ValueError naming a bad prices file or currency."""
    chosen = {o.sets: o.value(given[o.dest]) for o in SERVE_OPTIONS if o.flag in PRICING_FLAGS}
    return _prices(chosen["prices_file"], chosen["currency"])


@functools.cache
def _prices(path: str | None, currency: str | None) -> Prices:
    try:
        own = Path(path).read_bytes() if path else None
    except OSError as exc:
        raise ValueError(f"--prices {path}: {exc.strerror}") from None
    return prices_from(own, currency)


def default_data_dir() -> str:
    """The user's data directory, as each platform names it, plus `dsh-inspect`."""
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return str(base / "dsh-inspect")


def default_cache_dir() -> str:
    """The user's cache directory, as each platform names it, plus `dsh-inspect`: what can be made again
    (the command line's search index)."""
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Caches"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local") / "Temp"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    return str(base / "dsh-inspect")
