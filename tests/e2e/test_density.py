"""The reading view (issue 39, item 1): a 500-turn session shows at least 3.5 turns on a 1440×900 screen at the
page's own font sizes, as dsh's web app does; a message's meta line shows on hover, on focus and always in
"Details", which the page remembers; Copy link copies the permalink; an open Think does not repeat its first
line; turn and step boundaries take no height of their own. In both themes and languages, at 1440 and 390 px,
with screenshots (`DSH_INSPECT_SHOTS`, tests/support/shots.py) under its `39a/`."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import pytest
from dsh_inspect.testing import events as ev
from dsh_inspect.testing.plugin import COMPRESSIONS
from dsh_inspect.testing.seeding import seed_events, write_seed
from playwright.sync_api import Browser, Locator, Page, expect

from tests.support.server import live_server
from tests.support.shots import shot as screenshot

pytestmark = pytest.mark.browser

TURNS = 500
KEY = "long-reading"
# words of the lengths W1's are (benchmarks/generate.py), a few of them Chinese
WORDS = "the a of to in for with from file test build module value result error cache index window header row "
WORDS += "session event message tool call read write edit patch diff commit config path parse decode check 测试 文件"
LOOKS = [("light", "en-US"), ("dark", "zh-CN")]


def long_session(turns: int = TURNS) -> list[dict[str, Any]]:
    """W1's long session, as the test kit writes it: each turn a prompt (queued in dsh's inbox and taken out of
    it), a step that thinks and reads a file, and a step that answers; instructions and a notice every 10 turns;
    a Markdown title."""
    rng = random.Random(39)

    def sentence(words: int) -> str:
        return " ".join(rng.choices(WORDS.split(), k=words)).capitalize() + "."

    out: list[dict[str, Any]] = []
    for turn in range(1, turns + 1):
        # dsh queues the prompt in its inbox, opens the turn, takes the prompt out: bookkeeping on either side
        prompt = ev.prompt(f"Task {turn}: {sentence(10)}")
        inbox = {"target": "next-turn", "start": 0}
        out += [{"type": "agent/inbox/spliced", "data": {**inbox, "inserted": [prompt["data"]]}}, ev.turn_start()]
        out += [{"type": "agent/inbox/spliced", "data": {**inbox, "removedCount": 1, "inserted": []}}, ev.step_start()]
        if turn % 10 == 1:
            out += [ev.instructions(f"# Rules (turn {turn})", baseline=turn == 1), ev.notice(f"Job {turn} finished")]
        out.append(prompt)
        if turn == 1:
            out.append(ev.title("**Long** reading session"))
        path = f"src/module_{turn % 37}.py"
        out += ev.tool_use("read", {"file_path": path}, sentence(90), reasoning=f"{sentence(16)}\n{sentence(30)}")
        out += [ev.step_end(), ev.step_start(), ev.answer(sentence(24)), ev.step_end(), ev.turn_end()]
    return out


# where each turn starts: its turn/start's seq, its boundary row's anchor `seq-N` (the seeder numbers events from 0)
TURN_SEQS = [seq for seq, event in enumerate(long_session()) if event["type"] == "turn/start"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("dsh-home") / "sessions"
    plan = seed_events(long_session(), session_id=KEY, cwd="/workspace/long-project")
    write_seed(root, plan, COMPRESSIONS["zstd"])
    with live_server([str(root)]) as url:
        yield url


def opened(browser: Browser, look: tuple[str, str], width: int, height: int = 900) -> Page:
    scheme, locale = look
    context = browser.new_context(viewport={"width": width, "height": height}, locale=locale, color_scheme=scheme)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    return context.new_page()


def shot(page: Page, name: str) -> None:
    screenshot(page, f"39a/{name}")


def box(locator: Locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not laid out"
    return found


def sticky_bottom(page: Page) -> float:
    return float(page.locator("[data-toolbar]").evaluate("el => el.getBoundingClientRect().bottom"))


def prompts_on_screen(page: Page) -> int:
    """Prompts whose whole box is on screen, under the toolbar that stays."""
    return int(
        page.locator("[data-chat-flow]").evaluate(
            """(flow, top) => [...flow.querySelectorAll("[data-user-text]")].filter(e => {
                const b = e.getBoundingClientRect();
                return b.height > 0 && b.top >= top && b.bottom <= innerHeight;
            }).length""",
            sticky_bottom(page),
        )
    )


def at_end(page: Page, server: str) -> None:
    page.goto(f"{server}/sessions/{KEY}?at=end")
    expect(page.locator("[data-user-text]", has_text=f"Task {TURNS}:")).to_be_in_viewport(timeout=15000)


@pytest.mark.parametrize("look", LOOKS, ids="-".join)
def test_a_long_session_shows_three_and_a_half_turns_at_1440(browser: Browser, server: str, look: Any) -> None:
    page = opened(browser, look, 1440)
    at_end(page, server)
    # the page's own sizes: the column, the prompt's and the answer's fonts stay as docs/ui.md has them
    assert box(page.locator("[data-chat-flow]"))["width"] == 748
    assert page.locator(".bubble").last.evaluate("e => getComputedStyle(e).fontSize") == "16px"
    assert page.locator(".assistant-step .markdown").last.evaluate("e => getComputedStyle(e).fontSize") == "16px"
    shot(page, f"density-end-{'-'.join(look)}-1440")
    # the first screen's budget (docs/product.md Budgets): a Copy link per row costs one node
    assert page.evaluate("document.getElementsByTagName('*').length") < 1500
    # a turn from one turn line to the next, against the screen under the toolbar
    tops = [box(b)["y"] for b in page.locator("[data-chat-flow-kind='turn']").all()[-6:]]
    pitches = sorted(b - a for a, b in itertools.pairwise(tops))
    screen = 900 - sticky_bottom(page)
    assert screen / pitches[len(pitches) // 2] >= 3.5, f"{pitches} in {screen}px"
    # counted as a reader sees them: four prompts whole with a turn starting under the toolbar, and never under three
    turn = page.locator("[data-chat-flow-kind='turn']").nth(-5)
    page.evaluate("y => window.scrollBy(0, y)", box(turn)["y"] - sticky_bottom(page) - 2)
    assert prompts_on_screen(page) >= 4
    for _ in range(8):
        page.evaluate("window.scrollBy(0, -31)")
        assert prompts_on_screen(page) >= 3
    page.context.close()


def test_meta_lines_show_on_hover_and_focus_and_always_in_details(browser: Browser, server: str) -> None:
    page = opened(browser, LOOKS[0], 1440)
    at_end(page, server)
    row = page.locator(".flow-item[data-chat-flow-kind='user']").last
    meta = row.locator(".row-actions")
    expect(meta).to_have_css("opacity", "0")
    # it takes no height: the row is its bubble
    assert box(row)["height"] == box(row.locator(".bubble"))["height"]
    row.locator(".bubble").hover()
    expect(meta).to_have_css("opacity", "1")
    shot(page, "density-hover-1440")
    page.mouse.move(5, 5)
    expect(meta).to_have_css("opacity", "0")
    row.get_by_role("button", name="Copy link").focus()  # a Tab onto it
    expect(meta).to_have_css("opacity", "1")
    page.locator("[data-search-input]").focus()
    expect(meta).to_have_css("opacity", "0")
    # Details: every meta line in the flow, remembered across a reload, and back off
    page.get_by_label("Details").check()
    expect(meta).to_have_css("opacity", "1")
    assert box(row)["height"] > box(row.locator(".bubble"))["height"] + 18
    shot(page, "density-details-1440")
    page.reload()
    expect(page.get_by_label("Details")).to_be_checked()
    last_meta = page.locator(".flow-item[data-chat-flow-kind='user']").last.locator(".row-actions")
    expect(last_meta).to_have_css("opacity", "1")
    page.get_by_label("Details").uncheck()
    page.reload()
    expect(page.get_by_label("Details")).not_to_be_checked()
    expect(last_meta).to_have_css("opacity", "0")
    page.context.close()


def test_j_marks_a_message_and_shows_its_meta_line(browser: Browser, server: str) -> None:
    page = opened(browser, LOOKS[1], 1440)
    page.goto(f"{server}/sessions/{KEY}")
    expect(page.locator("[data-user-text]").first).to_be_visible()
    marked = page.locator(".flow-item[data-current]")
    for _ in range(6):  # the turn's line, its contexts' fold, the prompt: on to the first answer's rows
        page.keyboard.press("j")
        if marked.get_attribute("data-chat-flow-kind") in ("user", "assistant-step"):
            break
    expect(marked.locator(":scope > * > .row-actions")).to_have_css("opacity", "1")
    page.context.close()


def test_copy_link_copies_the_whole_permalink(browser: Browser, server: str) -> None:
    page = opened(browser, LOOKS[0], 1440)
    at_end(page, server)
    row = page.locator(".flow-item[data-chat-flow-kind='user']").last
    row.locator(".bubble").hover()
    row.get_by_role("button", name="Copy link").click()
    expect(row.get_by_role("button", name="Copied")).to_be_visible()
    link = page.evaluate("navigator.clipboard.readText()")
    anchor = row.get_attribute("id") or ""
    assert link == f"{server}/sessions/{KEY}#{anchor}", "the permalink, not the page's ?at= address"
    # and it opens the row, marked
    page.goto(link)
    expect(page.locator(".flow-item[data-current]")).to_have_attribute("id", anchor)
    page.context.close()


@pytest.mark.parametrize("look", LOOKS, ids="-".join)
def test_an_open_think_shows_its_reasoning_not_its_first_line_again(browser: Browser, server: str, look: Any) -> None:
    page = opened(browser, look, 1440)
    at_end(page, server)
    think = page.locator("[data-variant='think']").last
    summary = think.locator(".row .summary")
    expect(summary).to_be_visible()
    first_line = summary.inner_text()
    think.locator("[data-disclosure-row]").click()
    expect(think.locator(".think-body")).to_contain_text(first_line)
    expect(summary).to_be_hidden()
    shot(page, f"density-think-{'-'.join(look)}-1440")
    think.locator("[data-disclosure-row]").click()
    expect(summary).to_be_visible()
    page.context.close()


def test_turn_and_step_lines_take_no_height_of_their_own(browser: Browser, server: str) -> None:
    page = opened(browser, LOOKS[0], 1440)
    at_end(page, server)
    answer = page.locator(".flow-item[data-chat-flow-kind='assistant-step']:has(.markdown)").nth(-2)
    prompt = page.locator(".flow-item[data-chat-flow-kind='user']").last
    # from the answer to the next turn's prompt, only the flow's one 16px gap, the turn's line drawn in it
    assert box(prompt)["y"] - (box(answer)["y"] + box(answer)["height"]) == 16
    line = page.locator(".flow-item[data-chat-flow-kind='turn']").last
    expect(line.locator(".boundary-title")).to_be_visible()
    assert box(line.locator("time"))["width"] <= 1, "its facts for screen readers alone, until hovered"
    line.locator(".boundary-title").hover()
    expect(line.locator("time")).not_to_have_css("width", "1px")
    # a turn's first step is not drawn; its second is a line in its gap
    steps = page.locator(".flow-item[data-chat-flow-kind='step']")
    expect(steps.nth(-2)).to_be_hidden()
    expect(steps.last.locator(".boundary-title")).to_be_visible()
    page.context.close()


@pytest.mark.parametrize("look", LOOKS, ids="-".join)
@pytest.mark.parametrize("width", [1440, 390])
def test_no_sideways_scroll_and_latest_never_covers_text(browser: Browser, server: str, look: Any, width: int) -> None:
    page = opened(browser, look, width, 844 if width == 390 else 900)
    at_end(page, server)
    page.evaluate("window.scrollBy(0, -3000)")  # into the session, its rows under the toolbar
    expect(page.locator("[data-user-text]", has_text=f"Task {TURNS}:")).not_to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"density-middle-{'-'.join(look)}-{width}")
    # measured at once: a window loading meanwhile moves the rows
    latest, bar, flow = page.evaluate(
        """() => ["[data-latest]", "[data-toolbar]", "[data-chat-flow]"].map(s => {
            const r = document.querySelector(s).getBoundingClientRect();
            return {x: r.left, y: r.top, width: r.width, height: r.height};
        })"""
    )
    in_bar = bar["y"] <= latest["y"] and latest["y"] + latest["height"] <= bar["y"] + bar["height"]
    beside = latest["x"] >= flow["x"] + flow["width"] or latest["x"] + latest["width"] <= flow["x"]
    assert in_bar or beside, f"Latest at {latest}, the column at {flow}, the toolbar at {bar}"
    page.context.close()
