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
