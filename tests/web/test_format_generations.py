"""Newer dsh generations through a real client (issue 30): both files of a session folder are listed; the
session's id shows its newest generation, its events rendered under a banner that says its format is newer
than the pinned release reads; the version-0 file answers at its own key "as of seq K", linking the current
state, which links back; the JSON twins say the same."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support.generations import turns, two_generations, write_generation
from tests.support.rows import attrs, flow_rows, parse, text
from tests.support.server import app_client

RELEASE = "0.1.0-rc.8"


def listed(client: httpx.Client) -> dict[str, dict]:
    return {s["path"]: s for s in client.get("/api/sessions").json()["sessions"]}


def test_the_session_shows_its_newest_generation_and_links_the_older_as_of_its_last_seq(tmp_path: Path) -> None:
    old, new, last = two_generations(tmp_path)
    with app_client([str(tmp_path)]) as client:
        sessions = listed(client)
        assert set(sessions) == {str(old), str(new)}, "each file is listed"
        current, earlier = sessions[str(new)], sessions[str(old)]
        assert current["key"] == "gen-sess", "the session's id names its newest generation"
        assert earlier["key"] == earlier["unique"] != "gen-sess"
        assert current["generation"] == {
            "number": 1,
            "current": True,
            "currentKey": "gen-sess",
            "currentUrl": "/sessions/gen-sess",
            "files": 2,
        }
        assert earlier["generation"]["current"] is False and earlier["generation"]["currentKey"] == "gen-sess"

        twin = client.get("/api/sessions/gen-sess").json()
        assert twin["path"] == str(new)
        assert twin["verdict"]["category"] == "unsupported" and "newer harness" in twin["verdict"]["reason"]
        assert twin["newerFormat"] == {"version": 1, "reads": 0, "release": RELEASE}
        assert twin["events"] == len(turns(2))
        assert [r["kind"] for r in twin["rows"]].count("turn") == 2, "its events are rendered, not withheld"
        generation = twin["generation"]
        assert (generation["number"], generation["current"], generation["asOfSeq"]) == (1, True, None)
        assert [(f["key"], f["number"], f["current"], f["asOfSeq"], f["self"]) for f in generation["files"]] == [
            (earlier["key"], 0, False, last, False),
            ("gen-sess", 1, True, None, True),
        ]

        page = client.get("/sessions/gen-sess").text
        assert attrs(page, "[data-newer-format]", "data-newer-format") == ["1"]
        banner = text(page, "[data-newer-format]")
        assert f"newer than the v0 that dsh {RELEASE} reads" in banner and "as far as they read" in banner
        assert len([r for r in flow_rows(page) if r.kind == "turn"]) == 2
        assert attrs(page, "[data-generation-link]", "href") == [earlier["url"]], "the current links back"
        assert f"as of seq {last}" in text(page, "[data-generations]")
        assert not parse(page).select("[data-generation-earlier]")

        older = client.get(f"/api/sessions/{earlier['key']}").json()
        assert older["path"] == str(old) and older["verdict"]["category"] == "accepted"
        assert older["newerFormat"] is None
        assert (older["generation"]["current"], older["generation"]["asOfSeq"]) == (False, last)
        assert older["generation"]["currentUrl"] == "/sessions/gen-sess"

        older_page = client.get(earlier["url"]).text
        assert attrs(older_page, "[data-generation-earlier]", "data-as-of-seq") == [str(last)]
        note = text(older_page, "[data-generation-earlier]")
        assert f"as of seq {last}" in note and "not its current state" in note
        assert attrs(older_page, "[data-generation-current-link]", "href") == ["/sessions/gen-sess"]
        assert not parse(older_page).select("[data-newer-format]")

        index = client.get("/").text
        assert sorted(attrs(index, "[data-generation-mark]", "data-generation-current")) == ["false", "true"]
        assert attrs(index, "[data-generation-mark] [data-generation-current-link]", "href") == ["/sessions/gen-sess"]


def test_the_id_moves_to_a_newer_generation_written_while_the_server_runs(tmp_path: Path) -> None:
    old = write_generation(tmp_path, "upgraded", 0, turns(1))
    with app_client([str(tmp_path)]) as client:
        assert listed(client)[str(old)]["key"] == "upgraded"
        assert client.get("/api/sessions/upgraded").json()["generation"] is None
        new = write_generation(tmp_path, "upgraded", 1, turns(2))
        sessions = listed(client)
        assert sessions[str(new)]["key"] == "upgraded", "the session's id shows its current state, not the old file"
        assert sessions[str(old)]["key"] == sessions[str(old)]["unique"]
        assert client.get("/api/sessions/upgraded").json()["path"] == str(new)
        assert client.get(f"/api/sessions/{sessions[str(old)]['key']}").json()["path"] == str(old)


def test_a_lone_newer_format_is_shown_under_the_banner(tmp_path: Path) -> None:
    write_generation(tmp_path, "only-new", 2, turns(1), zstd=True)
    with app_client([str(tmp_path)]) as client:
        twin = client.get("/api/sessions/only-new").json()
        assert twin["verdict"]["category"] == "unsupported"
        assert (twin["generation"], twin["newerFormat"]) == (None, {"version": 2, "reads": 0, "release": RELEASE})
        page = client.get("/sessions/only-new").text
        assert attrs(page, "[data-newer-format]", "data-newer-format") == ["2"]
        assert any(r.kind == "turn" for r in flow_rows(page))
        assert not parse(page).select("[data-generations]")


def test_a_first_screen_asks_for_its_generations_once_shown(tmp_path: Path) -> None:
    events = turns(200)  # 2,400 events: past the first-screen prefix
    old = write_generation(tmp_path, "long", 0, events[:2200])
    write_generation(tmp_path, "long", 1, events)
    with app_client([str(tmp_path)], first_screen_events=2000) as client:
        key = listed(client)[str(old)]["key"]
        first = client.get(f"/sessions/{key}").text
        assert attrs(first, "[data-generations][hx-get]", "hx-get") == [f"/sessions/{key}/generations"]
        part = client.get(f"/sessions/{key}/generations").text
        assert attrs(part, "[data-generation-earlier]", "data-as-of-seq") == ["2199"]
        assert attrs(part, "[data-generation-current-link]", "href") == ["/sessions/long"]
        newest = client.get("/sessions/long").text
        assert attrs(newest, "[data-newer-format]", "data-newer-format") == ["1"], "the banner needs no read"
