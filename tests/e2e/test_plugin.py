"""The dsh_inspect pytest plugin used as a user would: a separate test run that only imports its fixtures."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

USER_TESTS = """
import pytest
from playwright.sync_api import expect

EVENTS = [
    {"type": "turn/start", "data": {"turn": 1}},
    {"type": "step/start", "data": {"turn": 1, "step": 1}},
    {"type": "user/message", "surfaceOp": "append",
     "data": {"id": "m-1", "role": "user", "content": [{"type": "text", "text": "hello {{cwd}}"}],
              "source": {"kind": "user", "rpcId": "{{rpcId}}"}}},
    {"type": "user/message", "surfaceOp": "append",
     "data": {"id": "m-2", "role": "user", "content": [{"type": "text", "text": "Short injected context."}],
              "source": {"kind": "plugin", "plugin": "fixture"}}},
    {"type": "step/end", "data": {"turn": 1, "step": 1}},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
]


@pytest.mark.dsh_root(compression="none")
def test_plain_root_seeds_and_grows(inspector, seed_session, append_events, chromium_page, aria_golden):
    url = seed_session(EVENTS)
    assert url.path.name == "session.jsonl"
    chromium_page.goto(url)
    expect(chromium_page.get_by_text("hello /workspace/project")).to_be_visible()
    aria_golden(chromium_page.get_by_role("button", name="Context injection fixture", exact=True), "ctx.aria.yml")
    append_events(url, [{"type": "user/message", "surfaceOp": "append",
                         "data": {"id": "m-3", "role": "user", "content": [{"type": "text", "text": "late"}],
                                  "source": {"kind": "plugin", "plugin": "later"}}}])
    expect(chromium_page.get_by_role("button", name="Context injection later", exact=True)).to_be_visible()


def test_zstd_root_by_default_and_open_turns_show_closers(inspector, seed_session, chromium_page):
    url = seed_session(EVENTS[:-2], validate=False)  # left open, as a crash leaves it
    assert url.path.name == "session.jsonl.zstd" and inspector.compression == "zstd"
    data = chromium_page.request.get(url.replace("/sessions/", "/api/sessions/")).json()
    assert data["verdict"]["category"] == "repaired"
    turn = next(r for r in data["rows"] if r["kind"] == "turn")
    (end,) = turn["links"]["end"]
    closer = chromium_page.request.get(url.replace("/sessions/", "/api/sessions/") + f"/events/{end}").json()
    assert end >= len(EVENTS) - 2 and closer["synthetic"] is True
    assert closer["event"]["data"]["reason"] == {"kind": "interrupted"}


def test_a_console_error_fails_the_test(inspector, chromium_page):
    chromium_page.goto(inspector.url)
    chromium_page.evaluate("console.error('boom')")


def test_a_failing_test_also_names_its_page_errors(inspector, chromium_page):
    chromium_page.goto(inspector.url)
    with chromium_page.expect_event("pageerror"):
        chromium_page.evaluate("setTimeout(() => { throw new Error('kaput') })")
    assert chromium_page.title() == "not this title", "the test's own failure"
"""


def test_the_plugin_serves_seeds_grows_and_compares_goldens(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    first = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    # The new golden, the console error and the failing test fail; page errors fail the test itself, not its teardown.
    first.assert_outcomes(passed=1, failed=3)
    out = first.stdout.str()
    assert "golden" in out and "boom" in out
    assert "FAILED test_user.py::test_a_console_error_fails_the_test" in out
    assert "the test's own failure" in out and "page error: kaput" in out
    golden = pytester.path / "ctx.aria.yml"
    written = golden.read_text()
    assert written.startswith('- button "Context injection fixture"')
    golden.write_text('- button "something else"\n')
    second = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-k", "plain_root")
    second.assert_outcomes(failed=1)
    assert "--refresh-goldens" in second.stdout.str()
    third = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-k", "plain_root", "--refresh-goldens")
    third.assert_outcomes(passed=1)
    assert golden.read_text() == written
