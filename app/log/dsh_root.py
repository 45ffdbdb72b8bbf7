"""A dsh persistence root (docs/format.md §1.1): `<root>/<projectKey(cwd)>/<encodeSegment(id)>/session.jsonl[.zstd]`.

A session folder may also hold `session.v<N>.jsonl[.zstd]`: the name newer dsh releases are reported to write
for a format version N after 0, next to the frozen version-0 file. Each is listed as the artifact it
is, with its generation N (0 for `session.jsonl[.zstd]`); `log.generations` tells which is current."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

from .diagnostics import Diagnostic, Location
from .jsonvalues import js_string
from .plaintext import ZSTD_MAGIC, decompress_frame, scan_frames

ARTIFACT_NAMES = ("session.jsonl.zstd", "session.jsonl")  # generation 0: the only names the pinned release reads
# a later generation's file: `session.v<N>.jsonl[.zstd]`, N a positive decimal without leading zeros
GENERATION_NAME = re.compile(r"session\.v([1-9][0-9]{0,8})\.jsonl(?:\.zstd)?")
FileVersion = tuple[int, int, int]  # size, mtime_ns, inode: what a cache keyed by file version compares
_KEPT = re.compile(r"[A-Za-z0-9._-]")
_SEPARATORS = re.compile(r"[/\\:]+")
HEADER_LINE_LIMIT = 1 << 20


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", errors="surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def encode_segment(session_id: str) -> str:
    """Injective directory name for a session id."""
    if not session_id:
        raise ValueError("empty session id")
    if session_id == ".":
        return "~002E"
    if session_id == "..":
        return "~002E~002E"
    out = []
    for unit in _utf16_units(session_id):
        ch = chr(unit) if unit < 0xD800 or unit > 0xDFFF else None
        out.append(ch if ch is not None and _KEPT.fullmatch(ch) else f"~{unit:04X}")
    return "".join(out)


def project_key(cwd: str | None) -> str:
    """Lossy, readable project directory name for a cwd (`_no-cwd` without one)."""
    if cwd is None:
        return "_no-cwd"
    if cwd == "":
        raise ValueError("empty cwd")
    out = []
    for unit in _utf16_units(_SEPARATORS.sub("-", cwd)):
        ch = chr(unit) if unit < 0xD800 or unit > 0xDFFF else None
        out.append(ch if ch is not None and ch != "~" and _KEPT.fullmatch(ch) else f"~{unit:04X}")
    slug = "".join(out).lstrip("-") or "root"
    return f"--{slug[:251]}--"


@dataclass(frozen=True, slots=True)
class RootArtifact:
    path: str
    project_dir: str
    session_dir: str
    # the version of a regular file, from the lstat that found it (None for a symbolic link),
    # so callers can tell an unchanged file without another system call
    version: FileVersion | None = None
    generation: int = 0  # the format generation its name gives (`artifact_generation`)


@dataclass(slots=True)
class RootListing:
    root: str
    artifacts: list[RootArtifact] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def artifact_generation(name: str) -> int | None:
    """The format generation a session folder's file name gives: 0 for `session.jsonl[.zstd]`, N for
    `session.v<N>.jsonl[.zstd]`; None for any other name (a `.tmp`, a sidecar), which is no artifact."""
    if name in ARTIFACT_NAMES:
        return 0
    found = GENERATION_NAME.fullmatch(name)
    return int(found.group(1)) if found else None


def resolve_root(path: str) -> str | None:
    """The persistence root at `path`: the folder itself, or its `sessions/` (a DSH_HOME)."""
    for candidate in (path, os.path.join(path, "sessions")):
        if os.path.isdir(candidate) and _looks_like_root(candidate):
            return candidate
    return None


def _is_project_dir(name: str) -> bool:
    """projectKey always yields `--<slug>--`, or `_no-cwd` for a header without cwd."""
    return name == "_no-cwd" or (len(name) > 4 and name.startswith("--") and name.endswith("--"))


def _looks_like_root(path: str) -> bool:
    try:
        projects = [e for e in os.scandir(path) if e.is_dir(follow_symlinks=False) and _is_project_dir(e.name)]
    except OSError:
        return False
    for project in projects:
        try:
            for entry in os.scandir(project.path):
                if entry.is_dir(follow_symlinks=False) and (
                    any(os.path.isfile(os.path.join(entry.path, name)) for name in ARTIFACT_NAMES)
                    or any(_artifact_file(os.path.join(entry.path, n))[0] for g, n in _session_files(entry.path) if g)
                ):
                    return True
        except OSError:
            continue
    return False


def list_root(root: str) -> RootListing:
    """Every artifact of a root, with root-level rule breaks as warnings (docs/format.md §8)."""
    listing = RootListing(root)
    encodings: set[str] = set()
    for project in sorted(os.scandir(root), key=lambda e: e.name):
        if project.name.startswith(".") or not project.is_dir(follow_symlinks=False):
            continue
        for entry in sorted(os.scandir(project.path), key=lambda e: e.name):
            if entry.is_file(follow_symlinks=False) and entry.name.endswith((".jsonl", ".jsonl.zstd")):
                listing.diagnostics.append(
                    _warn(
                        entry.path,
                        "flat-artifact",
                        "a flat legacy artifact beside the session folders; dsh refuses this layout",
                    )
                )
                continue
            if not entry.is_dir(follow_symlinks=False) or entry.name.startswith("."):
                continue
            found = [
                (n, version, generation)
                for generation, n in _session_files(entry.path)
                for is_file, version in [_artifact_file(f"{entry.path}/{n}")]
                if is_file
            ]
            for generation in sorted({g for _, _, g in found}):
                names = [n for n, _, g in found if g == generation]
                if len(names) > 1:
                    listing.diagnostics.append(
                        _warn(
                            entry.path,
                            "two-encodings",
                            f"both {names[1]} and {names[0]}: dsh wants one encoding per root",
                        )
                    )
            for name, version, generation in found:
                encodings.add("zstd" if name.endswith(".zstd") else "plain")
                listing.artifacts.append(
                    RootArtifact(f"{entry.path}/{name}", project.name, entry.name, version, generation)
                )
    if len(encodings) > 1:
        listing.diagnostics.append(
            _warn(root, "mixed-encodings", "this root mixes plain and zstd artifacts; dsh wants one encoding per root")
        )
    return listing


def _session_files(session_dir: str) -> list[tuple[int, str]]:
    """The artifact names in a session folder, each with its generation: oldest generation first, zstd before
    plain within one (as `ARTIFACT_NAMES`). One directory read, then one lstat for each name found
    (`_artifact_file`): about 4 µs a folder more than an lstat of each of the two names the pinned release
    reads (1,000 folders: 9 ms, not 4.6), where a warm W1 listing (benchmarks/) takes 20 ms against 30 ms of
    raw header reads."""
    try:
        names = os.listdir(session_dir)
    except OSError:  # a folder that may be entered but not read: the names the pinned release reads
        return [(0, n) for n in ARTIFACT_NAMES]
    found = [(g, n) for n in names if n.startswith("session.") and (g := artifact_generation(n)) is not None]
    return sorted(found, key=lambda pair: (pair[0], not pair[1].endswith(".zstd")))


def _artifact_file(path: str) -> tuple[bool, FileVersion | None]:
    """Whether `path` is a file (through a link too, like `os.path.isfile`), and a regular file's version.

    One lstat answers both for the usual regular file; listing a thousand-session
    root once cost several times the header reads it serves (benchmarks/, listing)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False, None
    if stat.S_ISREG(st.st_mode):
        return True, (st.st_size, st.st_mtime_ns, st.st_ino)
    return stat.S_ISLNK(st.st_mode) and os.path.isfile(path), None


def _warn(path: str, code: str, message: str) -> Diagnostic:
    return Diagnostic(code, "warning", message, Location(file=path))


def read_header_line(path: str) -> bytes | None:
    """Only the header: the first line, or the first zstd frame's text. None when there is none."""
    with open(path, "rb") as f:
        head = f.read(HEADER_LINE_LIMIT)
    if head.startswith(ZSTD_MAGIC):
        frames = scan_frames(head).frames
        if not frames:
            return None
        start, end = frames[0]
        try:
            text = decompress_frame(head[start:end], HEADER_LINE_LIMIT)
        except Exception:
            return None
    else:
        text = head
    nl = text.find(b"\n")
    return text[:nl] if nl >= 0 else None


def decode_segment(name: str) -> str | None:
    """The session id whose `encode_segment` is `name`, or None when no id encodes to it."""
    units: list[int] = []
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "~":
            hex4 = name[i + 1 : i + 5]
            if len(hex4) != 4 or not re.fullmatch(r"[0-9A-F]{4}", hex4):
                return None
            units.append(int(hex4, 16))
            i += 5
        elif _KEPT.fullmatch(ch):
            units.append(ord(ch))
            i += 1
        else:
            return None
    data = b"".join(unit.to_bytes(2, "little") for unit in units)
    session_id = data.decode("utf-16-le", errors="surrogatepass")
    return session_id if session_id and encode_segment(session_id) == name else None


def artifact_root(path: str) -> str | None:
    """The persistence root an artifact lies in, judged by its place:
    `<root>/<project>/<session>/session.jsonl[.zstd]` (or a later generation's `session.v<N>.jsonl[.zstd]`)."""
    session_dir = os.path.dirname(os.path.abspath(path))
    project_dir = os.path.dirname(session_dir)
    if artifact_generation(os.path.basename(path)) is None or not _is_project_dir(os.path.basename(project_dir)):
        return None
    return os.path.dirname(project_dir)


def identity_problem(root: str, path: str, header: dict[str, object]) -> str | None:
    """dsh's identity check on resume, in its words: the id asked for (the one the session folder
    encodes) must be the header's, and the header's cwd and id must lead to this very file."""
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    requested, sid, cwd = decode_segment(folder), header.get("id"), header.get("cwd")
    if requested is None:
        return f'corrupt session log "{path}": its folder name {folder!r} encodes no session id for dsh to resume'
    if sid != requested:
        return f'corrupt session log "{path}": requested id "{requested}" does not match header id "{js_string(sid)}"'
    try:
        expected = os.path.join(
            root, project_key(cwd if isinstance(cwd, str) else None), encode_segment(requested), os.path.basename(path)
        )
    except ValueError:
        return f'corrupt session log "{path}": header id cannot name a storage path'
    if os.path.realpath(path) != os.path.realpath(expected):
        return f'corrupt session log "{path}": header id "{requested}" and cwd identify "{expected}"'
    return None
