"""The tables grouped by outcome, by numpy codes, give the numbers the pandas code they replace
gave (kept here as the reference), bit for bit: on random scored tables with missing groups,
missing outcomes and values off the ladder, inside the summary's scope and out of it."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.sharing import shared_codes
from deflectbench.analysis.stats.hypothesis import chi2_independence
from deflectbench.analysis.tables.significance import (
    chi2_model_outcome,
    outcome_count_matrix,
    outcome_counts,
)
from deflectbench.vocab import OUTCOMES


def reference_chi2_model_outcome(scored: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """chi2_model_outcome as it was: on the crosstab's count table."""
    counts = outcome_counts(scored, by).to_numpy(dtype=np.float64).reshape(-1, len(OUTCOMES))
    res = chi2_independence(counts)
    row = {"statistic": res.statistic, "dof": res.dof, "p_value": res.p_value, "n": res.n}
    return pd.DataFrame([row | {"cramers_v": res.cramers_v}])


@st.composite
def scored_tables(draw: Any) -> pd.DataFrame:
    n = draw(st.integers(0, 120))
    models = draw(st.lists(st.sampled_from(["m-b", "m-a", "Z", None]), min_size=1, max_size=4))
    outcomes = draw(st.lists(st.sampled_from([*OUTCOMES, None, "odd"]), min_size=1, max_size=7))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pick = lambda options: [options[i] for i in rng.integers(0, len(options), n)]  # noqa: E731
    return pd.DataFrame(
        {
            "model": pd.array(pick(models), dtype="str"),
            "level": pick([3, 1, 2]),
            "outcome": pd.Series(pick(outcomes), dtype=object),
        }
    )


def _nonzero(t: np.ndarray) -> np.ndarray:
    return t[t.sum(axis=1) > 0]


@settings(max_examples=200, deadline=None)
@given(scored_tables(), st.sampled_from(["model", "level"]), st.booleans())
def test_chi2_model_outcome_is_the_crosstab_version(df, by, shared):
    want = reference_chi2_model_outcome(df, by)
    with shared_codes() if shared else contextlib.nullcontext():
        got = chi2_model_outcome(df, by)
        matrix = outcome_count_matrix(df, by)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    counts = outcome_counts(df, by).to_numpy(dtype=np.float64).reshape(-1, len(OUTCOMES))
    np.testing.assert_array_equal(_nonzero(matrix), _nonzero(counts))  # the same rows, in order
