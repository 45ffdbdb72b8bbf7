"""The audit trail (docs/decisions/0020-access-control.md): token use, uploads, downloads, deletes and denied
requests, each with its time, actor, action, target, client, outcome and status, kept in the catalog for
`audit_days`, then dropped.

A token's use is recorded once a minute per token and client (a page asks for many partials), and so is a
request refused with no identity, or past the failed-attempt limit (anyone can send those without end);
everything else each time. Entries older than the retention go at most once an hour per process.
"""

from __future__ import annotations

import threading
import time

from ..store.access_records import AccessRecords, AuditEntry, AuditQuery
from .tokens import DAY_MS, now_ms

USE_EVERY_MS = 60_000
PRUNE_EVERY_S = 3600.0


class Auditor:
    def __init__(self, records: AccessRecords, keep_days: int) -> None:
        self.records = records
        self.keep_days = keep_days
        self._lock = threading.Lock()
        self._seen: dict[tuple[object, ...], int] = {}  # what is recorded once a minute: when it last was
        self._pruned = 0.0

    def record(self, actor: str, action: str, target: str, client: str, outcome: str, status: int) -> None:
        self.records.record([AuditEntry(now_ms(), actor, action, target[:2000], client, outcome, status)])
        self._prune()

    def token_used(self, name: str, actor: str, target: str, client: str) -> None:
        """Note a token's use: at most once a minute per token and client."""
        at = now_ms()
        if not self._first_in_minute(("token", name, client), at):
            return
        self.records.used(name, at)
        self.record(actor, "token.use", target, client, "ok", 200)

    def denied(self, actor: str, action: str, target: str, client: str, status: int, *, every: bool) -> None:
        """Record a refused request: `every` one (a token refused: the failed-attempt limit bounds how many),
        else the first of its kind in a minute per client (no identity at all, or past the limit: anyone who
        reaches the port can send those without end, and each would cost the catalog a write)."""
        if every or self._first_in_minute(("denied", actor, status, client), now_ms()):
            self.record(actor, action, target, client, "denied", status)

    def _first_in_minute(self, what: tuple[object, ...], at: int) -> bool:
        with self._lock:
            if at - self._seen.get(what, 0) < USE_EVERY_MS:
                return False
            if len(self._seen) > 10_000:  # a bound on what many clients leave behind
                self._seen.clear()
            self._seen[what] = at
            return True

    def entries(self, query: AuditQuery) -> list[AuditEntry]:
        return self.records.audit(query)

    def _prune(self) -> None:
        now = time.monotonic()
        with self._lock:
            if self._pruned and now - self._pruned < PRUNE_EVERY_S:
                return
            self._pruned = now
        self.records.forget(now_ms() - self.keep_days * DAY_MS)
