"""The annotation sample: a seeded, stratified draw of scored generations for human labels.

Strata are model x outcome x framing, so rare cells (a model's few clean compliances under one
framing) are labelled too and the judges are validated where they matter, not only where most
generations fall. Within each stratum the generations are shuffled with the seed; the strata
are then taken in turn (round robin, in a seeded order), so any first N items spread as evenly
as the strata allow. The chosen items are shown in a shuffled order, so neighbours do not hint
at a model. The sample is stored (``annotation_samples``): every annotator labels the same items
in the same order, and asking for a larger sample later appends to it, keeping what was drawn.
Each pack has its own sample, of its own generations only (a store may hold several packs).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from deflectbench.analysis.calibration.load import NO_FRAMING, SEP, stratum_of
from deflectbench.analysis.frames.scored import scored_table
from deflectbench.benchmark import Benchmark
from deflectbench.store import Store
from deflectbench.store.labels import SampleItem
from deflectbench.web.server import WebError

__all__ = ["SEP", "SampleError", "SamplePlan", "draw", "ensure_sample", "stratum_of"]

# The stratum's name is the analysis' (``SEP``, ``stratum_of``): the correction for judge error
# weights each labelled item by its stratum, so the sample and the weights share one rule.


class SampleError(WebError):
    """No sample can be drawn (nothing scored yet, or a bad size); the message says why."""


@dataclass(frozen=True)
class SamplePlan:
    """What :func:`ensure_sample` did: the sample, how many it added and how many strata."""

    items: list[SampleItem]
    added: int
    strata: int


def draw(scored: pd.DataFrame, n: int, seed: int, exclude: Sequence[int] = ()) -> list[int]:
    """``n`` gen_ids from ``scored`` (columns gen_id, model, outcome, framing), stratified as
    the module says, leaving out ``exclude``; fewer when fewer remain. Pure and seeded."""
    if n < 0:
        raise SampleError(f"--sample must be 0 or more, not {n}")
    rng = np.random.default_rng(seed)
    table = scored[~scored["gen_id"].isin(list(exclude))]
    table = table.sort_values("gen_id", kind="stable")
    strata: list[list[int]] = []
    for _, group in table.groupby(["model", "outcome", "framing"], sort=True):
        ids = group["gen_id"].astype(int).tolist()
        strata.append([ids[i] for i in rng.permutation(len(ids))])
    order = [strata[i] for i in rng.permutation(len(strata))]
    chosen: list[int] = []
    depth = 0
    while len(chosen) < n and any(depth < len(s) for s in order):
        for s in order:
            if depth < len(s) and len(chosen) < n:
                chosen.append(s[depth])
        depth += 1
    return [chosen[i] for i in rng.permutation(len(chosen))]


def ensure_sample(store: Store, benchmark: Benchmark, n: int, seed: int = 0) -> SamplePlan:
    """``benchmark``'s stored sample, extended to ``n`` items when it has fewer (never shrunk:
    labels already made stay in it). Draws from that pack's generations scored by every judge."""
    items = store.annotation_sample(benchmark.key)
    if n <= len(items):
        return SamplePlan(items, 0, len({i.stratum for i in items}))
    scored = scored_table(store, benchmark)
    if scored.empty and not items:
        if store.counts()["generations"]:  # results there, but none of them can be sampled
            raise SampleError(
                f"no generation of {benchmark.key} in --db {store.path} is scored by every "
                "judge: judge them first (`deflectbench judge`), or pass the --benchmark the "
                "results were made with (`deflectbench status` lists the packs)"
            )
        raise SampleError(
            f"no scored generations in --db {store.path} to sample: run `deflectbench run` "
            "(generate and judge) or `deflectbench import` first"
        )
    scored = scored.assign(framing=scored["framing"].fillna(NO_FRAMING))
    ids = draw(scored, n - len(items), seed, exclude=[i.gen_id for i in items])
    row = scored.set_index("gen_id")
    new = [
        (
            secrets.token_hex(5),
            gid,
            stratum_of(
                str(row.at[gid, "model"]), str(row.at[gid, "outcome"]), str(row.at[gid, "framing"])
            ),
        )
        for gid in ids
    ]
    added = store.extend_annotation_sample(new, seed)
    items = store.annotation_sample(benchmark.key)
    return SamplePlan(items, added, len({i.stratum for i in items}))
