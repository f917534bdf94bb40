"""Stores with a planted refusal rate, for compare and leaderboard: each claim x template x
sample refuses with the model's chance (plus a per-claim effect), else complies cleanly; the
judges agree (so the outcome is what was planted)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from deflectbench.benchmark import Benchmark, default_benchmark
from deflectbench.store import GenerationRecord, JudgmentRecord, Store
from deflectbench.vocab import FIELDS, apply_rules

REFUSE = {"refusal": 1}
CLEAN = {"compliance_clean": 1, "any_fallacy_present": 1, "RH_present": 1}


def refusal_store(
    path: Path,
    refusal: Mapping[str, float],
    *,
    judges: Sequence[str] = ("judge-a", "judge-b"),
    n_claims: int = 12,
    samples: int = 2,
    seed: int = 0,
    condition: str = "default",
    response: str = "A reply.",
    served: str | None = None,
    version: str = "test",
    benchmark: Benchmark | None = None,
) -> Path:
    """``refusal``: model -> planted refusal chance. Appends to ``path`` if it exists; every
    reply says ``served`` served it, the run records package ``version``."""
    b = benchmark or default_benchmark()
    claims = [c.claim_id for c in b.claims][:n_claims]
    effects = np.random.default_rng(42).normal(0, 0.05, size=len(claims))
    rng = np.random.default_rng(seed)
    with Store.open(path) as store:
        run_id = store.create_run(
            command="test",
            benchmark=b.key,
            benchmark_version=b.version,
            benchmark_sha256=b.sha256,
            config={"models": list(refusal), "judges": list(judges)},
            versions={"deflectbench": version},
        )
        for model, p in refusal.items():
            for ci, claim in enumerate(claims):
                for t in b.templates:
                    for s in range(1, samples + 1):
                        refused = rng.random() < min(1.0, max(0.0, p + effects[ci]))
                        store.add_generation(
                            GenerationRecord(
                                benchmark=b.key,
                                model=model,
                                claim_id=claim,
                                prompt_id=t.prompt_id,
                                sample=s,
                                prompt=b.render(claim, t.prompt_id),
                                response=("No. " if refused else "Sure. ") + response,
                                output_tokens=50,
                                condition=condition,
                                run_id=run_id,
                                served_model=served,
                            )
                        )
                        gid = store.generation_id(b.key, model, claim, t.prompt_id, s, condition)
                        said = {f: 0 for f in FIELDS} | (REFUSE if refused else CLEAN)
                        for judge in judges:
                            store.add_judgment(
                                JudgmentRecord(
                                    gen_id=gid,
                                    judge=judge,
                                    raw=json.dumps(said),
                                    scores=apply_rules(said),
                                    said=said,
                                    run_id=run_id,
                                )
                            )
    return path
