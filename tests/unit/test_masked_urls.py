"""No secret in what `serve` and `token` print or log: every URL's password is masked (`store.urls.masked`),
in the lines they write themselves and in the error texts they pass on."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dsh_inspect.store.urls import masked
from dsh_inspect.web.serving import MaskedSecrets

from tests.support.process import PROJECT

SECRET = "s3cret"


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("postgresql://u:s3cret@db:5432/inspect", "postgresql://u:***@db:5432/inspect"),
        ("postgres://u:s3cret@db/inspect?sslmode=require", "postgres://u:***@db/inspect?sslmode=require"),
        ("postgresql://u:s3cret@[::1]:5432/db", "postgresql://u:***@[::1]:5432/db"),
        ("postgresql://u:s3cret@h1:5432,h2:5433/db", "postgresql://u:***@h1:5432,h2:5433/db"),  # libpq's many hosts
        ("postgresql://:s3cret@db/x", "postgresql://:***@db/x"),  # a password and no user
        ("postgresql://u:s3%40cret@db/x", "postgresql://u:***@db/x"),  # percent-encoded
        ("postgresql://u:s3c@ret@db/x", "postgresql://u:***@db/x"),  # a raw `@`: to the last one, as urllib reads it
        ("postgresql://u:s3c?ret@db/x", "postgresql://u:***@db/x"),  # a raw `?`: libpq reads on to the `@`
        ("postgresql://u:s3/cret@db/x", "postgresql://u:***@db/x"),  # a raw `/`: masked whole all the same
        ("postgresql://u:s3cret@db", "postgresql://u:***@db"),  # no path
        ("s3://key:s3cret@bucket/prefix", "s3://key:***@bucket/prefix"),
        ("postgresql://db/x?password=s3cret&sslmode=require", "postgresql://db/x?password=***&sslmode=require"),
        ("postgresql://db/x?user=u&password=s3cret", "postgresql://db/x?user=u&password=***"),
        ("postgresql://db/x?sslpassword=s3cret", "postgresql://db/x?sslpassword=***"),
        ("postgresql://db/x?PASSWORD=s3cret", "postgresql://db/x?PASSWORD=***"),
        ("host=db port=5432 password=s3cret dbname=x", "host=db port=5432 password=*** dbname=x"),  # libpq's keywords
        ("host=db password='s3 cret' dbname=x", "host=db password=*** dbname=x"),
        ("host=db password = s3cret", "host=db password = ***"),
    ],
)
def test_a_password_is_masked_and_the_rest_kept(given: str, shown: str) -> None:
    assert masked(given) == shown
    assert masked(shown) == shown, "masking again changes nothing"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://inspect@db.internal:5432/inspect",  # no password: PGPASSWORD or ~/.pgpass
        "postgresql://db.internal/inspect",
        "postgresql://[::1]:5432/db",
        "postgresql://u:@db/x",  # an empty password: nothing to hide
        "s3://dsh-sessions/uploads",
        "sqlite:///srv/dsh/catalog.sqlite3",
        "https://login.example.com/realms/eng",
        "/srv/dsh-inspect",
        "",
    ],
)
def test_a_url_without_a_password_is_unchanged(url: str) -> None:
    assert masked(url) == url


def test_every_url_in_a_message_is_masked() -> None:
    said = (
        "store URL 'postgress://u:s3cret@db/x': use postgresql://user@host:port/db; "
        'missing "=" after "postgresql://a:other-secret@h:1/db" in connection info string, '
        "and redis://:third@cache:6379/0 too"
    )
    assert masked(said) == (
        "store URL 'postgress://u:***@db/x': use postgresql://user@host:port/db; "
        'missing "=" after "postgresql://a:***@h:1/db" in connection info string, '
        "and redis://:***@cache:6379/0 too"
    )


def test_a_log_record_is_masked_traceback_and_all() -> None:
    try:
        raise ValueError("cannot reach postgresql://u:s3cret@db/x")
    except ValueError:
        record = logging.LogRecord(
            "dsh_inspect.x", logging.WARNING, __file__, 1, "opening %s failed", ("postgresql://u:s3cret@db/x",),
            sys.exc_info(),
        )  # fmt: skip
    assert MaskedSecrets().filter(record)
    text = logging.Formatter().format(record)
    assert SECRET not in text
    assert "opening postgresql://u:***@db/x failed" in text and "cannot reach postgresql://u:***@db/x" in text


def dsh_inspect(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dsh_inspect", *args],
        check=False,
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow  # `serve` and `token` processes, a store that never answers
def test_serve_and_token_never_print_the_password_of_a_store_that_does_not_answer(tmp_path: Path) -> None:
    """Port 1 refuses at once; the catalog is given up on after its connect wait (a second, here)."""
    store = f"postgresql://u:{SECRET}@127.0.0.1:1/db"
    data = str(tmp_path / "data")
    done = dsh_inspect(
        "serve", "--port", "0", "--data-dir", data, "--store", store, "--setting", "database_seconds", "1"
    )
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert SECRET not in said
    assert "cannot open the upload store" in said and "does not answer" in said, said
    done = dsh_inspect("token", "list", "--data-dir", data, "--store", store)
    said = done.stdout + done.stderr
    assert done.returncode == 2 and SECRET not in said
    assert "cannot open the catalog" in said and "does not answer" in said, said


@pytest.mark.slow  # a `serve` process each
@pytest.mark.parametrize(
    ("flag", "url"),
    [
        ("--store", f"postgress://u:{SECRET}@h/db"),
        ("--store", f"mysql://u:{SECRET}@h/db?password={SECRET}"),
        ("--store", f"host=h password={SECRET}"),  # a libpq keyword string, where a URL was wanted
        ("--blobs", f"s4://key:{SECRET}@bucket/prefix"),
    ],
)
def test_a_mistyped_scheme_is_named_without_its_password(tmp_path: Path, flag: str, url: str) -> None:
    done = dsh_inspect("serve", "--port", "0", "--data-dir", str(tmp_path / "data"), flag, url)
    said = done.stdout + done.stderr
    assert done.returncode == 2 and SECRET not in said, said
    assert ("store URL" if flag == "--store" else "blobs URL") in said and "***" in said, said
    if flag == "--store":
        done = dsh_inspect("token", "list", "--data-dir", str(tmp_path / "data"), "--store", url)
        said = done.stdout + done.stderr
        assert done.returncode == 2 and SECRET not in said and "store URL" in said, said


@pytest.mark.slow  # a `serve` process each
def test_the_store_a_server_keeps_uploads_in_is_named_without_its_password(tmp_path: Path) -> None:
    """A catalog that opens (an embedded one, named by a URL that carries a password): the line naming where
    uploads are kept, and the one saying how to make the first token, mask it."""
    store = f"sqlite://u:{SECRET}@/{tmp_path}/catalog.sqlite3"
    args = ["serve", "--port", "0", "--data-dir", str(tmp_path / "data"), "--store", store, "--require-auth"]
    process = subprocess.Popen([sys.executable, "-m", "dsh_inspect", *args], cwd=PROJECT, stderr=subprocess.PIPE)
    try:
        assert process.stderr is not None
        said = []
        deadline = time.monotonic() + 60
        for line in iter(process.stderr.readline, b""):
            said.append(line.decode())
            if b"serving on" in line or time.monotonic() > deadline:
                break
        text = "".join(said)
        assert SECRET not in text
        assert f"uploads kept in sqlite://u:***@/{tmp_path}/catalog.sqlite3" in text, text
        assert f"token create NAME --role admin --store sqlite://u:***@/{tmp_path}/catalog.sqlite3" in text, text
    finally:
        process.terminate()
        process.wait(30)
        process.stderr.close()  # type: ignore[union-attr]
