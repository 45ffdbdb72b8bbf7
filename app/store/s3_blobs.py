"""The team blobs: objects `<prefix>/<2 hex>/<sha-256>` in an S3-compatible store (AWS S3, MinIO, SeaweedFS),
through boto3, configured as that ecosystem expects: `s3://bucket/prefix` names the place; the endpoint,
region and credentials come from `AWS_ENDPOINT_URL`, `AWS_DEFAULT_REGION`, `AWS_ACCESS_KEY_ID` and
`AWS_SECRET_ACCESS_KEY` or boto3's usual credential chain.

An upload goes up from its local temp file (multipart past 8 MiB, as boto3 streams it); S3 makes an object
visible only once it is whole, so a process killed mid-upload leaves nothing under the digest. Readers need a
file (a SQLite store, a ZIP, `pread` windows), so a blob read here is streamed once into this machine's read
cache, `<data-dir>/cache/<2 hex>/<sha-256>`, written to a temp name and renamed: bytes under a digest never
change, so a cached copy never goes stale; it goes when the upload is deleted, or when the cache outgrows
`cache_bytes` (setting `read_cache_mb`) and it is among the least recently read. A reader that still has
the file open keeps its bytes (POSIX); a later read streams it again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .blobs import CHUNK, Received, fanned, valid_digest
from .read_cache import ReadCache
from .s3_sweep import STALE_AFTER_SECONDS, SWEEP_EVERY_SECONDS, MultipartSweep
from .unavailable import Unavailable

CONNECT_SECONDS = 5
READ_SECONDS = 30  # between two packets of one answer: a part of a large upload goes up within it


def unreachable(exc: BaseException) -> bool:
    """Whether boto3's error says the store did not answer, or answered that it cannot work now (a 5xx, a
    throttle), rather than answering about the object asked for (a missing key, a refusal)."""
    from botocore.exceptions import ClientError, ConnectionError, HTTPClientError

    if isinstance(exc, (ConnectionError, HTTPClientError)):  # refused, reset, timed out, closed early
        return True
    if isinstance(exc, ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return status >= 500 or exc.response.get("Error", {}).get("Code") in ("SlowDown", "Throttling")
    return False


def parse_s3_url(url: str) -> tuple[str, str]:
    """(bucket, prefix) of `s3://bucket/prefix`; raises ValueError."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"blobs URL {url!r} is not s3://bucket/prefix")
    return parts.netloc, parts.path.strip("/")


class S3Blobs:
    def __init__(
        self,
        url: str,
        cache: Path,
        cache_bytes: int,
        *,
        stale_after: float = STALE_AFTER_SECONDS,
        sweep_every: float = SWEEP_EVERY_SECONDS,
    ) -> None:
        import boto3  # the `team` extra: the embedded store needs none of it
        from botocore.config import Config

        self.bucket, self.prefix = parse_s3_url(url)
        # path-style addressing: MinIO and SeaweedFS serve buckets as paths, and AWS still accepts it
        # every call bounded: a store that does not answer fails its request in seconds (a 503), never hangs it
        self.client: Any = boto3.client(
            "s3",
            config=Config(
                s3={"addressing_style": "path"},
                retries={"mode": "standard", "max_attempts": 2},
                connect_timeout=CONNECT_SECONDS,
                read_timeout=READ_SECONDS,
            ),
        )
        self.cache = ReadCache(cache, cache_bytes)
        self._ensure_bucket()
        # multipart uploads a killed process left (s3_sweep.py): aborted at start, then on uploads when due
        self.multipart = MultipartSweep(
            self.client, self.bucket, self.prefix, stale_after=stale_after, every=sweep_every
        )
        self.multipart.run()

    def _ensure_bucket(self) -> None:
        from botocore.exceptions import ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket", "NotFound"):
                raise
            try:
                self.client.create_bucket(Bucket=self.bucket)
            except ClientError as race:  # another process created it first
                if race.response.get("Error", {}).get("Code") not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                    raise

    def key(self, digest: str) -> str:
        return f"{self.prefix}/{fanned(digest)}" if self.prefix else fanned(digest)

    def publish(self, received: Received) -> None:
        from boto3.exceptions import S3UploadFailedError
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.upload_file(str(received.temp), self.bucket, self.key(received.digest))
        except (S3UploadFailedError, ClientError, BotoCoreError) as exc:
            if unreachable(exc) or unreachable(exc.__context__ or exc):
                raise Unavailable("blobs", f"s3://{self.bucket}/{self.prefix} did not answer: {exc}") from exc
            raise OSError(f"s3://{self.bucket}/{self.prefix} did not keep the upload: {exc}") from exc
        self.multipart.when_due()
        self._keep_local(received)

    def _keep_local(self, received: Received) -> None:
        """The temp file becomes this machine's cached copy: the first read here downloads nothing."""
        self.cache.keep(received.digest, received.temp)

    def delete(self, digest: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.delete_object(Bucket=self.bucket, Key=self.key(digest))
        except (ClientError, BotoCoreError) as exc:
            if unreachable(exc):
                raise Unavailable("blobs", f"s3://{self.bucket}/{self.prefix} did not answer: {exc}") from exc
            raise
        self.forget_local(digest)

    def ping(self) -> None:
        """One round trip to the bucket; raises Unavailable."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except (ClientError, BotoCoreError) as exc:
            raise Unavailable("blobs", f"s3://{self.bucket} did not answer: {exc}") from exc

    def digests(self) -> Iterator[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=f"{self.prefix}/" if self.prefix else ""
        )
        for page in pages:
            for item in page.get("Contents", ()):
                name = str(item["Key"]).rsplit("/", 1)[-1]
                if valid_digest(name):
                    yield name

    def local_path(self, digest: str) -> Path:
        return self.cache.path(digest)

    def fetch(self, digest: str) -> Path:
        return self.cache.get(digest) or self.cache.fill(digest, self.chunks(digest))

    def chunks(self, digest: str) -> Iterator[bytes]:
        from botocore.exceptions import BotoCoreError, ClientError

        where = f"blob {digest} of s3://{self.bucket}/{self.prefix}"
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self.key(digest))["Body"]
        except (ClientError, BotoCoreError) as exc:
            if unreachable(exc):  # not a missing blob: a reader must not take the session for gone
                raise Unavailable("blobs", f"{where} could not be read: {exc}") from exc
            raise OSError(f"{where} could not be read: {exc}") from exc
        try:
            yield from body.iter_chunks(CHUNK)
        except (BotoCoreError, ValueError) as exc:  # the connection broke, or fewer bytes came than announced
            raise Unavailable("blobs", f"{where} stopped arriving: {exc}") from exc
        finally:
            body.close()

    def forget_local(self, digest: str) -> None:
        self.cache.forget(digest)
