"""Shared fixtures: the real dsh corpus beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _corpus_or_skip() -> Path:
    if CORPUS.is_dir():
        return CORPUS
    if os.environ.get("CI") == "true":
        pytest.fail(f"the dsh corpus is missing at {CORPUS}; CI must run with ../shared beside the clone")
    pytest.skip(f"the dsh corpus is not at {CORPUS}")


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """`../shared/corpus`: skipped when absent, a failure under CI=true."""
    return _corpus_or_skip()


pytest_plugins = ["pytester"]
