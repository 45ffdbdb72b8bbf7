"""Shared fixtures (the real dsh corpus beside the checkout) and the suite's lanes.

Each test belongs to exactly one lane, a marker (pyproject's `markers` say what each needs), so that
`pytest -m web` runs that lane and no other. A test's folder names its lane; a test that needs what another
lane needs (the corpus, real dsh, a built wheel) says so with that lane's marker instead, and only one. A unit
or web test that takes seconds whatever its code does (a process of its own, a workload at scale) is `slow`:
out of the loop of a change, in `make test`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
TESTS = Path(__file__).resolve().parent

FOLDER_LANES = {"unit": "unit", "web": "web", "e2e": "browser", "corpus": "corpus", "team": "team"}
LANES = frozenset({*FOLDER_LANES.values(), "oracle", "wheel", "slow"})
# The loop of a change's lanes hold their folders' tests and no others: `make test-fast` collects those folders
# alone, not importing the rest of the suite (Playwright's and the team's modules) only to deselect it.
LOOP_LANES = frozenset({"unit", "web"})
# The team lane shares one PostgreSQL and one SeaweedFS (tests/team/conftest.py): under `--dist loadgroup`
# its tests go to one xdist worker, which starts them once, not once per worker.
SHARED_SERVERS = {"team": "team-servers"}


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


def lane_of(item: pytest.Item) -> str:
    """The one lane `item` runs in: the lane marker it carries, else its folder's."""
    marked = {m.name for m in item.iter_markers() if m.name in LANES}
    if len(marked) > 1:
        raise pytest.UsageError(f"{item.nodeid} is marked for lanes {sorted(marked)}: a test runs in exactly one")
    folder = item.path.relative_to(TESTS).parts[0]
    if marked:
        lane = marked.pop()
        if lane in LOOP_LANES and FOLDER_LANES.get(folder) != lane:
            raise pytest.UsageError(f"{item.nodeid} is marked {lane}: that lane's tests are in tests/{lane} alone")
        return lane
    if folder not in FOLDER_LANES:
        raise pytest.UsageError(f"{item.nodeid}: tests/{folder} is no lane's folder; mark the test with its lane")
    return FOLDER_LANES[folder]


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects, and before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        lane = lane_of(item)
        item.add_marker(lane)
        if lane in SHARED_SERVERS:
            item.add_marker(pytest.mark.xdist_group(SHARED_SERVERS[lane]))


pytest_plugins = ["pytester"]
