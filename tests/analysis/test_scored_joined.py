"""The scored table's join by positions (``frames.scored._joined``: each row's claim,
template and consensus looked up, every column taken once) is the merges' table
(``_merged``, the code it replaced, kept as the fallback) bit for bit: on random generations
with claims or templates missing, duplicated keys, missing sort keys, generations without a
consensus and undecided outcomes, by the paper's ladder and the release's overwriting."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.compat.quirks import ReleaseQuirks
from deflectbench.analysis.frames.scored import _joined, _merged
from deflectbench.analysis.sharing import shared_codes
from deflectbench.analysis.tables.grouping import sorted_codes
from deflectbench.vocab import FIELDS


@st.composite
def inputs(draw: Any) -> tuple[str, tuple[pd.DataFrame, ...]]:
    n = draw(st.integers(0, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pick = lambda options: [options[i] for i in rng.integers(0, len(options), n)]  # noqa: E731
    claim_ids = ["c2", "c1", "c10"]
    prompt_ids = ["p1", "p2"]
    odd = draw(st.sampled_from(["none", "missing_claim", "dup_claim", "nan_model", "clash"]))
    models = ["m-b", "m-a"] + ([None] if odd == "nan_model" else [])
    gen_ids = rng.permutation(np.arange(10, 10 + 3 * n))[:n].astype(np.int64)
    base = pd.DataFrame(
        {
            "gen_id": gen_ids,
            "benchmark": pd.array(["b"] * n, dtype="str"),
            "model": pd.array(pick(models), dtype="str"),
            "claim_id": pd.array(
                pick([*claim_ids, "c9"] if odd == "missing_claim" else claim_ids), dtype="str"
            ),
            "prompt_id": pd.array(pick(prompt_ids), dtype="str"),
            "sample": np.asarray(pick([0, 1, 2]), dtype=np.int64),
            "output_tokens": rng.integers(0, 50, n),
        }
    )
    claims = pd.DataFrame(
        [(c, i + 1, "ctx", "dom") for i, c in enumerate(claim_ids)]
        + ([("c1", 9, "x", "y")] if odd == "dup_claim" else []),
        columns=["claim_id", "level", "context", "domain"],
    )
    templates = pd.DataFrame(
        [(p, "direct", "none", "explicit") for p in prompt_ids],
        columns=["prompt_id", "framing", "fallacy_requested", "explicitness"],
    )
    if odd == "clash":
        templates["sample"] = 1
    judged = gen_ids[rng.random(n) < 0.8]
    values = rng.integers(0, 2, (len(judged), len(FIELDS))).astype(np.float64)
    if draw(st.booleans()):
        values[rng.random(values.shape) < 0.15] = np.nan
    cons = pd.DataFrame(values, index=pd.Index(np.sort(judged), name="gen_id"), columns=FIELDS)
    cons["n_judges"] = 2
    return odd, (base, claims, templates, cons)


@settings(max_examples=300, deadline=None)
@given(inputs(), st.booleans())
def test_the_join_by_positions_is_the_merges(case, overwrite):
    odd, frames = case
    quirks = ReleaseQuirks(overwrite_outcomes=overwrite)
    try:
        want, want_undecided = _merged(*frames, quirks)
    except Exception as e:  # a merge that fails: the join must not answer
        assert _joined(*frames, quirks) is None, e
        return
    joined = _joined(*frames, quirks)
    if joined is None:
        assert odd in ("missing_claim", "dup_claim", "clash")  # the usual tables are joined
        return
    got, undecided = joined
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.dtypes) == list(want.dtypes)
    np.testing.assert_array_equal(undecided, want_undecided)


def test_the_join_answers_for_the_usual_table():
    """No claim or template missing, no key duplicated: the join, not the merges."""
    n = 12
    base = pd.DataFrame(
        {
            "gen_id": np.arange(n, dtype=np.int64),
            "model": pd.array(["b", "a"] * (n // 2), dtype="str"),
            "claim_id": pd.array(["c1", "c2", "c3"] * (n // 3), dtype="str"),
            "prompt_id": pd.array(["p1"] * n, dtype="str"),
            "sample": np.zeros(n, dtype=np.int64),
        }
    )
    claims = pd.DataFrame({"claim_id": ["c1", "c2", "c3"], "level": [1, 2, 3]})
    templates = pd.DataFrame({"prompt_id": ["p1"], "framing": ["direct"]})
    cons = pd.DataFrame(0.0, index=pd.Index(np.arange(n), name="gen_id"), columns=FIELDS)
    cons["n_judges"] = 2
    assert _joined(base, claims, templates, cons, ReleaseQuirks()) is not None


@settings(max_examples=200, deadline=None)
@given(inputs(), st.booleans())
def test_the_joins_codes_are_the_tables_factorised(case, overwrite):
    """Within shared_codes the join leaves each column's sorted codes (values no kept row
    holds dropped): the tables' ``pd.factorize(table[k], sort=True)``, codes and values."""
    _, frames = case
    with shared_codes():
        joined = _joined(*frames, ReleaseQuirks(overwrite_outcomes=overwrite))
        if joined is None:
            return
        table = joined[0]
        for k in table.columns:
            codes, uniques = sorted_codes(table, k)
            want_codes, want_uniques = pd.factorize(table[k], sort=True)
            np.testing.assert_array_equal(codes, want_codes)
            assert codes.dtype == want_codes.dtype
            pd.testing.assert_index_equal(uniques, want_uniques, exact=True)
