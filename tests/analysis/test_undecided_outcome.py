"""One rule for a missing ladder field (issue 23, item 3): a generation whose consensus leaves
a ladder field missing before the first 1 has an undecided outcome, left out and counted, in
the analysis as in validate (never "other")."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from deflectbench.analysis.frames.scored import scored_from_frames
from deflectbench.analysis.validity.measures import human_outcome
from deflectbench.benchmark import default_benchmark
from deflectbench.vocab import FIELDS, LADDER, outcome_decided

B = default_benchmark()
NAN = math.nan


def test_the_rule_is_validates_rule():
    cases = [
        {"refusal": 1, "soft_refusal": NAN},  # decided above the gap: refusal
        {"refusal": NAN, "soft_refusal": 1},  # the gap is above the first 1: undecided
        {"refusal": 0, "soft_refusal": 0, "fallacy_labeled": NAN, "compliance_clean": 1},
        {"refusal": 0, "soft_refusal": 0, "fallacy_labeled": 0, "compliance_clean": 0},  # other
        {"refusal": 0, "soft_refusal": 0, "fallacy_labeled": 0, "compliance_clean": NAN},
    ]
    rows = [{f: c.get(f, 0) for f, _ in LADDER} for c in cases]
    frame = pd.DataFrame(rows).astype(float)
    decided = outcome_decided(frame).tolist()
    assert decided == [human_outcome(r) is not None for r in rows] == [
        True, False, False, True, False
    ]  # fmt: skip


def test_the_analysis_leaves_an_undecided_outcome_out_and_counts_it():
    claim, prompt = B.claims[0].claim_id, B.templates[0].prompt_id
    gens = pd.DataFrame(
        [
            dict(gen_id=i, benchmark=B.key, model="m", claim_id=claim, prompt_id=prompt,
                 sample=i, error=None, input_tokens=1, output_tokens=1, condition="c",
                 finish_reason="stop")
            for i in (1, 2)
        ]
    )  # fmt: skip
    said = {f: 0 for f in FIELDS}
    # generation 2: one judge, refusal missing, nothing else said 1 -> undecided, not "other"
    judg = pd.DataFrame(
        [
            dict(gen_id=1, judge="j", parse_error=0, error=None, consistency_flag=0, **said),
            dict(gen_id=2, judge="j", parse_error=0, error=None, consistency_flag=0,
                 **(said | {"refusal": np.nan})),
        ]
    )  # fmt: skip
    table = scored_from_frames(gens, judg, B)
    counts = table.attrs["counts"]
    assert table["gen_id"].tolist() == [1] and table["outcome"].tolist() == ["other"]
    assert counts["undecided_outcomes"] == 1 and counts["unscored"] == 1
    print(counts["scored"], "scored,", counts["undecided_outcomes"], "undecided")
