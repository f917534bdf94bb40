"""Planted benign twins with a known over-refusal and judges that err on them: for testing that
the validity checks' over-refusal carries an honest CI and, with labels, a corrected rate.

One model answers the benign twins (deflectbench-v1-benign, 80 claims x 8 templates x its 1
sample: 640) and the manipulative requests (deflectbench-v1: 80 claims x 15 templates x 1
sample: 1,200). Each benign twin is truly refused with chance ``p_benign`` (0.8% by
default), each manipulative request with ``p_manipulative``; two judges each call a truly
fulfilled answer a refusal with their own false-positive rate (3% and 6%), never miss a true
refusal, and agree on every other field (all 0). Under the paper's consensus (``mean >= 0.5``,
with two judges an OR) a truly fulfilled twin is judged refused with chance
1 - (1 - 0.03)(1 - 0.06) = 8.82%, so the judged over-refusal is about
0.008 + 0.992 * 0.0882 = 9.55%. People "label" a simple random sample of the twins with the
truth.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.frames.scored import GEN_COLUMNS, JUDGMENT_COLUMNS
from deflectbench.benchmark import load_pack
from deflectbench.records import GenerationRecord, HumanLabel, JudgmentRecord
from deflectbench.vocab import FIELDS

BENIGN, V1 = load_pack("deflectbench-v1-benign"), load_pack("deflectbench-v1")
MODEL = "planted/m"
JUDGES = {"j1": 0.03, "j2": 0.06}


def judged_over_refusal(p: float = 0.008, fps: tuple[float, ...] = (0.03, 0.06)) -> float:
    """The over-refusal the OR consensus reports in expectation."""
    keep = float(np.prod([1.0 - f for f in fps]))
    return p + (1.0 - p) * (1.0 - keep)


@dataclass
class Planted:
    gens: pd.DataFrame
    judgments: pd.DataFrame
    labels: list[HumanLabel]
    truth: dict[int, int] = field(default_factory=dict)  # gen_id -> truly refused

    def labels_of(self) -> Any:
        """A reader of the labels as the calibration reads a store's (labels, no sample)."""
        held = self.labels

        class Held:
            def labels(self) -> list[HumanLabel]:
                return held

            def annotation_sample(self, key: str) -> list[Any]:
                return []

            def annotators(self) -> list[str]:
                return ["alice"] if held else []

        return Held()


def planted(
    seed: int = 0,
    *,
    claims: int = 80,
    runs: int = 1,
    p_benign: float = 0.008,
    p_manipulative: float = 0.4,
    n_labels: int = 200,
) -> Planted:
    """The frames (generations, judgments) and ``n_labels`` true labels of the twins;
    ``runs`` samples per cell, at most the pack's own (the benign pack has one)."""
    rng = np.random.default_rng(seed)
    gens, judg, truth = [], [], {}
    gid = itertools.count(1)
    chosen = [c.claim_id for c in BENIGN.claims[:claims]]
    for pack, p in ((BENIGN, p_benign), (V1, p_manipulative)):
        samples = range(1, min(runs, pack.runs_per_cell) + 1)
        for claim, t, sample in itertools.product(chosen, pack.templates, samples):
            g = next(gid)
            refused = int(rng.random() < p)
            truth[g] = refused
            gens.append({"gen_id": g, "benchmark": pack.key, "model": MODEL, "claim_id": claim,
                         "prompt_id": t.prompt_id, "sample": sample, "error": None,
                         "input_tokens": 1, "output_tokens": 1, "condition": "default",
                         "finish_reason": "stop"})  # fmt: skip
            for judge, fp in JUDGES.items():
                said = int(refused or rng.random() < fp)
                judg.append({"gen_id": g, "judge": judge, "parse_error": 0, "error": None,
                             "consistency_flag": 0, **dict.fromkeys(FIELDS, 0),
                             "refusal": said})  # fmt: skip
    frame = pd.DataFrame(gens, columns=[*GEN_COLUMNS, "condition", "finish_reason"])
    twins = frame.loc[frame["benchmark"] == BENIGN.key, "gen_id"].to_numpy()
    picked = rng.choice(twins, size=min(n_labels, len(twins)), replace=False)
    labels = [
        HumanLabel(int(g), "alice", {**dict.fromkeys(FIELDS, 0), "refusal": truth[int(g)]})
        for g in sorted(picked.tolist())
    ]
    return Planted(frame, pd.DataFrame(judg, columns=JUDGMENT_COLUMNS), labels, truth)


def write_store(p: Planted, db: Path) -> Path:
    """The planted frames and labels in a store at ``db`` (answers and verdicts as records)."""
    from deflectbench.store import Store

    with Store.open(db) as store:
        store.add_generations(
            GenerationRecord(
                benchmark=r["benchmark"],
                model=r["model"],
                claim_id=r["claim_id"],
                prompt_id=r["prompt_id"],
                sample=int(r["sample"]),
                prompt="p",
                response=f"answer {r['gen_id']}",
                input_tokens=1,
                output_tokens=1,
                finish_reason="stop",
            )
            for r in p.gens.to_dict(orient="records")
        )
        ids = {
            (r["benchmark"], r["claim_id"], r["prompt_id"], int(r["sample"])): int(r["gen_id"])
            for r in store.generation_rows(
                columns=["gen_id", "benchmark", "claim_id", "prompt_id", "sample"]
            )
        }
        ours = {
            int(r["gen_id"]): ids[(r["benchmark"], r["claim_id"], r["prompt_id"], int(r["sample"]))]
            for r in p.gens.to_dict(orient="records")
        }
        store.add_judgments(
            JudgmentRecord(
                gen_id=ours[int(r["gen_id"])],
                judge=r["judge"],
                raw="{}",
                scores={f: int(r[f]) for f in FIELDS},
                said={f: int(r[f]) for f in FIELDS},
            )
            for r in p.judgments.to_dict(orient="records")
        )
        store.save_labels(
            HumanLabel(ours[lab.gen_id], lab.annotator, dict(lab.values)) for lab in p.labels
        )
    return db
