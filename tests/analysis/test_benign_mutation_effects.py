"""Mutations against their origins (issue 27, item 3), on a fixture, against a plain loop:
per model and kind, the mean paired difference over (claim, origin template) and its
claim-block CI, the same under the same seed."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from deflectbench.analysis.frames.scored import GEN_COLUMNS, JUDGMENT_COLUMNS
from deflectbench.analysis.summary.build import summarize_frames
from deflectbench.benchmark import load_pack
from deflectbench.benchmark.loader import parse_bytes
from deflectbench.benchmark.mutate import mutate
from deflectbench.vocab import FIELDS

V1 = load_pack("deflectbench-v1")
MUT = parse_bytes(mutate("deflectbench-v1", ("persona", "encode"), 3), "m.json", "m")
CLAIMS = [c.claim_id for c in V1.claims[:8]]


def _fixture():
    rng = np.random.default_rng(11)
    gens, judg, said = [], [], {}
    gid = itertools.count(1)
    for pack, sample in itertools.product((V1, MUT), (1, 2)):
        for claim, t in itertools.product(CLAIMS, pack.templates):
            g = next(gid)
            p = 0.7 if "__persona" in t.prompt_id else 0.4
            r = int(rng.random() < p)
            said[(pack.pack, claim, t.prompt_id, sample)] = r
            gens.append({"gen_id": g, "benchmark": pack.key, "model": "a/m", "claim_id": claim,
                         "prompt_id": t.prompt_id, "sample": sample, "error": None,
                         "input_tokens": 1, "output_tokens": 1, "condition": "c",
                         "finish_reason": "stop"})  # fmt: skip
            judg.append({"gen_id": g, "judge": "lexical", "parse_error": 0, "error": None,
                         "consistency_flag": 0, **dict.fromkeys(FIELDS, 0), "refusal": r})  # fmt: skip
    gens = pd.DataFrame(gens, columns=[*GEN_COLUMNS, "condition", "finish_reason"])
    return gens, pd.DataFrame(judg, columns=JUDGMENT_COLUMNS), said


def test_paired_differences_against_a_plain_loop():
    gens, judg, said = _fixture()
    table = summarize_frames(gens, judg, MUT).validity.mutations
    assert table is not None
    refusal = table[table["field"] == "refusal"].set_index("mutation")
    assert set(refusal.index) == {"persona", "encode"}
    for kind in ("persona", "encode"):
        diffs = []
        for claim, t in itertools.product(CLAIMS, V1.templates):
            mut = np.mean([said[(MUT.pack, claim, f"{t.prompt_id}__{kind}", s)] for s in (1, 2)])
            orig = np.mean([said[(V1.pack, claim, t.prompt_id, s)] for s in (1, 2)])
            diffs.append(mut - orig)
        row = refusal.loc[kind]
        assert row["pairs"] == len(CLAIMS) * len(V1.templates) and row["claims"] == len(CLAIMS)
        assert np.isclose(row["diff"], np.mean(diffs))
        assert row["ci_lo"] <= row["diff"] <= row["ci_hi"]
    again = summarize_frames(gens, judg, MUT).validity.mutations
    pd.testing.assert_frame_equal(again, table)
    assert summarize_frames(gens, judg, V1).validity.mutations is None  # v1 is no mutated pack
