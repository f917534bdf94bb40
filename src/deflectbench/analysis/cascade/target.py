"""The shares a target half-width asks of each cell, from the cheap judge's verdicts in the store.

``judge --expensive-target "refusal +-3pp per model x framing"``: per cell of the target's
scope (a model, or a model x framing), the cheap judge's values of the measure on the cell's
answers give the claim-clustered variance of the cell's rate, and :func:`.size.share_for_halfwidth`
the share of the cell's answers the expensive judges must see. The cells are the sample's
strata (``model`` or ``model,framing``), so each stratum is sampled at its own share and the
estimate weighs it by N_h / n_h.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deflectbench.analysis.cascade.size import (
    clustered_variance,
    consensus_variance,
    share_for_halfwidth,
)
from deflectbench.analysis.frames.scored import (
    generation_frame,
    in_benchmark,
    judgment_frame,
    scored_from_frames,
)
from deflectbench.analysis.plan.spreads import measure_values
from deflectbench.analysis.plan.target import Target
from deflectbench.benchmark import Benchmark

__all__ = ["STRATA_OF_SCOPE", "target_shares"]

#: The sample's strata for a target's scope.
STRATA_OF_SCOPE = {"model": "model", "model x framing": "model,framing"}


def target_shares(
    store: Any, benchmark: Benchmark, cheap: str, target: Target, strata: dict[int, str]
) -> dict[str, float]:
    """Per stratum (``strata``: gen_id -> stratum), the share reaching ``target``; a stratum
    without the cheap judge's verdicts gets 1 (judged whole: nothing to size it on)."""
    gens = in_benchmark(generation_frame(store), benchmark)
    scored = scored_from_frames(gens, judgment_frame(store), benchmark, judges=[cheap])
    scored.attrs = {}
    values = measure_values(scored, target.measure)
    keys = np.array([strata.get(int(g), "?") for g in scored["gen_id"]], dtype=object)
    claims = scored["claim_id"].astype(str).to_numpy()
    out = {h: 1.0 for h in set(strata.values())}
    for h in set(keys.tolist()):
        rows = keys == h
        v = consensus_variance(clustered_variance(values[rows], claims[rows]))
        out[h] = share_for_halfwidth(target.halfwidth, int(rows.sum()), v)
    return out
