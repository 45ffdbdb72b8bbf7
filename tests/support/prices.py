"""Prices as genai-prices gives them, asked of the library directly: what the cost tests compare dsh-inspect's
pricing with."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from genai_prices import Usage as Counted
from genai_prices import calc_price

from tests.support.logs import load_path

HOME = Path("/work/shared/corpus/dsh-home/sessions")
COMPACTED = "session-2d63c78e-16f5-4333-ae51-0ea39805a2a6"  # five answered calls and one compaction's
# what that session's compaction's own model call logged (its `compaction/summary`'s usage)
COMPACTION_USAGE = {"inputTokens": 126, "cacheReadTokens": 64, "outputTokens": 12, "reasoningTokens": 8}


def library_price(usage: dict[str, int], at: int) -> Decimal:
    """genai-prices' price, in USD, for `usage` on DeepSeek's deepseek-v4-flash at `at` (epoch ms). dsh's input
    count leaves cache reads out; the library's holds them."""
    counted = Counted(
        input_tokens=usage["inputTokens"] + usage["cacheReadTokens"],
        cache_read_tokens=usage["cacheReadTokens"],
        output_tokens=usage["outputTokens"],
    )
    when = datetime.fromtimestamp(at / 1000, tz=UTC)
    return calc_price(counted, "deepseek-v4-flash", provider_id="deepseek", genai_request_timestamp=when).total_price


def corpus_compaction() -> tuple[int, Decimal]:
    """The `COMPACTED` session's compaction summary: its seq, and its call's price as the library gives it."""
    (path,) = HOME.glob(f"*/{COMPACTED}/session.jsonl.zstd")
    log = load_path(path)
    (seq,) = [seq for seq, kind in enumerate(log.types) if kind == "compaction/summary"]
    return seq, library_price(COMPACTION_USAGE, log.event(seq).time)
