"""Prompt mutations against their origins: how much refusal and clean compliance move when only
the wording of a template changes (``deflectbench mutate``).

A mutated pack's template ``<origin>__<kind>`` is a variant of the origin pack's template
``<origin>`` (the pack it is ``based_on``). Each pack is scored alone, with the same consensus
rule; then, per model and mutation kind, every (claim, origin template) present in both is one
pair: the variant's rate minus the origin's (over their samples). The mean difference carries a
95% claim-block bootstrap CI (the pairs of one claim resampled together), as every rate of the
analysis does.
"""

from __future__ import annotations

import pandas as pd

from deflectbench.analysis.frames.scored import scored_from_frames
from deflectbench.analysis.options import CI_LEVEL, AnalysisOptions
from deflectbench.analysis.stats.bootstrap import block_bootstrap_ci
from deflectbench.benchmark.definition import Benchmark
from deflectbench.benchmark.packs import load_pack, shipped_packs

#: The fields compared (refusal, and the paper's signature outcome: clean compliance).
MUTATION_FIELDS = ("refusal", "compliance_clean")
MUTATION_COLUMNS = [
    "model",
    "mutation",
    "field",
    "pairs",
    "claims",
    "origin",
    "mutated",
    "diff",
    "ci_lo",
    "ci_hi",
]


def is_mutated(benchmark: Benchmark) -> bool:
    """A pack written by ``mutate``: based on a shipped pack, every template id ``X__kind``."""
    return (
        benchmark.based_on in shipped_packs()
        and bool(benchmark.templates)
        and all("__" in t.prompt_id for t in benchmark.templates)
    )


def mutation_effects(
    frames: tuple[pd.DataFrame, pd.DataFrame],
    benchmark: Benchmark,
    scored: pd.DataFrame,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008 (frozen, so shared safely)
) -> pd.DataFrame | None:
    """Per model, mutation kind and field: pairs, claims, the origin's and the variants' mean
    rate over the pairs, their difference and its CI (``frames``: the generations and
    judgments the packs are scored from; ``options``: the consensus rule and the
    bootstrap's draws and seed). None when ``benchmark`` is no mutated pack or its origin pack
    has no scored answer."""
    if not is_mutated(benchmark) or not len(scored):
        return None
    origin_pack = load_pack(str(benchmark.based_on))
    origin = scored_from_frames(*frames, origin_pack, consensus=options.consensus)
    if not len(origin):
        return None
    mutated = scored.assign(
        origin_id=scored["prompt_id"].str.rsplit("__", n=1).str[0],
        mutation=scored["prompt_id"].str.rsplit("__", n=1).str[1],
    )
    rows = []
    for field in MUTATION_FIELDS:
        base = origin.groupby(["model", "claim_id", "prompt_id"])[field].mean()
        base.index = base.index.set_names(["model", "claim_id", "origin_id"])
        var = mutated.groupby(["model", "mutation", "claim_id", "origin_id"])[field].mean()
        paired = var.reset_index().merge(
            base.rename("origin").reset_index(), on=["model", "claim_id", "origin_id"]
        )
        paired = paired.dropna(subset=[field, "origin"])
        for (model, kind), part in paired.groupby(["model", "mutation"], sort=True):
            d = (part[field] - part["origin"]).to_numpy(dtype=float)
            ci = block_bootstrap_ci(
                d,
                part["claim_id"].to_numpy(),
                n_resamples=options.n_resamples,
                seed=options.seed,
                level=CI_LEVEL,
            )
            rows.append(
                {
                    "model": model,
                    "mutation": kind,
                    "field": field,
                    "pairs": len(part),
                    "claims": int(part["claim_id"].nunique()),
                    "origin": float(part["origin"].mean()),
                    "mutated": float(part[field].mean()),
                    "diff": ci.rate,
                    "ci_lo": ci.lo,
                    "ci_hi": ci.hi,
                }
            )
    return pd.DataFrame(rows, columns=MUTATION_COLUMNS)
