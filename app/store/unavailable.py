"""A dependency of the server that does not answer: the catalog's database, the blobs' object store, the
search index. Raised instead of an OSError or a driver's error so no caller takes it for a missing file or
an empty answer (a wrong 404, 0 hits): the web answers 503 naming the dependency by its role alone."""

from __future__ import annotations

from typing import Literal

Role = Literal["catalog", "blobs", "index"]

# what a client is told each role is: never a URL, host or bucket
ROLE_NAMES: dict[Role, str] = {
    "catalog": "the upload catalog (PostgreSQL)",
    "blobs": "the object store holding uploads",
    "index": "the search index (PostgreSQL)",
}


class Unavailable(Exception):
    """`role` could not be asked; `detail` is for the server's log only (it may name hosts)."""

    def __init__(self, role: Role, detail: str) -> None:
        super().__init__(f"{ROLE_NAMES[role]} does not answer")
        self.role: Role = role
        self.detail = detail

    @property
    def public(self) -> str:
        """What a client is told: the role, never where it lives."""
        return f"{ROLE_NAMES[self.role]} does not answer; try again shortly"
