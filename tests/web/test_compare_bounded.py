"""Compare answers at a bounded cost (issue 33): two tool results that differ in every other word (the
compare bomb, 5,000 words) answer within seconds, the pair said to have changed as a whole, in the page
and its twin, and a page of another session asked for meanwhile answers; a small change is still shown word
by word."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.support.runs import tool_run, write_log
from tests.support.server import app_client

BOMB_A = " ".join(["x"] * 5_000)
BOMB_B = " ".join(["x", "y"] * 5_000)


def test_the_compare_bomb_answers_at_once_as_changed_whole(tmp_path: Path) -> None:
    write_log(tmp_path / "a.jsonl", tool_run(BOMB_A, seed=7).events)
    write_log(tmp_path / "b.jsonl", tool_run(BOMB_B, seed=8).events)
    write_log(tmp_path / "c.jsonl", tool_run("the file says hello", seed=9).events)
    write_log(tmp_path / "d.jsonl", tool_run("the file says goodbye", seed=10).events)
    with app_client([str(tmp_path)]) as client:
        keys = {s["path"].rsplit("/", 1)[1]: s["key"] for s in client.get("/api/sessions").json()["sessions"]}
        started = time.monotonic()
        with ThreadPoolExecutor(2) as pool:  # a page of another session asked for while the bomb is compared
            bomb = pool.submit(client.get, "/api/compare", params={"a": keys["a.jsonl"], "b": keys["b.jsonl"]})
            other = pool.submit(client.get, f"/sessions/{keys['c.jsonl']}")
            assert other.result().status_code == 200 and time.monotonic() - started < 20
            twin = bomb.result()
        assert twin.status_code == 200 and time.monotonic() - started < 20
        changed = [r["item"] for r in twin.json()["rows"] if r.get("item") and r["item"]["status"] == "changed"]
        assert changed and changed[0]["whole"] and [op for op, _ in changed[0]["words"]] == ["del", "ins"]
        page = client.get("/compare", params={"a": keys["a.jsonl"], "b": keys["b.jsonl"]}, timeout=60)
        assert "data-compared-whole" in page.text
        small = client.get("/api/compare", params={"a": keys["c.jsonl"], "b": keys["d.jsonl"]}).json()
        pair = next(r["item"] for r in small["rows"] if r.get("item") and r["item"]["status"] == "changed")
        assert not pair["whole"] and ["del", "hello"] in pair["words"] and ["ins", "goodbye"] in pair["words"]
