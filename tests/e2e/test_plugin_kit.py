"""The test author's kit (issue 42), used as an author would, in a pytest run of its own: builders, seed-time
validation, `cwd`, the three goldens with their normalisation, `settled`, the `dsh_browser` marker, paths
relative to the test file, and a quiet shutdown whatever the test left open."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

SCENARIO = """
import json

import pytest
from playwright.sync_api import expect

from dsh_inspect.testing import SeedError, events as ev, settled

TURN = [
    ev.turn_start(), ev.step_start(),
    ev.prompt("List the tests in {{cwd}} at 12:30, see issue #4"),
    *ev.tool_use("bash", {"command": "ls tests", "description": "List tests"}, "test_a.py"),
    *ev.approval("bash", "allowed-once"),
    ev.step_end(), ev.step_start(),
    ev.answer("There is one: test_a.py.", reasoning="The listing shows one file."),
    ev.step_end(), ev.turn_end(),
]
MANY = [event for n in range(1, 30) for event in (ev.turn_start(), ev.prompt(f"prompt {n}"), ev.turn_end())]


def test_builders_seed_what_dsh_accepts_and_the_page_shows(seed_session, chromium_page, text_golden):
    more = [*ev.command("model", " deepseek-v4-pro"), *ev.compaction("We listed the tests.", tokens=99)]
    url = seed_session([*TURN, *more], cwd="/srv/shop")
    api = chromium_page.request.get(url.replace("/sessions/", "/api/sessions/")).json()
    assert api["verdict"]["category"] == "accepted"
    assert api["header"]["cwd"] == "/srv/shop"
    chromium_page.goto(url)
    expect(chromium_page.get_by_text("List the tests in /srv/shop at 12:30, see issue #4")).to_be_visible()
    expect(chromium_page.get_by_text("There is one: test_a.py.")).to_be_visible()
    compacted = "compact Compacted 4 history items (~99 tokens)"
    expect(chromium_page.get_by_role("button", name=compacted, exact=True)).to_be_visible()
    prompt = chromium_page.locator("[data-user-text]").first
    text_golden(prompt.inner_text(), "goldens/prompt.txt")


def test_a_fixture_header_keeps_its_cwd_unless_the_test_gives_one(seed_session, chromium_page):
    kept = seed_session("fixtures/with-cwd.jsonl")
    given = seed_session("fixtures/with-cwd.jsonl", cwd="/elsewhere")
    for url, cwd in ((kept, "/workspace/project/workspace"), (given, "/elsewhere")):
        api = chromium_page.request.get(url.replace("/sessions/", "/api/sessions/")).json()
        assert api["header"]["cwd"] == cwd


def test_an_invalid_event_is_named_at_seed_time(seed_session):
    broken = {"type": "user/message", "surfaceOp": "append",
              "data": {"role": "user", "content": [], "source": {"kind": "user"}}}
    with pytest.raises(SeedError) as raised:
        seed_session([ev.turn_start(), broken, ev.turn_end()])
    assert (raised.value.index, raised.value.event_type) == (1, "user/message")
    assert "message id" in str(raised.value)
    seed_session([ev.turn_start(), broken, ev.turn_end()], validate=False)


def test_an_open_turn_is_refused_at_seed_but_fine_mid_append(seed_session, append_events):
    with pytest.raises(SeedError, match="still open"):
        seed_session(TURN[:3])
    url = seed_session(TURN)
    append_events(url, [ev.turn_start(), ev.step_start(), ev.prompt("and now?")])
    with pytest.raises(SeedError) as raised:
        append_events(url, [ev.answer("fine"), {"type": "tool/result", "surfaceOp": "append", "data": {}}])
    assert raised.value.index == 1 and raised.value.event_type == "tool/result"


def test_a_missing_fixture_says_where_it_looked(seed_session):
    with pytest.raises(FileNotFoundError, match="relative paths resolve against the test file's folder"):
        seed_session("fixtures/nowhere.jsonl")


@pytest.mark.dsh_browser(locale="zh-CN", viewport=(390, 844), color_scheme="dark")
def test_the_marker_opens_a_small_dark_chinese_page(inspector, chromium_page):
    chromium_page.goto(inspector.url)
    asked = "[innerWidth, navigator.language, matchMedia('(prefers-color-scheme: dark)').matches]"
    assert chromium_page.evaluate(asked) == [390, "zh-CN", True]
    assert chromium_page.evaluate("document.documentElement.lang").startswith("zh")


@pytest.mark.dsh_browser(viewport=(800, 600), scrollbars=True)
def test_scrollbars_take_their_width_when_asked(seed_session, chromium_page):
    chromium_page.goto(seed_session(MANY))
    assert chromium_page.evaluate("innerWidth - document.documentElement.clientWidth") > 0


def test_scrollbars_are_hidden_by_default(seed_session, chromium_page):
    chromium_page.goto(seed_session(MANY))
    assert chromium_page.evaluate("innerWidth - document.documentElement.clientWidth") == 0


def test_geometry_golden_and_settled(seed_session, chromium_page, geometry_golden):
    chromium_page.goto(seed_session(TURN))
    prompt = chromium_page.locator("[data-user-text]")
    settled(lambda: prompt.first.bounding_box())
    geometry_golden({"prompt": prompt, "nothing": chromium_page.locator("[data-no-such-thing]")},
                    "goldens/prompt.geometry.yml", styles=("font-size", "max-width"))


def test_a_context_the_test_opened_itself_is_closed_before_the_server_stops(seed_session, dsh_chromium):
    context = dsh_chromium.new_context()
    page = context.new_page()
    page.goto(seed_session(TURN))
    expect(page.get_by_text("There is one: test_a.py.")).to_be_visible()


def test_a_page_asked_for_before_the_server_is_closed_before_it_too(chromium_page, seed_session):
    chromium_page.goto(seed_session(TURN))
    expect(chromium_page.get_by_text("There is one: test_a.py.")).to_be_visible()
"""

FIXTURE = (
    '{"type":"session","version":0,"id":"{{sessionId}}","createdAt":1784974100747,"cwd":"{{cwd}}/workspace"}\n'
    '{"type":"turn/start","data":{"turn":1}}\n'
    '{"type":"user/message","data":{"id":"m1","role":"user","content":[{"type":"text","text":"hi"}],'
    '"source":{"kind":"user"}},"surfaceOp":"append"}\n'
    '{"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}\n'
)


def test_the_kit_as_a_test_author_uses_it(pytester: pytest.Pytester) -> None:
    # In a folder of its own, run from the project's root: paths resolve against the test file's folder.
    suite = pytester.mkdir("suite")
    (suite / "test_kit.py").write_text(SCENARIO)
    (suite / "fixtures").mkdir()
    (suite / "fixtures" / "with-cwd.jsonl").write_text(FIXTURE)
    args = ("-p", "no:cacheprovider", "-q", "-s", "-p", "no:logging")
    first = pytester.runpytest_subprocess(*args)
    # the first run writes the two goldens (and fails those two tests, asking for a review)
    first.assert_outcomes(passed=9, failed=2)
    text = (suite / "goldens" / "prompt.txt").read_text()
    assert text == "List the tests in /srv/shop at 12:30, see issue #4\n", "fixture text is not normalised"
    geometry = (suite / "goldens" / "prompt.geometry.yml").read_text()
    assert (
        geometry.startswith("prompt:\n- box: x ") and "  font-size: " in geometry and geometry.endswith("nothing: []\n")
    )
    second = pytester.runpytest_subprocess(*args)
    second.assert_outcomes(passed=11)
    out = second.stdout.str() + second.stderr.str()
    assert "Traceback" not in out and "Cancel" not in out and "ERROR" not in out, out[-3000:]


def readme_scenario() -> str:
    """The ported upstream scenario README "Testing with seeded histories" shows, as it is written there."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Testing with seeded histories") :]
    found = re.search(r"ported:\n\n```python\n(.*?)```", section, re.S)
    assert found, "README's testing section has no ported scenario"
    return found.group(1)


def test_the_readme_scenario_runs_as_written(pytester: pytest.Pytester) -> None:
    suite = pytester.mkdir("suite")
    (suite / "test_readme.py").write_text(readme_scenario())
    (suite / "fixtures").mkdir()
    (suite / "fixtures" / "seed.jsonl").write_text(FIXTURE)
    args = ("-p", "no:cacheprovider", "-q")
    pytester.runpytest_subprocess(*args, "--refresh-goldens").assert_outcomes(passed=3)
    geometry = (suite / "goldens" / "agents.geometry.yml").read_text()
    assert "body:\n- box: x " in geometry and "  overflow-y: auto" in geometry, geometry
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=3)  # the goldens hold from run to run
