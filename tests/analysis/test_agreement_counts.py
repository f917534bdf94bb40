"""A judge pair's agreement counted for every field and group by one ``np.bincount``
(``tables.agreement._pair_counts``) gives the rows the per-field loop it replaced gave (kept
here as the reference), bit for bit: on random verdicts with fields a judge left unscored,
generations in no group, and values that are not 0 or 1 (refused as before)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.stats.agreement import chance_corrected
from deflectbench.analysis.stats.arrays import binary
from deflectbench.analysis.tables.agreement import _pair_rows


def reference_pair_rows(judges, values, groups, keys, fields) -> list[dict[str, Any]]:
    """_pair_rows as it was: each field's masks and counts in turn."""
    codes, labels = groups
    size = len(labels)
    per_field = []
    for j in range(len(fields)):
        x, y = values[0][:, j], values[1][:, j]
        both = ~np.isnan(x) & ~np.isnan(y) & (codes >= 0)
        xi = binary(x[both].astype(np.int64), "a")
        yi = binary(y[both].astype(np.int64), "b")
        c = codes[both]
        n = np.bincount(c, minlength=size)
        n_a = np.bincount(c[xi == 1], minlength=size)
        n_b = np.bincount(c[yi == 1], minlength=size)
        tp = np.bincount(c[(xi & yi) == 1], minlength=size)
        differ = np.bincount(c[xi != yi], minlength=size)
        kappa, ac1 = chance_corrected(tp, n_a - tp, n_b - tp, n - n_a - n_b + tp)
        per_field.append((n, differ, kappa, ac1))
    rows = []
    for g, label in enumerate(labels):
        for f, (n, differ, kappa, ac1) in zip(fields, per_field, strict=True):
            rows.append(
                {
                    **dict(zip(keys, label, strict=True)),
                    "judge_a": judges[0],
                    "judge_b": judges[1],
                    "field": f,
                    "kappa": float(kappa[g]),
                    "ac1": float(ac1[g]),
                    "disagreement": float(differ[g]) / int(n[g]) if n[g] else math.nan,
                    "n": int(n[g]),
                }
            )
    return rows


def _same(a: Any, b: Any) -> bool:
    return a == b or (
        isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    )


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")  # inf
@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 60),
    st.integers(1, 4),
    st.integers(1, 3),
    st.sampled_from([None, 0.5, 2.0, -1.0, np.inf]),
    st.integers(0, 2**32 - 1),
)
def test_pair_counts_are_the_per_field_loop(n, k, size, odd, seed):
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(2):
        v = rng.integers(0, 2, (n, k)).astype(np.float64)
        v[rng.random((n, k)) < 0.2] = np.nan
        if odd is not None and n and rng.random() < 0.5:
            v[rng.integers(0, n), rng.integers(0, k)] = odd
        values.append(v)
    codes = rng.integers(-1, size, n).astype(np.intp)
    groups = (codes, [(f"m{g}",) for g in range(size)])
    fields = [f"f{j}" for j in range(k)]
    args = (("a", "b"), (values[0], values[1]), groups, ["model"], fields)
    try:
        want = reference_pair_rows(*args)
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e)):
            _pair_rows(*args)
        return
    got = _pair_rows(*args)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert list(g) == list(w)
        assert all(_same(g[c], w[c]) and type(g[c]) is type(w[c]) for c in w)


def reference_wide(verdicts, fields):
    """_wide as it was: a cube of floats (NaN where a judge did not score)."""
    import pandas as pd

    gen_codes, gen_ids = pd.factorize(verdicts["gen_id"], sort=True)
    judge_codes, judges = pd.factorize(verdicts["judge"], sort=True)
    cube = np.full((len(judges), len(gen_ids), len(fields)), np.nan)
    cube[judge_codes, gen_codes] = np.stack(
        [verdicts[f].to_numpy(dtype=np.float64, na_value=np.nan) for f in fields], axis=1
    )
    return judges.tolist(), cube, gen_codes


def reference_groups(verdicts, keys, gen_codes, n_gens):
    """_groups as it was: a pandas groupby of the first verdicts' keys."""
    codes = np.full(n_gens, -1, dtype=np.intp)
    first = ~verdicts["gen_id"].duplicated().to_numpy()
    grouped = verdicts.loc[first, keys].groupby(keys, sort=True)
    numbers = grouped.ngroup().to_numpy(dtype=np.float64)
    kept = ~np.isnan(numbers)
    codes[gen_codes[first][kept]] = numbers[kept].astype(np.intp)
    labels = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index.tolist()]
    return codes, labels


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 40),
    st.integers(2, 3),
    st.booleans(),
    st.sampled_from([["model"], ["model", "level"]]),
    st.integers(0, 2**32 - 1),
)
def test_agreement_tables_are_the_groupby_and_each_pairs_counts(n, n_judges, missing, by, seed):
    """agreement_tables (the verdicts as int8 labels, all generations' counts the groups'
    summed) and agreement_table give the rows of the float cube, each table counted alone."""
    from itertools import combinations

    import pandas as pd

    from deflectbench.analysis.sharing import shared_codes
    from deflectbench.analysis.tables.agreement import _columns, agreement_table, agreement_tables
    from deflectbench.vocab import FIELDS

    rng = np.random.default_rng(seed)
    gens = np.arange(n)
    models = rng.choice(["m-b", "m-a", "z"], n).astype(object)
    if missing and n:
        models[rng.integers(0, n)] = None
    rows = []
    for j in range(n_judges):
        for g in gens[rng.random(n) < 0.9]:
            v = rng.integers(0, 2, len(FIELDS)).astype(np.float64)
            v[rng.random(len(FIELDS)) < 0.1] = np.nan
            rows.append({"gen_id": g, "model": models[g], "level": int(g % 3), "judge": f"j{j}"})
            rows[-1].update(dict(zip(FIELDS, v, strict=True)))
    columns = ["gen_id", "model", "level", "judge", *FIELDS]
    verdicts = pd.DataFrame(rows, columns=columns).astype({"model": "str", "judge": "str"})
    if verdicts.empty:
        return
    with shared_codes():
        got = agreement_tables(verdicts, by=by)
    judges, cube, gen_codes = reference_wide(verdicts, FIELDS)
    everything = (np.zeros(cube.shape[1], dtype=np.intp), [()])
    groups = reference_groups(verdicts, by, gen_codes, cube.shape[1])
    want: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    for a, b in combinations(range(len(judges)), 2):
        args = ((judges[a], judges[b]), (cube[a], cube[b]))
        want[0].extend(reference_pair_rows(*args, everything, [], FIELDS))
        want[1].extend(reference_pair_rows(*args, groups, by, FIELDS))
    alone = agreement_table(verdicts), agreement_table(verdicts, by=by)
    for table, one, rows_wanted, keys in zip(got, alone, want, ([], by), strict=True):
        expected = pd.DataFrame(rows_wanted, columns=_columns(keys))
        pd.testing.assert_frame_equal(table, expected, check_exact=True)
        pd.testing.assert_frame_equal(one, expected, check_exact=True)
