"""Every cut's paired bootstrap in one pass (issue 36): each cut's numbers are exactly those of
the bootstrap run on the cut's rows alone (the per-claim sums in row order, the same draws), and
against the definition written as a plain loop; the comparison table is the one the cut-by-cut
computation gave, bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.compare.paired import paired_bootstrap, paired_bootstrap_cuts
from deflectbench.analysis.compare.table import _cuts, _matrix, compare_scored, with_holm
from deflectbench.benchmark import default_benchmark
from deflectbench.vocab import FIELDS, OUTCOMES

FIELDS_OF = {
    "refusal": {"refusal": 1},
    "soft_refusal": {"soft_refusal": 1, "any_fallacy_present": 1},
    "labeled_compliance": {"fallacy_labeled": 1, "any_fallacy_present": 1, "WA_present": 1},
    "clean_compliance": {"compliance_clean": 1, "any_fallacy_present": 1},
    "other": {},
}


def same(x: float, y: float) -> bool:
    """Equal to the bit, NaN equal to NaN."""
    return (math.isnan(x) and math.isnan(y)) or x == y


def plain_cut(a, ca, b, cb, n_resamples, seed, level=0.95):
    """One cut's paired bootstrap of one column, as the definition reads: the cut's claims
    (either side) sorted, drawn with replacement, each side's rate over its drawn claims' rows
    (NaN left out)."""
    labels = sorted(set(ca) | set(cb))
    draws = np.random.default_rng(seed).integers(0, len(labels), size=(n_resamples, len(labels)))
    diffs = []
    for r in range(n_resamples):
        sa = na = sb = nb = 0.0
        for j in draws[r]:
            for x, c in zip(a, ca, strict=True):
                if c == labels[j] and not math.isnan(x):
                    sa, na = sa + x, na + 1
            for x, c in zip(b, cb, strict=True):
                if c == labels[j] and not math.isnan(x):
                    sb, nb = sb + x, nb + 1
        diffs.append(sb / nb - sa / na if na and nb else math.nan)
    d = np.array(diffs)
    tail = (1 - level) / 2
    lo, hi = np.nanquantile(d, [tail, 1 - tail])
    return float(np.nanmean(b) - np.nanmean(a)), float(lo), float(hi)


def test_each_cut_equals_the_definition_on_its_rows():
    rng = np.random.default_rng(8)
    n_a, n_b = 120, 100
    ca = [f"c{i:02d}" for i in rng.integers(0, 10, size=n_a)]
    cb = [f"c{i:02d}" for i in rng.integers(0, 10, size=n_b)]
    a = np.where(rng.random(n_a) < 0.1, np.nan, (rng.random(n_a) < 0.4) / 3)
    b = np.where(rng.random(n_b) < 0.1, np.nan, (rng.random(n_b) < 0.6) / 3)
    # cut 0: every row; cuts 1-3: a grouping (-1: in none), cut 3 only on claims c0*-c04
    ga = np.where(
        np.array([c < "c05" for c in ca]), rng.integers(1, 4, n_a), rng.integers(1, 3, n_a)
    )
    gb = np.where(
        np.array([c < "c05" for c in cb]), rng.integers(1, 4, n_b), rng.integers(1, 3, n_b)
    )
    ga[:7], gb[:5] = -1, -1
    cuts = paired_bootstrap_cuts(
        a, ca, [np.zeros(n_a, dtype=np.int64), ga], b, cb, [np.zeros(n_b, dtype=np.int64), gb],
        4, n_resamples=200, seed=3,
    )  # fmt: skip
    for i in range(4):
        ia = [k for k in range(n_a) if i == 0 or ga[k] == i]
        ib = [k for k in range(n_b) if i == 0 or gb[k] == i]
        diff, lo, hi = plain_cut(a[ia], [ca[k] for k in ia], b[ib], [cb[k] for k in ib], 200, 3)
        assert cuts.diffs.diff[i, 0] == pytest.approx(diff, abs=1e-12)
        assert cuts.diffs.lo[i, 0] == pytest.approx(lo, abs=1e-12)
        assert cuts.diffs.hi[i, 0] == pytest.approx(hi, abs=1e-12)
        assert cuts.n_a[i, 0] == int((~np.isnan(a[ia])).sum())
        assert cuts.n_b[i, 0] == int((~np.isnan(b[ib])).sum())


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(-1, 2), st.sampled_from([0.0, 1.0, 0.5, math.nan])), min_size=1, max_size=40),
    st.lists(st.tuples(st.integers(0, 5), st.integers(-1, 2), st.sampled_from([0.0, 1.0, 1 / 3, math.nan])), min_size=1, max_size=40),
    st.integers(0, 2**16),
)  # fmt: skip
def test_a_cut_is_the_bootstrap_of_its_rows_alone_to_the_bit(rows_a, rows_b, seed):
    """(claim, cut, value) rows on each side: cut i of the one pass is paired_bootstrap on cut
    i's rows, bit for bit (both columns: the value and its complement)."""

    def side(rows):
        claims = [f"k{c}" for c, _, _ in rows]
        cut = np.array([g for _, g, _ in rows], dtype=np.int64)
        values = np.array([[v, 1 - v] for _, _, v in rows])
        return claims, cut, values

    ca, ga, va = side(rows_a)
    cb, gb, vb = side(rows_b)
    res = paired_bootstrap_cuts(va, ca, [ga], vb, cb, [gb], 3, n_resamples=60, seed=seed)
    for i in range(3):
        ia, ib = ga == i, gb == i
        alone = paired_bootstrap(
            va[ia], np.array(ca, dtype=object)[ia], vb[ib], np.array(cb, dtype=object)[ib],
            n_resamples=60, seed=seed,
        )  # fmt: skip
        for got, want in zip(res.diffs, alone, strict=True):
            assert all(same(float(x), float(y)) for x, y in zip(got[i], want, strict=True))


def scored(seed: int, model: str) -> pd.DataFrame:
    """A scored table of 20 claims x every template x 2 samples, a field missing now and then,
    one template left out of B's side and one claim left out of a framing."""
    b = default_benchmark()
    rng = np.random.default_rng(seed)
    rows = []
    for claim in [c.claim_id for c in b.claims][:20]:
        for t in b.templates:
            for s in (1, 2):
                outcome = OUTCOMES[int(rng.integers(0, 5))]
                fields = {
                    f: float(v) for f, v in (dict.fromkeys(FIELDS, 0) | FIELDS_OF[outcome]).items()
                }
                if rng.random() < 0.05:
                    fields["RH_present"] = math.nan
                rows.append({"claim_id": claim, "prompt_id": t.prompt_id, "sample": s,
                             "framing": t.framing, **fields, "outcome": outcome})  # fmt: skip
    out = pd.DataFrame(rows)
    first = b.templates[0]
    return out[~((out["framing"] == first.framing) & (out["claim_id"] == out["claim_id"][0]))]


def one_cut_at_a_time(a, b, *, model_a, model_b, n_resamples, seed):
    """The table as it was computed before the one pass: each cut's rows taken out, and
    paired_bootstrap on them."""
    rows = []
    for scope, framing, template in _cuts(a, b):
        if scope == "overall":
            sa, sb = a, b
        elif scope == "framing":
            sa, sb = a[a["framing"] == framing], b[b["framing"] == framing]
        else:
            sa, sb = a[a["prompt_id"] == template], b[b["prompt_id"] == template]
        ma, mb = _matrix(sa), _matrix(sb)
        res = paired_bootstrap(ma, sa["claim_id"].to_numpy(), mb, sb["claim_id"].to_numpy(),
                               n_resamples=n_resamples, seed=seed)  # fmt: skip
        for j in range(ma.shape[1]):
            rows.append((scope, framing, template, res.rate_a[j], res.rate_b[j], res.lo[j],
                         res.hi[j], res.p[j], res.lo_a[j], res.hi_a[j], res.n_claims[j],
                         int((~np.isnan(ma[:, j])).sum()), int((~np.isnan(mb[:, j])).sum())))  # fmt: skip
    return rows


def test_the_table_is_the_one_cut_by_cut_computation_gave():
    a = scored(1, "old")
    b = scored(2, "new")
    b = b[b["prompt_id"] != default_benchmark().templates[-1].prompt_id]
    table = compare_scored(a, b, model_a="old", model_b="new", n_resamples=150, seed=9)
    want = one_cut_at_a_time(a, b, model_a="old", model_b="new", n_resamples=150, seed=9)
    got = table[["scope", "framing", "template", "rate_a", "rate_b", "ci_lo", "ci_hi", "p",
                 "a_lo", "a_hi", "n_claims", "n_a", "n_b"]].itertuples(index=False)  # fmt: skip
    got = list(got)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert [None if pd.isna(x) else x for x in g[:3]] == list(w[:3])
        assert all(same(float(x), float(y)) for x, y in zip(g[3:], w[3:], strict=True)), g[:3]
    assert with_holm(table)["p_holm"].equals(table["p_holm"])


def test_whole_number_sums_side_by_side_are_the_same_bits_as_alone():
    """The cuts' per-claim sums of 0/1 values drawn in one product: each block's resample sums
    are those of its own product, bit for bit; other values keep one product per block."""
    from deflectbench.analysis.calibration.draws import claim_multiplicities
    from deflectbench.analysis.compare.paired import _drawn

    rng = np.random.default_rng(2)
    weights = claim_multiplicities(80, 1000, 0)
    blocks = [rng.integers(0, 40, size=(80, 13)).astype(float) for _ in range(12)]
    for got, block in zip(_drawn(weights, blocks), blocks, strict=True):
        assert np.array_equal(got, weights @ block)
    thirds = [b / 3 for b in blocks]
    for got, block in zip(_drawn(weights, thirds), thirds, strict=True):
        assert np.array_equal(got, weights @ block)
