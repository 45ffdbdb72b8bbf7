"""The audit trail (docs/decisions/0020-access-control.md): token use, uploads, downloads, deletes and denied
requests, each with its time, actor, action, target, client, outcome and status, kept in the catalog for
`audit_days`, then dropped.

A token's use is recorded once a minute per token and client (a page asks for many partials); everything else
each time. Entries older than the retention go at most once an hour per process.
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
        self._used: dict[tuple[str, str], int] = {}  # (token, client): when its use was last recorded
        self._pruned = 0.0

    def record(self, actor: str, action: str, target: str, client: str, outcome: str, status: int) -> None:
        self.records.record([AuditEntry(now_ms(), actor, action, target[:2000], client, outcome, status)])
        self._prune()

    def token_used(self, name: str, actor: str, target: str, client: str) -> None:
        """Note a token's use: at most once a minute per token and client."""
        at = now_ms()
        with self._lock:
            last = self._used.get((name, client), 0)
            if at - last < USE_EVERY_MS:
                return
            self._used[(name, client)] = at
            if len(self._used) > 10_000:  # a bound on what many clients leave behind
                self._used.clear()
        self.records.used(name, at)
        self.record(actor, "token.use", target, client, "ok", 200)

    def entries(self, query: AuditQuery) -> list[AuditEntry]:
        return self.records.audit(query)

    def _prune(self) -> None:
        now = time.monotonic()
        with self._lock:
            if self._pruned and now - self._pruned < PRUNE_EVERY_S:
                return
            self._pruned = now
        self.records.forget(now_ms() - self.keep_days * DAY_MS)
