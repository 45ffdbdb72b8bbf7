"""Every row of every real dsh log is classified alike by the page, its JSON twin and *errors only*."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.server import app_client
from tests.web.test_row_classification import assert_classified_alike

pytestmark = pytest.mark.corpus


def test_every_corpus_row_has_one_classification(corpus_dir: Path) -> None:
    with app_client([str(corpus_dir)]) as client:
        listing = client.get("/api/sessions").json()["sessions"]
        # the files under not-sessions/ are listed (each says what it is instead) but have no rows
        keys = [s["key"] for s in listing if "/not-sessions/" not in s["path"]]
        assert len(keys) > 100 and len(listing) - len(keys) == 3
        counts = [assert_classified_alike(client, key) for key in keys]
    errors, stopped, bookkept = (sum(c[i] for c in counts) for i in range(3))
    assert errors > 5 and stopped > 0, "the corpus has failed and stopped tool calls: the walk must meet both"
    assert bookkept > 100, "every real session splices its inbox and logs request headers"
