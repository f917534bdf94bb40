"""The notebook's face: ``deflectbench.compare`` and ``deflectbench.leaderboard`` return typed
results holding DataFrames, the same numbers the commands print."""

from __future__ import annotations

import pandas as pd
import pytest

import deflectbench
from deflectbench.analysis.compare.select import CompareError
from support.compare_store import refusal_store


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("api")
    a = refusal_store(root / "a.db", {"acme/m": 0.5, "acme/n": 0.3}, n_claims=6)
    b = refusal_store(root / "b.db", {"acme/m": 0.1}, n_claims=6, seed=1)
    return a, b


def test_compare_returns_dataframes(stores):
    a, b = stores
    c = deflectbench.compare(str(a), str(b), resamples=200)
    assert isinstance(c.table, pd.DataFrame) and isinstance(c.flips, pd.DataFrame)
    assert set(c.table.model_a) == {"a.db:acme/m"}  # the model both stores hold
    r = c.table[(c.table.kind == "outcome") & (c.table.measure == "refusal")]
    overall = r[r.scope == "overall"].iloc[0]
    assert overall.ci_hi < 0 < overall.rate_a
    assert len(c.flips) > 0 and set(c.flips.columns) >= {"claim_id", "outcome_a", "outcome_b"}


def test_two_models_of_one_store(stores):
    a, _ = stores
    c = deflectbench.compare(f"{a}:acme/m", f"{a}:acme/n", resamples=50)
    assert set(c.table.model_b) == {"a.db:acme/n"}
    with pytest.raises(CompareError, match="no model 'acme/z'"):
        deflectbench.compare(f"{a}:acme/z", f"{a}:acme/n")


def test_leaderboard_returns_a_dataframe(stores):
    board = deflectbench.leaderboard([str(s) for s in stores], resamples=100).board
    assert list(board.model) == ["acme/m", "acme/n", "acme/m"]
    assert list(board["rank"]) == [1, 2, 3]
    assert board.rate.is_monotonic_decreasing
