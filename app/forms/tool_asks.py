"""What a tool call asked, by tool (docs/ui.md §5.3): the view its card shows in place of the arguments' JSON.

dsh's host shows an `edit` as a diff, a shell call as its command line, a read as its target and range;
those views are computed from the call's arguments, which the log keeps, so they are derived here from the
logged arguments alone. Arguments are what the model wrote: a call whose arguments are not the shape its
tool defines has no ask (None), and its card shows the arguments' JSON as before. Nothing here drops what
the arguments say beyond the shape: the JSON twin and the raw event keep them whole
(docs/decisions/0031-tool-cards-show-what-was-asked.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, ClassVar, Literal

from ..log.jsonvalues import is_safe_int
from .jsformat import TEXT_LIMIT, utf16_len

# The longest side of an edit shown as a diff (UTF-16 units, lines): a diff costs up to the product of
# its sides' line counts, and a longer edit reads as well as its JSON, which "Show all" pages.
DIFF_CHARS = TEXT_LIMIT
DIFF_LINES = 1000
# The longest a few words are (a pattern, a URL, a description…): shown whole, where a long text is capped,
# so a longer one is not the shape its tool writes, and shows as JSON (capped, with "Show all").
FIELD_CHARS = 1000
QUERIES = 20  # web_search's queries shown, at most

DiffSign = Literal[" ", "-", "+"]


@dataclass(frozen=True, slots=True)
class DiffLine:
    sign: DiffSign  # " " a line both sides have, "-" old_string's only, "+" new_string's only
    text: str


def _joined(*words: str | None) -> str:
    """An ask's words, for search to read: one a line, the absent ones left out."""
    return "\n".join(w for w in words if w)


class _Asked:
    """What every ask has: `kind`, its template (templates/tools/<kind>.html); `long_text`, what it shows to the
    body cap; `text`, its words as search reads them."""

    __slots__ = ()
    kind: ClassVar[str]

    @property
    def long_text(self) -> str | None:
        """A command, a file's content or a program; None for an ask of a few words."""
        return None


@dataclass(frozen=True, slots=True)
class EditAsk(_Asked):
    """An `edit`: its `old_string` replaced by its `new_string` in one file, as a line diff."""

    kind: ClassVar[str] = "edit"
    path: str | None
    old: str
    new: str
    replace_all: bool

    @property
    def lines(self) -> tuple[DiffLine, ...]:
        """The diff, made when shown: search reads an edit's words without it."""
        return line_diff(self.old, self.new)

    @property
    def text(self) -> str:
        return _joined(self.old, self.new)


@dataclass(frozen=True, slots=True)
class WriteAsk(_Asked):
    """A `write`: the whole content of one file."""

    kind: ClassVar[str] = "write"
    path: str | None
    content: str

    @property
    def long_text(self) -> str | None:
        return self.content

    @property
    def text(self) -> str:
        return self.content


@dataclass(frozen=True, slots=True)
class CommandAsk(_Asked):
    """A `bash` or `pwsh` call: its command line, with what the model said it does."""

    kind: ClassVar[str] = "command"
    command: str
    description: str | None
    workdir: str | None
    background: bool  # run_in_background: the result is a job id, not the command's exit

    @property
    def long_text(self) -> str | None:
        return self.command

    @property
    def text(self) -> str:
        return _joined(self.description, self.command, self.workdir)


@dataclass(frozen=True, slots=True)
class ReadAsk(_Asked):
    """A `read` of a file (its lines from `offset`, `limit` of them) or a `web_fetch` of a URL."""

    kind: ClassVar[str] = "read"
    target: str
    url: bool
    offset: int | None
    limit: int | None

    @property
    def last(self) -> int | None:
        """The last line asked for, when both ends are known."""
        return self.offset + self.limit - 1 if self.offset is not None and self.limit is not None else None

    @property
    def text(self) -> str:
        return self.target


@dataclass(frozen=True, slots=True)
class SearchAsk(_Asked):
    """A `grep` or `glob` (a pattern, in a path, over files an include glob names) or a `web_search` (queries)."""

    kind: ClassVar[str] = "search"
    patterns: tuple[str, ...]
    scope: str | None
    include: str | None

    @property
    def text(self) -> str:
        return _joined(*self.patterns, self.scope, self.include)


@dataclass(frozen=True, slots=True)
class CodeAsk(_Asked):
    """A `run_code` call: the program, with what the model said it does."""

    kind: ClassVar[str] = "code"
    code: str
    description: str | None

    @property
    def long_text(self) -> str | None:
        return self.code

    @property
    def text(self) -> str:
        return _joined(self.description, self.code)


Ask = EditAsk | WriteAsk | CommandAsk | ReadAsk | SearchAsk | CodeAsk


def _words(value: Any) -> bool:
    """Whether `value` is a few words: a string no longer than FIELD_CHARS."""
    return isinstance(value, str) and utf16_len(value) <= FIELD_CHARS


def _string(args: Mapping[str, Any], *keys: str) -> str | None:
    """The first of `keys` that holds a few words; None when none does."""
    return next((v for k in keys if _words(v := args.get(k))), None)


def _optional_string(args: Mapping[str, Any], key: str) -> str | Literal[False] | None:
    """`key`'s few words, None when absent or empty, False when it holds something else (a shape not expected)."""
    value = args.get(key)
    if value is None or value == "":
        return None
    return value if _words(value) else False


def _line_number(args: Mapping[str, Any], key: str) -> int | Literal[False] | None:
    value = args.get(key)
    if value is None:
        return None
    return int(value) if is_safe_int(value) and value >= 1 else False


def diffable(old: str, new: str) -> bool:
    """Whether an edit is short enough to be shown as a diff."""
    short = utf16_len(old) <= DIFF_CHARS and utf16_len(new) <= DIFF_CHARS
    return short and old.count("\n") < DIFF_LINES and new.count("\n") < DIFF_LINES


def line_diff(old: str, new: str) -> tuple[DiffLine, ...]:
    """`old` against `new`, line by line: the lines both have, and each side's own. An empty side has no
    lines (an edit that deletes its match, or inserts where nothing was matched)."""
    a, b = old.split("\n") if old else [], new.split("\n") if new else []
    lines: list[DiffLine] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            lines += (DiffLine(" ", t) for t in a[i1:i2])
            continue
        lines += (DiffLine("-", t) for t in a[i1:i2])
        lines += (DiffLine("+", t) for t in b[j1:j2])
    return tuple(lines)


def _edit(args: Mapping[str, Any], path: str | None) -> Ask | None:
    old, new, replace_all = args.get("old_string"), args.get("new_string"), args.get("replace_all", False)
    if not isinstance(old, str) or not isinstance(new, str) or not isinstance(replace_all, bool):
        return None
    return EditAsk(path, old, new, replace_all) if diffable(old, new) else None


def _write(args: Mapping[str, Any], path: str | None) -> Ask | None:
    content = args.get("content")
    return WriteAsk(path, content) if isinstance(content, str) else None


def _command(args: Mapping[str, Any], path: str | None) -> Ask | None:
    command = args.get("command")
    description, workdir = _optional_string(args, "description"), _optional_string(args, "workdir")
    background = args.get("run_in_background", False)
    if not isinstance(command, str) or not command or description is False or workdir is False:
        return None
    return CommandAsk(command, description, workdir, background is True)


def _read(args: Mapping[str, Any], path: str | None) -> Ask | None:
    url = _string(args, "url")
    target = path if url is None else url  # a path as the header shows it: its first line
    offset, limit = _line_number(args, "offset"), _line_number(args, "limit")
    if not target or offset is False or limit is False:
        return None
    return ReadAsk(target, url is not None, offset, limit)


def _search(args: Mapping[str, Any], path: str | None) -> Ask | None:
    queries = args.get("queries")
    if isinstance(queries, list | tuple) and 0 < len(queries) <= QUERIES and all(_words(q) for q in queries):
        patterns: tuple[str, ...] = tuple(queries)
    else:
        pattern = _string(args, "pattern", "query")
        if not pattern:
            return None
        patterns = (pattern,)
    scope, include = _optional_string(args, "path"), _optional_string(args, "include")
    if scope is False or include is False:
        return None
    return SearchAsk(patterns, scope, include)


def _code(args: Mapping[str, Any], path: str | None) -> Ask | None:
    code, description = args.get("code"), _optional_string(args, "description")
    if not isinstance(code, str) or not code or description is False:
        return None
    return CodeAsk(code, description)


_ASKS = {
    "edit": _edit,
    "write": _write,
    "bash": _command,
    "read": _read,
    "search": _search,
    "code": _code,
}


def ask(variant: str, args: Any, path: str | None) -> Ask | None:
    """What a call of a tool of `variant` (`forms.tools.Variant`) asked, from its parsed arguments; `path` is
    the file a read, write or edit names, as its header shows it. None: show the arguments' JSON."""
    read = _ASKS.get(variant)
    return read(args, path) if read is not None and isinstance(args, dict) else None
