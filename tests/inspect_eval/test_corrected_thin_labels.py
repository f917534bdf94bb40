"""The Inspect task's corrected metric on thin labels behaves as its docstring says
(:mod:`deflectbench.inspect_eval.corrected`): labels of one value still give a corrected rate,
inside [0, 1] and flagged, its interval at least the exact bound; the labels-only rate beside it
with the exact (Clopper-Pearson) interval, checked against scipy's ``binomtest``; fewer than 10
labels give NaN; labels that vary and disagree with the judges add no flag and no extra metric.

The metric is called on crafted scores (what the task's human-labels scorer hands it: the
people's fields as the value, the judges' verdict in ``metadata["judged"]``), no model run."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.scorer import SampleScore, Score
from scipy.stats import binomtest

from deflectbench.inspect_eval.corrected import corrected
from deflectbench.vocab import FIELDS

N, CLAIMS, LABELLED = 300, 30, 40


def _exact(hits: int, n: int) -> tuple[float, float]:
    ci = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="exact")
    return ci.low, ci.high


def _scores(human_refusal) -> tuple[list[SampleScore], np.ndarray]:
    """N generations over CLAIMS claims, the judges' refusal planted at 30%; the first
    LABELLED labelled by people with ``human_refusal(i, judged)`` and every other field 0."""
    rng = np.random.default_rng(7)
    judged_refusal = (rng.random(N) < 0.3).astype(int)
    out = []
    for i in range(N):
        judged = {f: 0 for f in FIELDS} | {"refusal": int(judged_refusal[i])}
        judged["outcome"] = "refusal" if judged_refusal[i] else "clean_compliance"
        human = {}
        if i < LABELLED:
            human = {f: 0 for f in FIELDS} | {"refusal": human_refusal(i, judged_refusal[i])}
        out.append(
            SampleScore(
                score=Score(value=human, metadata={"judged": judged}),
                sample_id=i,
                sample_metadata={"claim_id": f"C{i % CLAIMS:02d}"},
            )
        )
    return out, judged_refusal


def test_labels_of_one_value_give_a_bounded_flagged_rate_and_the_exact_labels_only_rate():
    scores, judged = _scores(lambda i, j: 0)  # the people never see a refusal
    m = corrected(resamples=400)(scores)
    assert m["corrected_n_labels"] == LABELLED
    for key in ("refusal", "field_refusal"):
        # the labels-only rate: 0 of 40, its exact interval, as scipy computes it
        lo, hi = _exact(0, LABELLED)
        assert m[f"labels_only_{key}"] == 0.0
        assert (m[f"labels_only_{key}_lower"], m[f"labels_only_{key}_upper"]) == (
            pytest.approx(lo, abs=1e-12),
            pytest.approx(hi, rel=1e-9),
        )
        assert hi == pytest.approx(1 - 0.025 ** (1 / LABELLED))  # about 3.7/n
        # the corrected rate: flagged, inside [0, 1], its interval at least the exact bound
        # judged + a_hi - b_lo (a: people 1 judges 0, b: people 0 judges 1, on the labels)
        assert m[f"corrected_{key}_flagged"] == 1.0
        rate, c_lo, c_hi = (m[f"corrected_{key}{s}"] for s in ("", "_lower", "_upper"))
        assert 0.0 <= c_lo <= rate <= c_hi <= 1.0
        b = int(judged[:LABELLED].sum())
        bound = judged.mean() + _exact(0, LABELLED)[1] - _exact(b, LABELLED)[0]
        assert c_hi >= min(1.0, bound) - 1e-9 and c_hi - c_lo > 0.05  # never [0, 0]
    # a field whose labels are all 0 and which the judges never say either: flagged too
    assert m["corrected_field_WA_present_flagged"] == 1.0
    assert m["labels_only_field_WA_present_upper"] == pytest.approx(_exact(0, LABELLED)[1])


def test_labels_that_vary_and_disagree_add_no_flag_and_no_metric():
    scores, _ = _scores(lambda i, j: 1 - j if i % 5 == 0 else j)  # 8 of 40 disagree
    m = corrected(resamples=200)(scores)
    assert "corrected_refusal_flagged" not in m and "labels_only_refusal" not in m
    assert 0.0 <= m["corrected_refusal_lower"] <= m["corrected_refusal"] <= 1.0
    # the fields the people and the judges never call 1 are thin, and said so
    assert m["corrected_field_WA_present_flagged"] == 1.0


def test_fewer_than_ten_labels_give_no_number():
    scores, _ = _scores(lambda i, j: j)
    few = [s if i < 9 or i >= LABELLED else _unlabelled(s) for i, s in enumerate(scores)]
    m = corrected(resamples=50)(few)
    assert m["corrected_n_labels"] == 9
    assert math.isnan(m["corrected_refusal"]) and math.isnan(m["corrected_refusal_upper"])
    assert not any(k.endswith("_flagged") or k.startswith("labels_only_") for k in m)


def _unlabelled(s: SampleScore) -> SampleScore:
    return SampleScore(
        score=Score(value={}, metadata=s.score.metadata),
        sample_id=s.sample_id,
        sample_metadata=s.sample_metadata,
    )
