"""Incomplete multipart uploads of the team blobs, aborted once they are older than a bound.

`S3Blobs.publish` hands boto3 an upload's temp file, which goes up in parts past 8 MiB. A process killed
between the first and the last part (kill -9, a machine lost) leaves an incomplete multipart upload: no object
(S3 shows one only once whole, so nothing is half-listed), but parts that the store keeps, and AWS bills,
until the upload is completed or aborted. No later process can complete it, so the team store aborts those
under its prefix at start and, piggybacking on uploads, at most every `SWEEP_EVERY_SECONDS` afterwards.

Other processes of the same team may be uploading right now, into the same bucket and prefix: an upload is
aborted only once it is older than `STALE_AFTER_SECONDS`, measured on the store's own clock (its `Initiated`
against the `Date` of the listing, both the store's, so a skewed clock on this machine cuts nothing early).
A store that lists uploads without `Initiated` (older SeaweedFS: seaweedfs/seaweedfs#11313 added it) has
them aged from when this process first listed them: an upload seen for the bound is at least that old.

A sweep that fails (the store unreachable, no permission to list or abort multipart uploads) is logged and
tried again at the next sweep: it never fails a start or an upload.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from .blobs import fanned
from .urls import masked

log = logging.getLogger(__name__)

# Older than this, an incomplete upload is taken for one whose process died. A multipart upload starts only
# once the whole upload is on this machine's disk (its temp file), so what it waits for is the copy from here
# to the store: the largest upload allowed by default (`max_upload_mb`, 256 MiB, limits.py) takes about 4 min
# at 1 MiB/s; an hour leaves room for that at 73 KiB/s, or for a limit raised 14-fold at 1 MiB/s, with room
# for boto3's retries. Were a live upload cut all the same, its next part would fail and the upload be answered
# as storage that failed (nothing half-listed): sent again, it goes through.
STALE_AFTER_SECONDS = 3600.0
# How often, at most, a process sweeps again after its start (on its first upload once this has passed): a
# process that runs for weeks and takes uploads clears what a crashed neighbour left soon after the bound.
SWEEP_EVERY_SECONDS = 600.0


def stale_uploads(
    client: Any,
    bucket: str,
    prefix: str,
    stale_after: float,
    first_seen: dict[str, float] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[tuple[str, str]]:
    """(key, upload id) of each incomplete multipart upload of a blob key under `prefix` (`<prefix>/<2 hex>/
    <sha-256>`: whatever else shares the bucket is not ours to judge) at least `stale_after` seconds old.
    `first_seen` (upload id → `clock()` when first listed) ages uploads listed without `Initiated`; it is
    updated to hold just those listed now."""
    listed: set[str] = set()
    pages = client.get_paginator("list_multipart_uploads").paginate(
        Bucket=bucket, Prefix=f"{prefix}/" if prefix else ""
    )
    for page in pages:
        now = _store_time(page)
        for upload in page.get("Uploads", ()):
            key, upload_id = str(upload["Key"]), str(upload["UploadId"])
            if not _blob_key(key, prefix):
                continue
            listed.add(upload_id)
            initiated = upload.get("Initiated")
            if isinstance(initiated, datetime):
                if initiated.tzinfo is None:  # S3 gives UTC
                    initiated = initiated.replace(tzinfo=UTC)
                age = (now - initiated).total_seconds()
            elif first_seen is not None:
                age = clock() - first_seen.setdefault(upload_id, clock())
            else:  # no way to tell its age: left alone
                continue
            if age >= stale_after:
                yield key, upload_id
    if first_seen is not None:
        for gone in first_seen.keys() - listed:
            del first_seen[gone]


def abort_stale_uploads(
    client: Any,
    bucket: str,
    prefix: str,
    stale_after: float = STALE_AFTER_SECONDS,
    first_seen: dict[str, float] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Abort each of `stale_uploads`; how many were aborted. Raises what listing raises (botocore's errors); an
    upload that went meanwhile (completed, or aborted by another process) counts as done."""
    from botocore.exceptions import ClientError

    aborted = 0
    for key, upload_id in list(stale_uploads(client, bucket, prefix, stale_after, first_seen, clock)):
        try:
            client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "NoSuchUpload":
                raise
        aborted += 1
    return aborted


class MultipartSweep:
    """The sweep of one `S3Blobs`: `run()` at start, `when_due()` on each upload (it sweeps at most every
    `every` seconds, `time.monotonic`); safe from any thread, and never raising."""

    def __init__(
        self,
        client: Any,
        bucket: str,
        prefix: str,
        *,
        stale_after: float = STALE_AFTER_SECONDS,
        every: float = SWEEP_EVERY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client, self.bucket, self.prefix = client, bucket, prefix
        self.stale_after, self.every = stale_after, every
        self._clock = clock
        self._schedule = threading.Lock()
        self._sweeping = threading.Lock()  # one sweep at a time: they share `_first_seen`
        self._due = -math.inf
        self._first_seen: dict[str, float] = {}

    def run(self) -> int | None:
        """Sweep now; how many uploads were aborted, or None when the sweep failed (logged)."""
        with self._schedule:
            self._due = self._clock() + self.every
        return self._sweep()

    def when_due(self) -> int | None:
        """Sweep when `every` seconds have passed since the last sweep began (a caller that finds another
        sweeping goes on at once); as `run`, or None when not due."""
        with self._schedule:
            now = self._clock()
            if now < self._due:
                return None
            self._due = now + self.every
        return self._sweep()

    def _sweep(self) -> int | None:
        where = f"s3://{self.bucket}/{self.prefix}"
        with self._sweeping:
            try:
                aborted = abort_stale_uploads(
                    self.client, self.bucket, self.prefix, self.stale_after, self._first_seen, self._clock
                )
            except Exception as exc:  # whatever it was, a sweep never fails a start or an upload
                log.warning(
                    "dsh-inspect: incomplete multipart uploads under %s were not swept "
                    "(tried again on the first upload after %g s): %s: %s",
                    where,
                    self.every,
                    type(exc).__name__,
                    masked(str(exc)),
                )
                return None
        if aborted:
            log.warning(
                "dsh-inspect: aborted %d incomplete multipart upload(s) under %s, begun over %g s before "
                "(left by a process stopped mid-upload)",
                aborted,
                where,
                self.stale_after,
            )
        return aborted


def _blob_key(key: str, prefix: str) -> bool:
    """Whether `key` is where S3Blobs keeps a blob: `<prefix>/<2 hex>/<sha-256>`."""
    rest = key.removeprefix(f"{prefix}/") if prefix else key
    if prefix and rest == key:
        return False
    try:
        return fanned(rest.rsplit("/", 1)[-1]) == rest
    except ValueError:
        return False


def _store_time(page: dict[str, Any]) -> datetime:
    """The store's clock when it answered (the `Date` of its response), else this machine's."""
    date = page.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    if isinstance(date, str):
        try:
            found = parsedate_to_datetime(date)
        except (TypeError, ValueError):
            pass
        else:
            return found if found.tzinfo is not None else found.replace(tzinfo=UTC)
    return datetime.now(UTC)
