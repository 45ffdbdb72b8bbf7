"""Search across the team's uploads (real PostgreSQL and SeaweedFS, two dsh-inspect processes): what one
process accepts, the other finds at once, Chinese inside an instructions card included; a delete by either
takes the hits from both; processes searching together write each upload's rows once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.instructions import instructions_log
from tests.support.process import ServeProcess, serve_process
from tests.support.uploads import jsonl_bytes
from tests.team.conftest import TeamStore

pytestmark = pytest.mark.team

RULE = "价格以人民币计"


def start(team: TeamStore, data_dir: Path) -> Any:
    return serve_process([], data_dir, options=team.options, env=team.env)


def search(server: ServeProcess, **params: Any) -> dict[str, Any]:
    response = httpx.get(f"{server.url}/api/search", params=params, timeout=120)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def upload(server: ServeProcess, data: bytes, name: str) -> dict[str, Any]:
    response = httpx.post(f"{server.url}/api/uploads", params={"name": name}, content=data, timeout=120)
    assert response.status_code == 201, response.text
    stored: dict[str, Any] = response.json()
    return stored


def test_an_upload_through_one_process_is_found_by_the_other_at_once_and_gone_from_both_when_deleted(
    team_store: TeamStore, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        a = stack.enter_context(start(team_store, tmp_path / "a"))
        b = stack.enter_context(start(team_store, tmp_path / "b"))
        assert search(b, q=RULE)["total"] == 0  # b's index is warm before the upload: it must still see it
        shop = upload(a, instructions_log("shop", f"{RULE}，不含运费。"), "shop.jsonl")
        upload(a, instructions_log("other", "价格以欧元计，不含运费。"), "other.jsonl")

        found = search(b, q=RULE)
        (hit,) = found["hits"]
        assert (hit["key"], hit["kind"], hit["form"]) == ("shop", "context", "instructions")
        assert f"<mark>{RULE}</mark>" in hit["html"]
        start_at, end_at = hit["marks"][0]
        assert hit["snippet"][start_at:end_at] == RULE
        page = httpx.get(f"{b.url}{hit['url']}", timeout=60)
        assert page.status_code == 200 and hit["anchor"] in page.text, "the hit opens its row on the other process"
        assert [h["anchor"] for h in search(a, q=RULE)["hits"]] == [hit["anchor"]], "the same hit from both"
        assert [h["anchor"] for h in search(b, q="人民")["hits"]] == [hit["anchor"]], "two characters find it too"
        assert search(b, q="SHOP RULES", form="instructions")["sessions"] == 2, "any case, with a facet"
        assert search(b, q="100%_")["total"] == 0, "% and _ are literal characters, not wildcards"
        assert {h["key"] for h in search(b, q="不含运费")["hits"]} == {"shop", "other"}

        response = httpx.delete(f"{a.url}/api/uploads/{shop['upload']['digest']}", timeout=60)
        assert response.status_code == 200
        for server in (a, b):
            assert search(server, q=RULE)["total"] == 0, f"{server.url} no longer finds the deleted upload"
            assert {h["key"] for h in search(server, q="不含运费")["hits"]} == {"other"}, "the other is still found"


def test_processes_searching_together_write_each_uploads_rows_once(team_store: TeamStore, tmp_path: Path) -> None:
    import psycopg

    with ExitStack() as stack:
        a = stack.enter_context(start(team_store, tmp_path / "a"))
        b = stack.enter_context(start(team_store, tmp_path / "b"))
        for n in range(6):
            upload(a if n % 2 else b, instructions_log(f"shop-{n}", f"{RULE} {n}号店"), f"shop-{n}.jsonl")
        servers = [a, b] * 4
        with ThreadPoolExecutor(len(servers)) as pool:
            results = list(pool.map(lambda s: search(s, q=RULE), servers))
        # every search answered in full while the others wrote: a second write of an upload would have failed one
        assert {r["sessions"] for r in results} == {6}
        with psycopg.connect(team_store.store) as conn:
            uploads = conn.execute("SELECT count(*) FROM search_uploads").fetchone()
            rows = conn.execute("SELECT count(*) FROM search_rows GROUP BY chain").fetchall()
        assert uploads == (6,) and len(rows) == 6 and len(set(rows)) == 1, "each upload's rows written once"
        assert [search(s, q=RULE)["indexed"] for s in (a, b)] == [0, 0], "nothing left to index in either"
        assert search(a, q="3号店")["sessions"] == 1


def test_a_nul_or_an_overlong_phrase_is_no_error_on_postgresql(team_store: TeamStore, tmp_path: Path) -> None:
    with start(team_store, tmp_path / "one") as server:
        upload(server, instructions_log("nul-query", RULE), "session.jsonl")
        assert search(server, q=f"{RULE}\x00")["total"] > 0  # PostgreSQL refuses a NUL in text: dropped
        assert search(server, q="\x00")["total"] == 0
        refused = httpx.get(f"{server.url}/api/search", params={"q": "word " * 2_400}, timeout=60)
        assert refused.status_code == 422 and len(refused.content) < 2_000


def test_a_phrase_matching_more_rows_than_are_counted_says_so_on_postgresql(
    team_store: TeamStore, tmp_path: Path
) -> None:
    with start(team_store, tmp_path / "one") as server:
        for n in range(3):  # 1,200 rows say "Read": each turn's call and its result
            upload(server, jsonl_bytes(f"long-{n}", 200), f"long-{n}.jsonl")
        over = search(server, q="Read")
        assert (over["total"], over["countedAll"], over["shown"]) == (1000, False, 200)
        places = [(hit["key"], hit["seq"]) for hit in over["hits"]]
        assert places == sorted(places), "the hits shown are in session then row order"
        assert all(hit["snippet"] for hit in over["hits"])
        narrowed = search(server, q="Read", kind="tool-call")
        assert (narrowed["total"], narrowed["sessions"], narrowed["countedAll"]) == (600, 3, True)
