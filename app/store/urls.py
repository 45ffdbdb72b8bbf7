"""Store URLs as a server may print or log them: with no password in them.

`serve` and `token` name the catalog and the blobs they use, and say why a store could not be opened; a
driver's error text may quote the URL or the libpq connection string it was given. Every such text goes out
through `masked`, which hides each password it holds and keeps the rest (scheme, user, host, port, path), so
the line still says which store was meant.
"""

from __future__ import annotations

import re

MASK = "***"

# `scheme://user:` and the rest of the text up to whitespace: a password, when an `@` follows (`_userinfo`)
_AUTHORITY = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:\S*")

# `password=…` in a URL's query (`?password=…&sslmode=…`) or a libpq connection string (`password='a b'`),
# and any key naming a secret the same way (`sslpassword`, `secret_key`, `token`): up to the next `&`, `;`,
# `,`, space or quote, or a quoted value whole.
_SECRET_KEY = re.compile(
    r"(?P<head>(?<![\w.-])[\w.-]*(?:password|passwd|secret|token)[\w.-]*\s*=\s*)"
    r"(?P<value>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s&;,'\"]+)",
    re.IGNORECASE,
)


def masked(text: str) -> str:
    """`text` (a URL, or a message quoting URLs or connection strings) with every password replaced by
    `***`: `postgresql://u:s3cret@db:5432/x` → `postgresql://u:***@db:5432/x`, `password=s3cret` →
    `password=***`. A URL without a password comes back unchanged."""
    if "=" not in text and "@" not in text:
        return text
    text = _AUTHORITY.sub(_userinfo, text)
    return _SECRET_KEY.sub(lambda m: m["head"] + MASK, text)


def _userinfo(found: re.Match[str]) -> str:
    """`scheme://user:password@host…` with the password masked. The password ends at the last `@` before the
    path, as urllib and libpq both read the authority (so one with a raw `@` or `?` is masked whole); with no
    `@` there, at the last `@` before whitespace, so one with a raw `/` is masked whole too (a URL with an `@`
    in its path, a rare thing, loses the host and path instead: masked too much, never too little). No `@`
    at all: no password, the text is left as it was."""
    token = found[0]
    head = token.index(":", token.index("://") + 3) + 1
    authority = token[: token.find("/", head)] if "/" in token[head:] else token
    end = authority.rfind("@")
    if end < 0:
        end = token.rfind("@")
    if end <= head:  # no `@`, or `user:@host`: an empty password, nothing to hide
        return token
    return token[:head] + MASK + token[end:]
