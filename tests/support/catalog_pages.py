"""What `Catalog.page` promises, checked the same way on either catalog (SQLite and PostgreSQL)."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from dsh_inspect.store import StoredSession, Upload

T0 = 1_790_000_000_000


def upload(n: int, at: int) -> Upload:
    digest = hashlib.sha256(f"upload {n}".encode()).hexdigest()
    sessions = tuple(
        StoredSession(digest, i, "jsonl", None, f"s{n}-{i}", orjson.dumps({"id": f"s{n}-{i}"}).decode(), "accepted")
        for i in range(1 + n % 3)
    )
    return Upload(digest, "session.jsonl", 100 + n, "jsonl", 0, at, sessions)


def digests(uploads: Any) -> list[str]:
    return [u.digest for u in uploads]


def check_pages(catalog: Any) -> None:
    """Seven uploads, three of them in one millisecond, all named alike: paged three at a time, newest first
    (ties by digest), each page where the last ended, with its counts; one past the end; and a cursor whose
    upload was deleted meanwhile, which still continues where it stood."""
    empty = catalog.page(3)
    assert (empty.uploads, empty.total, empty.newer, empty.more) == ((), 0, 0, False)
    made = [upload(n, T0 + min(n, 4) * 1000) for n in range(7)]  # uploads 4, 5 and 6 share their time
    for u in made:
        assert catalog.publish(u, lambda: None, lambda: None) is None
    newest_first = sorted(made, key=lambda u: (u.uploaded_at, u.digest), reverse=True)

    pages = []
    before: tuple[int, str] | None = None
    while True:
        page = catalog.page(3, before)
        pages.append(page)
        if not page.more:
            break
        before = (page.uploads[-1].uploaded_at, page.uploads[-1].digest)
    assert [digests(p.uploads) for p in pages] == [
        digests(newest_first[:3]),
        digests(newest_first[3:6]),
        digests(newest_first[6:]),
    ]
    assert [(p.total, p.newer, p.more) for p in pages] == [(7, 0, True), (7, 3, True), (7, 6, False)]
    by_digest = {u.digest: u for u in made}
    for p in pages:
        for u in p.uploads:
            assert u == by_digest[u.digest], "each upload as published, with every session it holds"

    assert catalog.page(7).more is False and catalog.page(6).more is True
    last = newest_first[-1]
    past = catalog.page(3, (last.uploaded_at, last.digest))
    assert (past.uploads, past.total, past.newer, past.more) == ((), 7, 7, False)

    gone = newest_first[3]
    assert catalog.remove(gone.digest, lambda *_: None)
    after = catalog.page(2, (gone.uploaded_at, gone.digest))
    assert digests(after.uploads) == digests(newest_first[4:6])
    assert (after.total, after.newer, after.more) == (6, 3, True)
