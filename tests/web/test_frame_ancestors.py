"""No response of the server may be framed by another page (clickjacking): every one carries a CSP with
`frame-ancestors 'none'` and `X-Frame-Options: DENY`, the pages, partials, JSON, static files, live
streams, refusals and errors alike."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from dsh_inspect.settings import Settings
from dsh_inspect.web.access import ROUTES
from dsh_inspect.web.app import create_app
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from tests.support.server import live_server
from tests.support.uploads import jsonl_bytes, uploaded_digest

PARAM = re.compile(r"\{(\w+)(?::path)?\}")


def framing_refused(response: httpx.Response) -> bool:
    csp = response.headers.get("content-security-policy", "")
    directives = {d.strip().split(" ", 1)[0]: d.strip() for d in csp.split(";") if d.strip()}
    return (
        directives.get("frame-ancestors") == "frame-ancestors 'none'"
        and directives.get("default-src") == "default-src 'self'"
        and response.headers.get("x-frame-options") == "DENY"
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("framed")
    (root / "framed.jsonl").write_bytes(jsonl_bytes("framed", turns=2))
    return root


@pytest.fixture(scope="module")
def server(served: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server([str(served)], data_dir=str(tmp_path_factory.mktemp("data"))) as url:
        yield url


@pytest.fixture(scope="module")
def digest(server: str) -> str:
    return uploaded_digest(server)


def filled(path: str, digest: str) -> str:
    """A route's path with a value for each parameter: real ones where the server has them."""
    values = {"key": "framed", "digest": digest, "seq": "0", "ref": "1.1", "attachment_id": "x", "message_id": "x"}
    return PARAM.sub(lambda m: values.get(m.group(1), "x"), path)


def every_route(server: str, served: Path) -> list[tuple[str, str]]:
    """(method, path) of each route: those the OpenAPI document names, and the pages it leaves out."""
    documented = [
        (method.upper(), path)
        for path, operations in httpx.get(f"{server}/openapi.json").json()["paths"].items()
        for method in operations
    ]
    pages = [
        (method, route.path)
        for route in api_routes(create_app([str(served)]).routes)
        if not route.include_in_schema
        for method in sorted(route.methods)
    ]
    return documented + pages


def api_routes(routes: Sequence[BaseRoute]) -> Iterator[APIRoute]:
    """The app's routes, those of each included router too (FastAPI keeps a router included as one)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from api_routes(inner.routes)


def test_every_route_refuses_to_be_framed(server: str, digest: str, served: Path) -> None:
    routes = every_route(server, served)
    assert ("GET", "/sessions/{key}") in routes and ("GET", "/uploads/{digest}") in routes
    assert ("GET", "/api/sessions/{key}") in routes and ("POST", "/api/uploads") in routes
    assert ("GET", "/sessions/{key}/live") in routes
    with httpx.Client(base_url=server, timeout=30) as client:  # one client: its connections kept between routes
        for method, path in routes:
            url = filled(path, digest)
            if method == "DELETE":
                url = url.replace(digest, "0" * len(digest))  # the upload stays for the routes after this one
            with client.stream(method, url, content=b"" if method == "POST" else None) as response:
                assert framing_refused(response), (method, path, response.status_code, dict(response.headers))


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("GET", "/static/inspect.css", {}),
        ("GET", "/static/nothing-here.js", {}),
        ("GET", "/no/such/page", {}),
        ("GET", "/sessions/no-such-key", {}),
        ("GET", "/api/sessions/no-such-key", {}),
        ("PUT", "/api/sessions", {}),
        ("GET", "/openapi.json", {}),
        ("GET", "/", {"Host": "evil.example"}),
        ("POST", "/sessions-summaries", {"Origin": "http://evil.example"}),
        ("DELETE", "/api/uploads/x", {"Sec-Fetch-Site": "cross-site"}),
    ],
)
def test_static_files_refusals_and_errors_refuse_to_be_framed(
    server: str, method: str, path: str, headers: dict[str, str]
) -> None:
    response = httpx.request(method, f"{server}{path}", headers=headers)
    assert framing_refused(response), (response.status_code, dict(response.headers))


def test_a_page_not_found_is_a_page_and_its_twin_json(server: str) -> None:
    page = httpx.get(f"{server}/sessions/no-such-key")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    twin = httpx.get(f"{server}/api/sessions/no-such-key")
    assert twin.status_code == 404 and twin.json() == {"detail": "no session 'no-such-key'"}


def test_a_server_error_refuses_to_be_framed_too(served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app([str(served)], Settings(port=8000))
    monkeypatch.setitem(ROUTES, ("GET", "/boom"), "public")  # every route is named in the access table

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("a bug")

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            return await client.get("/boom")

    # in a thread of its own: a browser test earlier in this process may leave an event loop running here
    with ThreadPoolExecutor(1) as pool:
        response = pool.submit(asyncio.run, get()).result()
    assert response.status_code == 500
    assert framing_refused(response), dict(response.headers)
