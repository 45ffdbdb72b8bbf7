"""Clickjacking in Chromium: a page of another origin that frames the server's upload and session pages
gets nothing rendered in its frames, so no visitor's click can land on a framed delete button."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Browser, Frame

from tests.support.server import live_server
from tests.support.uploads import jsonl_bytes, uploaded_digest

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("framed")
    (root / "framed.jsonl").write_bytes(jsonl_bytes("framed"))
    with live_server([str(root)], data_dir=str(tmp_path_factory.mktemp("data"))) as url:
        yield url


@pytest.fixture(scope="module")
def digest(server: str) -> str:
    return uploaded_digest(server)


@contextmanager
def foreign_site(pages: dict[str, str]) -> Iterator[str]:
    """Another origin (a second server on another loopback port) answering `pages` by path."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path, "").encode()
            self.send_response(200 if self.path in pages else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}"
    finally:
        site.shutdown()
        site.server_close()


def shows(frame: Frame, url: str) -> bool:
    """Whether the frame shows the page at `url` with something in it (in a frame Chromium refuses to
    fill it puts its own error page)."""
    return frame.url == url and bool(frame.evaluate("document.body ? document.body.innerText.trim() : ''"))


def test_a_foreign_page_that_frames_the_server_sees_nothing_in_its_frames(
    browser: Browser, server: str, digest: str
) -> None:
    targets = {"upload": f"{server}/uploads/{digest}", "session": f"{server}/sessions/framed", "list": f"{server}/"}
    frames = "".join(f'<iframe name="{name}" src="{url}"></iframe>' for name, url in targets.items())
    pages = {
        "/attack": f'<!doctype html><title>attack</title><iframe name="control" src="/control"></iframe>{frames}',
        "/control": "<!doctype html><p>a frame of its own renders</p>",
    }
    refused: list[str] = []
    context = browser.new_context()  # not the page fixture: Chromium reports each refusal as a console error
    with foreign_site(pages) as site:
        try:
            page = context.new_page()
            page.on("console", lambda m: refused.append(m.text) if "frame-ancestors" in m.text else None)
            page.goto(f"{site}/attack", wait_until="load")
            control = page.frame(name="control")
            assert control is not None and shows(control, f"{site}/control"), "the attacker's own frame renders"
            for name, url in targets.items():
                frame = page.frame(name=name)
                assert frame is not None, name
                assert not shows(frame, url), f"{name} ({url}) rendered inside a foreign page"
                assert frame.locator("[data-upload-delete], [data-session-facts], [data-session-list]").count() == 0
            assert len(refused) == len(targets), refused
        finally:
            context.close()
