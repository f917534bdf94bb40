"""Over-refusal on the benign twins (issue 27, item 3), against a count by hand on a fixture:
per model and framing the share of benign requests refused, beside the manipulative pack's
refusal in the same framing; and the analysis JSON carries it."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from deflectbench.analysis.frames.scored import GEN_COLUMNS, JUDGMENT_COLUMNS
from deflectbench.analysis.summary.build import summarize_frames
from deflectbench.benchmark import load_pack
from deflectbench.vocab import FIELDS

BENIGN, V1 = load_pack("deflectbench-v1-benign"), load_pack("deflectbench-v1")
CLAIMS = [c.claim_id for c in V1.claims[:6]]


def _fixture(
    seed: int = 5,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[tuple[str, str, str], list[int]]]:
    """Two models, both packs, one judge; refusals drawn at random and kept for the count."""
    rng = np.random.default_rng(seed)
    gens, judg, refused = [], [], {}
    gid = itertools.count(1)
    for model, pack in itertools.product(("a/m", "b/m"), (BENIGN, V1)):
        for claim, t in itertools.product(CLAIMS, pack.templates):
            g = next(gid)
            gens.append({"gen_id": g, "benchmark": pack.key, "model": model, "claim_id": claim,
                         "prompt_id": t.prompt_id, "sample": 1, "error": None, "input_tokens": 1,
                         "output_tokens": 1, "condition": "c", "finish_reason": "stop"})  # fmt: skip
            r = int(rng.random() < (0.3 if model == "a/m" else 0.6))
            clean = int(not r and rng.random() < 0.2)
            refused.setdefault((model, pack.pack, t.framing), []).append(r)
            verdict = dict.fromkeys(FIELDS, 0) | {"refusal": r}
            if clean:
                verdict |= {"WA_present": 1, "any_fallacy_present": 1, "compliance_clean": 1}
            refused.setdefault((model, pack.pack, "clean:" + t.framing), []).append(clean)
            judg.append({"gen_id": g, "judge": "lexical", "parse_error": 0, "error": None,
                         "consistency_flag": 0, **verdict})  # fmt: skip
    return (
        pd.DataFrame(gens, columns=[*GEN_COLUMNS, "condition", "finish_reason"]),
        pd.DataFrame(judg, columns=JUDGMENT_COLUMNS),
        refused,
    )


def _flat(lists) -> list[int]:
    return [x for part in lists for x in part]


def test_over_refusal_against_an_independent_count():
    gens, judg, count = _fixture()
    s = summarize_frames(gens, judg, V1)
    table = s.validity.over_refusal
    assert table is not None
    for row in table.to_dict(orient="records"):
        m, f = row["model"], row["framing"]
        framings = [f] if f != "all" else sorted({t.framing for t in BENIGN.templates})
        benign = _flat(count[(m, BENIGN.pack, x)] for x in framings)
        clean = _flat(count[(m, BENIGN.pack, "clean:" + x)] for x in framings)
        harmful = (
            _flat(v for (mm, p, x), v in count.items() if mm == m and p == V1.pack and ":" not in x)
            if f == "all"
            else count.get((m, V1.pack, f), [])
        )
        assert row["n_benign"] == len(benign)
        assert row["over_refusal"] == sum(benign) / len(benign)
        assert row["unlabeled_fallacy"] == sum(clean) / len(clean)
        assert row["n_manipulative"] == len(harmful)
        assert row["refusal"] == sum(harmful) / len(harmful)
    assert {r["framing"] for r in table.to_dict(orient="records")} == {
        "all",
        "direct",
        "political",
        "coach",
    }
    # the same numbers from the benign pack's own summary, and in the JSON
    s2 = summarize_frames(gens, judg, BENIGN)
    pd.testing.assert_frame_equal(s2.validity.over_refusal, table)
    rows = s.to_json()["validity_checks"]["over_refusal"]
    assert len(rows) == len(table) and rows[0]["model"] == "a/m"


def test_no_benign_twins_no_table():
    gens, judg, _ = _fixture()
    only_v1 = gens[gens["benchmark"] == V1.key]
    assert (
        summarize_frames(
            only_v1, judg[judg["gen_id"].isin(only_v1["gen_id"])], V1
        ).validity.over_refusal
        is None
    )


def _plain_ci(values, claims, n_resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """A claim-block bootstrap written plainly: the claims in sorted order, each resample
    ``n_resamples`` draws of as many claims with replacement (the documented draws,
    ``default_rng(seed).integers(0, C, size=(R, C))``), a resample's rate the mean over every
    row of its drawn claims, the 2.5th and 97.5th percentiles (linear)."""
    order = sorted(set(claims))
    rows: dict[str, list[float]] = {c: [] for c in order}
    for v, c in zip(values, claims, strict=True):
        if v == v:  # not NaN
            rows[c].append(float(v))
    draws = np.random.default_rng(seed).integers(0, len(order), size=(n_resamples, len(order)))
    reps = []
    for draw in draws:
        total = n = 0.0
        for k in draw:
            total += sum(rows[order[k]])
            n += len(rows[order[k]])
        if n:
            reps.append(total / n)
    lo, hi = np.percentile(reps, [2.5, 97.5])
    return float(lo), float(hi)


def test_every_over_refusal_ci_against_a_plain_loop_block_bootstrap():
    gens, judg, _ = _fixture(seed=9)
    s = summarize_frames(gens, judg, V1)
    table = s.validity.over_refusal
    assert table is not None
    frame = gens.merge(judg, on="gen_id")
    frame = frame.merge(
        pd.DataFrame(
            [(t.prompt_id, t.framing) for p in (BENIGN, V1) for t in p.templates],
            columns=["prompt_id", "framing"],
        ).drop_duplicates("prompt_id"),
        on="prompt_id",
    )
    for row in table.to_dict(orient="records"):
        m, f = row["model"], row["framing"]
        for rate, pack, column in (
            ("over_refusal", BENIGN, "refusal"),
            ("unlabeled_fallacy", BENIGN, "compliance_clean"),
            ("refusal", V1, "refusal"),
        ):
            part = frame[(frame["model"] == m) & (frame["benchmark"] == pack.key)]
            if f != "all":
                part = part[part["framing"] == f]
            lo, hi = _plain_ci(part[column].tolist(), part["claim_id"].tolist())
            if part[column].nunique() == 1:  # one value: the exact bound over its claims
                bound = 0.025 ** (1 / part["claim_id"].nunique())
                lo, hi = (0.0, 1 - bound) if part[column].iloc[0] == 0 else (bound, 1.0)
            assert abs(row[f"{rate}_lo"] - lo) < 1e-12 and abs(row[f"{rate}_hi"] - hi) < 1e-12
            assert 0.0 <= row[f"{rate}_lo"] <= row[rate] <= row[f"{rate}_hi"] <= 1.0, (rate, row)
        assert row["claims_benign"] == row["claims_manipulative"] == len(CLAIMS)
    # the JSON carries each bound, the small-sample note says 6 claims are few
    j = s.to_json()["validity_checks"]
    assert j["over_refusal"][0]["over_refusal_lo"] == table.iloc[0]["over_refusal_lo"]
    assert j["over_refusal_correction"] is None  # no labels: nothing corrected
    assert "over-refusal: a/m in the benign twins (6 claims)" in j["over_refusal_note"]


def test_one_claim_gives_no_interval():
    gens, judg, _ = _fixture()
    one = gens[gens["claim_id"] == CLAIMS[0]]
    s = summarize_frames(one, judg[judg["gen_id"].isin(one["gen_id"])], V1)
    row = s.validity.over_refusal.iloc[0]
    assert row["claims_benign"] == 1 and np.isnan(row["over_refusal_lo"])
    assert "A CI over one claim is undefined" in s.validity.over_refusal_note


def test_a_rate_of_one_value_gets_the_exact_bound_not_a_zero_width_interval():
    gens, judg, _ = _fixture()
    judg = judg.assign(compliance_clean=0, WA_present=0, any_fallacy_present=0)
    row = summarize_frames(gens, judg, V1).validity.over_refusal.iloc[0]
    assert row["framing"] == "all" and row["unlabeled_fallacy"] == 0.0
    # no event in 6 claims: [0, 1 - 0.025^(1/6)] = [0, 45.9%], not [0, 0]
    assert row["unlabeled_fallacy_lo"] == 0.0
    assert abs(row["unlabeled_fallacy_hi"] - (1 - 0.025 ** (1 / 6))) < 1e-12
    assert abs(row["unlabeled_fallacy_hi"] - 0.4593) < 1e-4
