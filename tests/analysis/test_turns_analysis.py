"""Turn as a factor: turn-2 outcomes by turn-1 outcome and the label-stripped-on-request rate,
checked against an independent pandas computation (and a plain-loop block bootstrap)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from deflectbench.analysis.options import AnalysisOptions
from deflectbench.analysis.summary.turns import turn_analysis
from deflectbench.benchmark.packs import load_pack
from deflectbench.store.turns import turn_prompt_id
from deflectbench.vocab import FIELDS, OUTCOMES

#: A judge's verdict (the 8 fields) per outcome it means, by the paper's ladder.
VERDICT = {
    "refusal": {"refusal": 1},
    "soft_refusal": {"soft_refusal": 1, "WA_present": 1, "any_fallacy_present": 1},
    "labeled_compliance": {"AH_present": 1, "any_fallacy_present": 1, "fallacy_labeled": 1},
    "clean_compliance": {"WA_present": 1, "any_fallacy_present": 1, "compliance_clean": 1},
    "other": {},
}
MODELS = ["m/a", "m/b"]
AFTER = ["refusal", "soft_refusal", "labeled_compliance"]


@pytest.fixture(scope="module")
def pack():
    return load_pack("deflectbench-v1-multiturn")


def synthetic(pack, seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Turn-1 and turn-2 generations of two models with one judge's verdicts, and the links;
    plus the truth: each turn-2 generation's model, claim, turn-1 and turn-2 outcome."""
    rng = np.random.default_rng(seed)
    claims = [c.claim_id for c in pack.claims[:12]]
    templates = [t.prompt_id for t in pack.templates[:5]]
    gens, judg, links, truth = [], [], [], []
    gen_id = 0

    def add(model: str, claim: str, pid: str, sample: int, outcome: str) -> int:
        nonlocal gen_id
        gen_id += 1
        gens.append(
            dict(
                gen_id=gen_id,
                benchmark=pack.key,
                model=model,
                claim_id=claim,
                prompt_id=pid,
                sample=sample,
                error=None,
                input_tokens=1,
                output_tokens=1,
                condition="c",
                finish_reason="stop",
            )
        )
        fields = {f: VERDICT[outcome].get(f, 0) for f in FIELDS}
        judg.append(
            dict(gen_id=gen_id, judge="j", parse_error=0, error=None, consistency_flag=0, **fields)
        )
        return gen_id

    for model in MODELS:
        for claim in claims:
            for pid in templates:
                for sample in (1, 2):
                    after = AFTER[rng.integers(len(AFTER))]
                    parent = add(model, claim, pid, sample, after)
                    # label stripped more often for m/b; refusals mostly hold
                    p = {"m/a": 0.3, "m/b": 0.7}[model]
                    if after == "labeled_compliance":
                        second = (
                            "clean_compliance" if rng.random() < p else OUTCOMES[rng.integers(5)]
                        )
                    else:
                        second = OUTCOMES[rng.integers(5)]
                    child = add(model, claim, turn_prompt_id(pid, 2), sample, second)
                    links.append(
                        dict(
                            gen_id=child,
                            parent_gen_id=parent,
                            turn=2,
                            followup_id=f"after_{after}",
                            after_outcome=after,
                            benchmark=pack.key,
                            model=model,
                            condition="c",
                        )
                    )
                    truth.append(dict(model=model, claim_id=claim, turn1=after, turn2=second))
    return pd.DataFrame(gens), pd.DataFrame(judg), pd.DataFrame(links), pd.DataFrame(truth)


def plain_block_bootstrap(values: np.ndarray, claims: np.ndarray, n: int, seed: int):
    """Resample claims with replacement (the documented draws), one resample at a time."""
    labels = np.array(sorted(set(claims)))
    draws = np.random.default_rng(seed).integers(0, len(labels), size=(n, len(labels)))
    rates = []
    for row in draws:
        picked = np.concatenate([values[claims == labels[i]] for i in row])
        rates.append(picked.mean())
    return values.mean(), *np.quantile(rates, [0.025, 0.975])


def test_turn_two_by_turn_one_matches_pandas(pack) -> None:
    gens, judg, links, truth = synthetic(pack)
    opts = AnalysisOptions(values="rules", n_resamples=300, seed=5)
    turns = turn_analysis(gens, judg, links, pack, opts)
    assert turns is not None
    assert len(turns.scored) == len(truth) == 240
    assert turns.counts["scored"] == 240 and turns.counts["attempted"] == 240

    expected = (
        truth.groupby(["model", "turn1"])["turn2"].value_counts().rename("count").reset_index()
    )
    got = turns.transitions
    for r in expected.itertuples():
        row = got[
            (got.model == r.model) & (got.turn1_outcome == r.turn1) & (got.outcome == r.turn2)
        ]
        assert int(row["count"].iloc[0]) == r.count
        n = int(((truth.model == r.model) & (truth.turn1 == r.turn1)).sum())
        assert int(row["n"].iloc[0]) == n
        assert row["share"].iloc[0] == pytest.approx(r.count / n)
    # every share has its CI around it, five outcomes per group summing to 1
    assert (got["ci_lo"] <= got["share"] + 1e-12).all() and (
        got["share"] <= got["ci_hi"] + 1e-12
    ).all()
    sums = got.groupby(["model", "turn1_outcome"])["share"].sum()
    assert np.allclose(sums, 1.0)

    # The label-stripped rate: turn-1 labeled compliances whose turn 2 is a clean compliance.
    stripped = turns.stripped.set_index("model")
    for model in MODELS:
        mine = truth[(truth.model == model) & (truth.turn1 == "labeled_compliance")]
        hit = (mine["turn2"] == "clean_compliance").to_numpy(dtype=float)
        assert stripped.loc[model, "n"] == len(mine)
        assert stripped.loc[model, "stripped"] == int(hit.sum())
        rate, lo, hi = plain_block_bootstrap(hit, mine["claim_id"].to_numpy(), 300, 5)
        assert stripped.loc[model, "rate"] == pytest.approx(rate)
        assert stripped.loc[model, "ci_lo"] == pytest.approx(lo)
        assert stripped.loc[model, "ci_hi"] == pytest.approx(hi)
    assert stripped.loc["m/a", "rate"] < stripped.loc["m/b", "rate"]


def test_no_later_turn_is_no_turn_analysis(pack) -> None:
    gens, judg, links, _ = synthetic(pack)
    assert turn_analysis(gens, judg, links.iloc[0:0], pack) is None
    assert turn_analysis(gens, judg, [], pack) is None
    v1 = load_pack("deflectbench-v1")
    assert turn_analysis(gens, judg, links, v1) is None  # another pack's turns are not v1's
